"""Depth-lab runs in worker processes (server.lab_worker): low priority, one BLAS thread, stopped by
the session that waits for them, and a clear error when one crashes."""

import multiprocessing
import os
import subprocess
import sys
import threading
import time
import types
from functools import partial
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from blockstab.lab import LabSetup, depth_curves
from server import lab_worker
from server.lab_worker import OverTime, WorkerCrashed, in_worker, stack_curves
from server.shared_runs import Replaced, SharedRuns
from support import lab_jobs

ROOT = Path(__file__).resolve().parents[2]


class Stop(Exception):
    """What Streamlit raises in a session whose user changed a control."""


def no_worker_left() -> bool:
    return multiprocessing.active_children() == []


def test_a_run_computes_in_another_process_at_low_priority_on_one_blas_thread():
    seen = []
    with threadpool_limits(limits=2, user_api="blas"):  # the server's own count does not reach the worker
        found = in_worker(lab_jobs.where, 20.0, seen.append)  # (and is this test's only: the rest of the
        # worker's tests keep one thread, two spun the papers' runs to four times their CPU)
    assert found["pid"] != os.getpid() and found["nice"] == 19 and found["blas"] == [1]
    assert no_worker_left()


def test_a_runs_answer_and_progress_come_back():
    setups = (("a", LabSetup(d_model=16, tokens=8, heads=2, depth=5)),
              ("b", LabSetup(d_model=16, tokens=8, heads=2, depth=5, seed=1)))
    curves = in_worker(partial(stack_curves, setups, True), 20.0, lambda fraction: None)
    assert list(curves) == ["a", "b"]
    for name, setup in setups:
        assert curves[name].relative_residual.tolist() == depth_curves(setup).relative_residual.tolist()
    seen = []  # (a run this small may end before its first report is due: a steady job's reports)
    assert in_worker(lab_jobs.steady, 20.0, seen.append) == "done"
    assert max(seen) > 0 and seen == sorted(seen) and seen[-1] <= 1


def test_what_the_session_raises_ends_the_worker():
    """A changed control or a replaced request: the worker is ended, so no core is wasted."""
    calls = []

    def progress(fraction):
        calls.append(fraction)
        if len(calls) == 3:
            raise Stop

    start = time.monotonic()
    with pytest.raises(Stop):
        in_worker(lab_jobs.endless, 60.0, progress)
    assert time.monotonic() - start < 10 and no_worker_left()


def test_a_run_that_finishes_nothing_by_its_deadline_is_over_time():
    with pytest.raises(OverTime):
        in_worker(lab_jobs.endless, 0.2, lambda fraction: None)
    assert no_worker_left()


def test_a_worker_that_never_answers_is_ended_past_its_deadline(monkeypatch):
    monkeypatch.setattr(lab_worker, "GRACE_SECONDS", 0.2)
    start = time.monotonic()
    with pytest.raises(OverTime):
        in_worker(lab_jobs.silent, 0.2, lambda fraction: None)
    assert time.monotonic() - start < 10 and no_worker_left()


def test_a_crashed_worker_is_reported_not_waited_for():
    with pytest.raises(WorkerCrashed, match="-9"):
        in_worker(lab_jobs.killed, 60.0, lambda fraction: None)
    assert no_worker_left()


def test_an_error_in_the_run_is_raised_in_the_session():
    with pytest.raises(ValueError, match="width 7"):
        in_worker(lab_jobs.refused, 60.0, lambda fraction: None)


def test_the_server_script_run_again_in_a_worker_imports_no_streamlit():
    """multiprocessing imports the server's main module (``python -m server``) again in every worker,
    as ``__mp_main__``: Streamlit is imported under ``__main__`` only, not in every run's worker."""
    probe = ("import runpy, sys; runpy.run_module('server', run_name='__mp_main__'); "
             "print([m for m in sys.modules if m.split('.')[0] == 'streamlit'])")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("script", ["app.py", "tests/support/unguarded_app.py"])
def test_a_worker_started_during_a_sessions_run_runs_no_page(script, monkeypatch):
    """Streamlit makes the script it runs (app.py) ``__main__``, and multiprocessing runs ``__main__``'s
    file again in every worker: app.py's guard keeps Streamlit, pandas and the pages out of the worker.
    (The probe can tell: a script without the guard brings them in.)"""
    running = types.ModuleType("__main__")
    running.__file__ = str(ROOT / script)
    monkeypatch.setitem(sys.modules, "__main__", running)
    found = in_worker(lab_jobs.app_modules, 60.0, lambda fraction: None)
    assert found == ([] if script == "app.py" else ["pandas", "streamlit", "widgets.chrome"])


def test_a_replaced_request_ends_its_worker():
    """A client asks for another setup while its run computes: the run's wait ends with Replaced
    and its worker process is gone (``server.shared_runs`` with the worker as the page wires them)."""
    runs, outcome = SharedRuns(size=8, workers=2, poll_seconds=0.01), []

    def first():
        try:
            runs.run("deep", lambda report: in_worker(lab_jobs.endless, 60.0, report), lambda w: None, owner="a")
        except Replaced:
            outcome.append("replaced")

    thread = threading.Thread(target=first, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (multiprocessing.active_children() and runs.running.get("deep")):
        assert time.monotonic() < deadline, "the run never started in a worker"
        time.sleep(0.01)
    assert runs.run("small", lambda report: "small", lambda w: None, owner="a") == "small"
    thread.join(30)
    assert outcome == ["replaced"] and no_worker_left() and runs.get("deep") is None


def test_a_worker_whose_server_went_away_ends_quietly():
    """The server stopped while a worker ran (a bundle built ahead, at a test's end): its answer has no
    reader, and the worker ends without a traceback in the server's log."""
    receive, send = multiprocessing.Pipe(duplex=False)
    receive.close()
    lab_worker._worker(lab_jobs.steady, 5.0, send, 0)  # (niceness 0: this process's own stays as it was)
