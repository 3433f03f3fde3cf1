"""The page-weight benchmark's reading of a Lighthouse report (benchmarks/page_weight.py), on a hand-made one."""

from benchmarks.page_weight import figures, median_figures


def report(score: float, wire: tuple[int, ...]) -> dict:
    """A Lighthouse JSON report cut to what the benchmark reads: one request per ``wire`` size, each
    twice as large uncompressed."""
    requests = [{"url": f"http://127.0.0.1:8000/file{i}.js", "transferSize": size, "resourceSize": 2 * size}
                for i, size in enumerate(wire)]
    return {"finalDisplayedUrl": "http://127.0.0.1:8000/", "environment": {"benchmarkIndex": 1500.0},
            "categories": {"performance": {"score": score}},
            "audits": {"first-contentful-paint": {"numericValue": 1000.0},
                       "largest-contentful-paint": {"numericValue": 2500.0},
                       "total-blocking-time": {"numericValue": 300.0},
                       "network-requests": {"details": {"items": requests}}}}


def test_a_reports_figures_sum_every_request_and_name_the_three_largest_on_the_wire():
    f = figures(report(0.374, (10, 400, 30, 2000, 5)))
    assert (f["score"], f["fcp_ms"], f["lcp_ms"], f["tbt_ms"]) == (37, 1000.0, 2500.0, 300.0)
    assert (f["requests"], f["wire_bytes"], f["uncompressed_bytes"]) == (5, 2445, 4890)
    assert f["largest"] == [{"url": "/file3.js", "wire_bytes": 2000, "uncompressed_bytes": 4000},
                            {"url": "/file1.js", "wire_bytes": 400, "uncompressed_bytes": 800},
                            {"url": "/file2.js", "wire_bytes": 30, "uncompressed_bytes": 60}]


def test_runs_give_each_figures_median_and_the_largest_requests_of_the_run_of_median_bytes():
    runs = [figures(report(score, wire)) for score, wire in ((0.2, (100,)), (0.3, (300, 1)), (0.25, (200, 2, 1)))]
    median = median_figures(runs)
    assert (median["score"], median["wire_bytes"], median["requests"]) == (25, 203, 2)
    assert median["largest"] == runs[2]["largest"]
