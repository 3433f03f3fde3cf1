"""Numbers as a student reads them: 3 decimals, powers of ten written 1.3 × 10⁴⁰, never 1.3e+40.

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
    """``x`` with ``digits`` significant digits, in the power-of-ten form outside [1e-3, 1e4).

    161 -> "161", 0.0512 -> "0.0512", 1.28e40 -> "1.3 × 10⁴⁰", 1e-16 -> "10⁻¹⁶", 0 -> "0".
    """
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else "—"
    if SMALL <= abs(x) < LARGE:
        text = f"{x:.0f}" if abs(x) >= 10 ** (digits - 1) else f"{x:.{digits}g}"
        return text.replace("-", "−")
    digits_text, exponent_text = f"{x:.15e}".split("e")  # x / 10**exponent would underflow near 1e-308
    mantissa, exponent = float(digits_text), int(exponent_text)
    if abs(round(mantissa, 1)) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    if abs(round(mantissa, 1)) == 1.0:
        return ("−" if x < 0 else "") + power_of_ten(exponent)
    return f"{mantissa:.1f} × {power_of_ten(exponent)}".replace("-", "−")


def fixed(x: float) -> str:
    """A coordinate as the course prints it, 3 decimals (1.026); a huge one as 1.3 × 10⁴⁰."""
    if math.isfinite(x) and abs(x) >= LARGE:
        return readable(x)
    return "—" if not math.isfinite(x) else f"{x:.3f}".replace("-0.000", "0.000")


def vector_text(v) -> str:
    """A 2-D vector as the course prints it: ``[1.026, 1.978]``."""
    return f"[{fixed(float(v[0]))}, {fixed(float(v[1]))}]"
