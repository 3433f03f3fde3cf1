"""Each paper preset run once per test session and shared by the modules that read it (a preset
takes seconds to a minute: ``tests/engine/test_papers.py`` checks its findings, ``tests/views/test_lab_views.py``
labels its variants)."""

from __future__ import annotations

from functools import cache

from blockstab.papers import PAPERS, SEEDS, PaperRun

# Presets that take long enough to be marked slow (the rest run in a second or two).
SLOW_PAPERS = ("xiong", "noci", "deepnet")


@cache
def paper_run(paper: str, seeds: tuple[int, ...] = SEEDS) -> tuple[PaperRun, tuple[float, ...]]:
    """The preset's result and every progress fraction it reported."""
    seen = []
    run = PAPERS[paper](seeds=seeds, progress=seen.append)
    return run, tuple(seen)
