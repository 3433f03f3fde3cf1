"""Compute the Depth lab's paper presets once and write their results into blockstab/data/papers/, which the lab
shows at once (blockstab.shipped). Run it after a change to the engine or to a preset; the tests fail until then.

    .venv/bin/python -m scripts.ship_papers             # every preset
    .venv/bin/python -m scripts.ship_papers dong xiong  # these
"""

from __future__ import annotations

import argparse
import time

from threadpoolctl import threadpool_limits

from blockstab import shipped
from blockstab.papers import PAPERS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("papers", nargs="*", metavar="PAPER", help=f"one of {', '.join(PAPERS)} (default: every one)")
    papers = parser.parse_args().papers or list(PAPERS)
    if unknown := set(papers) - set(PAPERS):
        parser.error(f"no such preset: {', '.join(sorted(unknown))}")
    shipped.FOLDER.mkdir(exist_ok=True)
    with threadpool_limits(limits=1, user_api="blas"):  # as the app's workers compute
        for paper in papers:
            start = time.perf_counter()
            text = shipped.to_text(PAPERS[paper]())
            shipped.path(paper).write_text(text, encoding="utf-8")
            print(f"{shipped.path(paper)}: {len(text.encode()) / 1024:.1f} KiB in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
