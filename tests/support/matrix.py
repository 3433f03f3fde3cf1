"""Which pages the browser tests load, at which sizes, in which languages: on every run each page once,
at the size its people meet it at, each size's pages taking the languages in turn (so every size is seen
in both languages), and a check written for both languages in one of them, a file's checks taking turns;
with ``BLOCKSTAB_FULL_MATRIX`` set (``bash scripts/test.sh --full-matrix``), every page at every size in
every language, and every check in both. Likewise the input fuzzers: a quarter of their examples on every
run, all in the full one."""

from __future__ import annotations

import collections
import itertools
import os
from collections.abc import Mapping, Sequence

FULL = bool(os.environ.get("BLOCKSTAB_FULL_MATRIX"))
LOCALES = (("en", "en-US"), ("zh", "zh-CN"))  # (the app's language, the browser's locale)


def examples(full: int) -> int:
    """How many examples a fuzzer draws this run: ``full`` in the full matrix, a quarter otherwise."""
    return full if FULL else full // 4


def locales(turn: int) -> list[tuple[str, str]]:
    """A browser check's languages this run: one, the ``turn``-th in turn (a file's checks take turns, so
    both are seen), or both in the full matrix."""
    return list(LOCALES) if FULL else [LOCALES[turn % len(LOCALES)]]


def once_each(size_of: Mapping, langs: Sequence) -> list[tuple]:
    """Every page once at its own size, the pages of a size taking the languages in turn."""
    seen: collections.Counter = collections.Counter()
    chosen = []
    for page, size in size_of.items():
        chosen.append((page, size, langs[seen[size] % len(langs)]))
        seen[size] += 1
    return chosen


def rows(size_of: Mapping, sizes: Sequence, langs: Sequence) -> list[tuple]:
    """This run's rows: each page once, or with ``FULL`` every combination."""
    return list(itertools.product(size_of, sizes, langs)) if FULL else once_each(size_of, langs)
