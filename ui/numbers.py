"""Numbers as a student reads them: 3 decimals, powers of ten written 1.28 × 10⁴⁰, never 1.28e+40.

Pure functions, shared by the verdicts, tables and figure annotations in both languages.
"""

from __future__ import annotations

import math

SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
LARGE = 1e4  # from here on a number is written with a power of ten
SMALL = 1e-3  # below this (and above zero) too


def power_of_ten(exponent: int) -> str:
    """``10⁴⁰`` for 40, ``10⁻¹⁵`` for -15."""
    return "10" + str(exponent).translate(SUPERSCRIPTS)


def readable(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, with a power of ten outside [1e-3, 1e4):
    161.3 -> "161", 0.0512 -> "0.0512", 1.28e40 -> "1.28 × 10⁴⁰", 1e-16 -> "10⁻¹⁶", 0 -> "0";
    infinity is "∞" and an undefined value (nan) "—"."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else "—" if math.isnan(x) else "∞" if x > 0 else "-∞"
    if SMALL <= abs(x) < LARGE:
        return f"{x:.0f}" if abs(x) >= 10 ** (digits - 1) else f"{x:.{digits}g}"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")  # x / 10**n would underflow near 1e-308
    mantissa = mantissa.rstrip("0").rstrip(".")
    power = power_of_ten(int(exponent))
    return power if mantissa == "1" else "-" + power if mantissa == "-1" else f"{mantissa} × {power}"


def fixed(x: float) -> str:
    """A coordinate as the course prints it, 3 decimals (1.026); a huge one as 1.28 × 10⁴⁰."""
    if math.isfinite(x) and abs(x) >= LARGE:
        return readable(x)
    return readable(x) if not math.isfinite(x) else f"{x:.3f}".replace("-0.000", "0.000")


def vector_text(v) -> str:
    """A 2-D vector as the course prints it: ``[1.026, 1.978]``."""
    return f"[{fixed(float(v[0]))}, {fixed(float(v[1]))}]"


def value_range(values, write=fixed) -> str:
    """The range of ``values`` as ``write`` writes each: "1.414–2.1", one number when both ends write alike."""
    low, high = write(float(min(values))), write(float(max(values)))
    return low if low == high else f"{low}–{high}"
