"""The Depth lab on a shared classroom server (issue #15): a deadline that stops a run and shows
what was computed so far, and a clear error when a run's worker process crashes. (Where a run
computes, in a low-priority process on one BLAS thread: tests/app/test_lab_page.py's probe.)"""


import pytest
from streamlit.testing.v1 import AppTest

from blockstab import lab
from server import lab_runs, lab_worker
from support import APP, lab_jobs
from ui.text import Text

SMALL = {"lab_width": "16", "lab_tokens": "8", "lab_heads": "2", "lab_depth": "5", "lab_compare": "stabilisers"}


@pytest.fixture(autouse=True)
def fresh_results(monkeypatch):
    monkeypatch.chdir(APP.parent)
    lab_runs._lab_runs.clear()
    yield
    lab_runs._lab_runs.clear()


def open_lab(**query) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"lang": "en", **query})
    at.run()
    at.switch_page("pages/depth_lab.py").run()
    assert not at.exception, [e.value for e in at.exception][:1]
    return at


def test_a_run_past_its_deadline_shows_the_runs_finished_in_time(monkeypatch):
    monkeypatch.setattr(lab_runs, "in_worker", lab_jobs.in_this_thread)
    finished = []

    def slow_after_two(setup, gradients=True, progress=None):
        if len(finished) == 2:
            raise lab_worker.OverTime  # what the progress callback raises once the deadline passed
        finished.append(setup)
        return real(setup, gradients, progress)

    real = lab.depth_curves
    monkeypatch.setattr(lab, "depth_curves", slow_after_two)
    at = open_lab(**SMALL)
    t = Text("en")
    assert [w.value for w in at.warning] == [t("lab.over_time", shown=2, total=4, seconds="20")]
    assert len(at.get("plotly_chart")) == 1  # the two finished runs are drawn


def test_a_run_with_nothing_done_by_its_deadline_says_so(monkeypatch):
    monkeypatch.setattr(lab_runs, "LAB_SECONDS", -1.0)
    at = open_lab(**SMALL)
    assert [w.value for w in at.warning] == [Text("en")("lab.over_time_none", seconds="-1")]
    assert not at.get("plotly_chart")


def test_a_crashed_worker_says_so_instead_of_waiting(monkeypatch):
    monkeypatch.setattr(lab_runs, "in_worker", lambda job, seconds, progress:
                        lab_worker.in_worker(lab_jobs.killed, seconds, progress))
    at = open_lab(**SMALL)
    assert [e.value for e in at.error] == [Text("en")("lab.worker_crashed")]
    assert not at.get("plotly_chart") and not at.warning
