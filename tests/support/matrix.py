"""Which pages the browser tests load, at which sizes, in which languages: on every run each pair of
them at least once (every page at every size, every page in both languages, every size in both
languages); with ``BLOCKSTAB_FULL_MATRIX`` set (``bash scripts/test.sh --full-matrix``), every one of
their combinations. Likewise the input fuzzers: a quarter of their examples on every run, all in the full one."""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence

FULL = bool(os.environ.get("BLOCKSTAB_FULL_MATRIX"))


def examples(full: int) -> int:
    """How many examples a fuzzer draws this run: ``full`` in the full matrix, a quarter otherwise."""
    return full if FULL else full // 4


def pairwise(pages: Sequence, sizes: Sequence, langs: Sequence) -> list[tuple]:
    """Every page at every size, in the languages taken in turn along both: a page's sizes go through
    the languages, and so do a size's pages (so with at least as many sizes as languages, and as many
    pages, every pair of the three is in it)."""
    return [(page, size, langs[(i + j) % len(langs)]) for i, page in enumerate(pages) for j, size in enumerate(sizes)]


def rows(pages: Sequence, sizes: Sequence, langs: Sequence) -> list[tuple]:
    """This run's rows: every pair, or with ``FULL`` every combination."""
    return list(itertools.product(pages, sizes, langs)) if FULL else pairwise(pages, sizes, langs)


def missing_pairs(chosen: Sequence[tuple], *factors: Sequence) -> set[tuple]:
    """The pairs of values of two factors that no row of ``chosen`` holds: ``(i, a, j, b)``, value ``a``
    of factor ``i`` with value ``b`` of factor ``j``."""
    wanted = {(i, a, j, b) for (i, x), (j, y) in itertools.combinations(enumerate(factors), 2) for a in x for b in y}
    held = {(i, row[i], j, row[j]) for row in chosen for i, j in itertools.combinations(range(len(factors)), 2)}
    return wanted - held
