"""The measuring code's checks of its own arithmetic: run by hand after changing it, never by the suite (which tests
the product, and imports nothing of ``benchmarks/``)::

    .venv/bin/python -m benchmarks.self_check

* ``harness.tree_cpu_seconds``, on real processes: a server's worker that ends between two readings keeps its
  time in the server's.
* ``page_weight.figures`` and ``median_figures``, on a hand-made Lighthouse report.
"""

from __future__ import annotations

import subprocess
import sys

from benchmarks import harness as h
from benchmarks.page_weight import figures, median_figures

# A parent that runs a child burning about half a second of CPU, waits for it, then waits for its stdin.
PARENT = ("import subprocess, sys\n"
          "subprocess.run([sys.executable, '-c', 'sum(range(30_000_000))'])\n"
          "print('child ended', flush=True)\n"
          "sys.stdin.read()\n")


def a_process_trees_cpu_keeps_the_time_of_a_child_that_ended() -> None:
    with subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as parent:
        try:
            assert parent.stdout.readline() == "child ended\n"
            alive_only = sum(h.cpu_seconds(p) or 0.0 for p in (parent.pid, *h.descendants(parent.pid)))
            with_reaped = h.tree_cpu_seconds(parent.pid)
            assert with_reaped >= 0.2 and with_reaped - alive_only >= 0.2, (with_reaped, alive_only)
        finally:
            parent.stdin.close()


def report(score: float, wire: tuple[int, ...]) -> dict:
    """A Lighthouse JSON report cut to what page_weight reads: one request per ``wire`` size, each
    twice as large uncompressed."""
    requests = [{"url": f"http://127.0.0.1:8000/file{i}.js", "transferSize": size, "resourceSize": 2 * size}
                for i, size in enumerate(wire)]
    return {"finalDisplayedUrl": "http://127.0.0.1:8000/", "environment": {"benchmarkIndex": 1500.0},
            "categories": {"performance": {"score": score}},
            "audits": {"first-contentful-paint": {"numericValue": 1000.0},
                       "largest-contentful-paint": {"numericValue": 2500.0},
                       "total-blocking-time": {"numericValue": 300.0},
                       "network-requests": {"details": {"items": requests}}}}


def a_reports_figures_sum_every_request_and_name_the_three_largest_on_the_wire() -> None:
    f = figures(report(0.374, (10, 400, 30, 2000, 5)))
    assert (f["score"], f["fcp_ms"], f["lcp_ms"], f["tbt_ms"]) == (37, 1000.0, 2500.0, 300.0)
    assert (f["requests"], f["wire_bytes"], f["uncompressed_bytes"]) == (5, 2445, 4890)
    assert f["largest"] == [{"url": "/file3.js", "wire_bytes": 2000, "uncompressed_bytes": 4000},
                            {"url": "/file1.js", "wire_bytes": 400, "uncompressed_bytes": 800},
                            {"url": "/file2.js", "wire_bytes": 30, "uncompressed_bytes": 60}]


def runs_give_each_figures_median_and_the_largest_requests_of_the_run_of_median_bytes() -> None:
    runs = [figures(report(score, wire)) for score, wire in ((0.2, (100,)), (0.3, (300, 1)), (0.25, (200, 2, 1)))]
    median = median_figures(runs)
    assert (median["score"], median["wire_bytes"], median["requests"]) == (25, 203, 2)
    assert median["largest"] == runs[2]["largest"]


CHECKS = (a_process_trees_cpu_keeps_the_time_of_a_child_that_ended,
          a_reports_figures_sum_every_request_and_name_the_three_largest_on_the_wire,
          runs_give_each_figures_median_and_the_largest_requests_of_the_run_of_median_bytes)


def main() -> None:
    failed = 0
    for check in CHECKS:
        try:
            check()
            print(f"ok      {check.__name__}")
        except AssertionError as error:
            failed += 1
            print(f"FAILED  {check.__name__}: {error!r}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
