"""Independent re-computations the tests compare the app against (plain loops, no NumPy tricks)."""

import dataclasses
import re

import numpy as np

from blockstab.readouts import angle_degrees


def words(text: str) -> str:
    """Chart text without its line breaks and spaces: what a wrapped title says, to compare."""
    return re.sub(r"<br>|\s", "", text)


def groups_of(tokens, tolerance: float = 1.0) -> int:
    """How many groups of tokens less than ``tolerance`` degrees apart (chained) or equal, by a
    plain union-find: the readouts' count of distinct tokens, computed another way."""
    parent = list(range(len(tokens)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(tokens)):
        for j in range(i):
            if angle_degrees(tokens[i], tokens[j]) < tolerance or all(tokens[i] == tokens[j]):
                parent[root(i)] = root(j)
    return len({root(i) for i in range(len(tokens))})


SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def value_of(text: str) -> float:
    """Read a readable() string back."""
    if "× 10" in text:
        mantissa, power = text.split(" × 10")
        return float(mantissa) * 10.0 ** int(power.translate(SUPERSCRIPT))
    if text.lstrip("-").startswith("10") and any(c in text for c in "⁰¹²³⁴⁵⁶⁷⁸⁹"):
        sign = -1 if text.startswith("-") else 1
        return sign * 10.0 ** int(text.lstrip("-")[2:].translate(SUPERSCRIPT))
    return float(text)


def arrays(params, name="params"):
    """Every array in a (nested) parameter dataclass, with a readable name, in field order."""
    if isinstance(params, np.ndarray):
        yield name, params
    elif isinstance(params, tuple):
        for i, item in enumerate(params):
            yield from arrays(item, f"{name}[{i}]")
    elif dataclasses.is_dataclass(params):
        for field in dataclasses.fields(params):
            yield from arrays(getattr(params, field.name), f"{name}.{field.name}")
