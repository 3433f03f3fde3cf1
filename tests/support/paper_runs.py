"""Each paper preset run once per test run and shared by the modules that read it (a preset takes seconds to a
minute: ``tests/engine/test_papers.py`` checks its findings, ``tests/views/test_lab_views.py`` labels its
variants, ``tests/app/test_lab_page.py`` compares the page with it): the first process of the run to ask
computes it while the others wait, then every process reads it from the run's shared folder
(``BLOCKSTAB_BUNDLE_CACHE``, made by tests/conftest.py for this run only)."""

from __future__ import annotations

import fcntl
import os
import pickle
from functools import cache
from pathlib import Path

from blockstab.papers import PAPERS, SEEDS, PaperRun

# Presets that take long enough to be marked slow (the rest run in a second or two).
SLOW_PAPERS = ("xiong", "noci", "deepnet")


@cache
def paper_run(paper: str, seeds: tuple[int, ...] = SEEDS) -> tuple[PaperRun, tuple[float, ...]]:
    """The preset's result and every progress fraction it reported."""
    folder = Path(os.environ["BLOCKSTAB_BUNDLE_CACHE"])
    path = folder / f"paper-{paper}-{'-'.join(map(str, seeds))}.pickle"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            seen = []
            run = PAPERS[paper](seeds=seeds, progress=seen.append)
            path.write_bytes(pickle.dumps((run, tuple(seen))))
        return pickle.loads(path.read_bytes())  # noqa: S301 - this run's own folder, written just above
