"""Independent re-computations the tests compare the app against (plain loops, no NumPy tricks)."""

import re

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
