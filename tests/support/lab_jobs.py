"""Jobs for Depth-lab worker processes in tests (module level, so a worker can unpickle them)."""

import os
import signal
import sys
import time

from threadpoolctl import threadpool_info

from server.lab_worker import SEND_SECONDS, run_job


def where(progress) -> dict:
    """Where the job ran: its process, its niceness and its BLAS thread counts."""
    progress(0.5)
    return {"pid": os.getpid(), "nice": os.nice(0),
            "blas": sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})}


def steady(progress) -> str:
    """Reports its progress in tenths, for several of the worker's reporting intervals."""
    for tenth in range(1, 11):
        time.sleep(SEND_SECONDS)
        progress(tenth / 10)
    return "done"


def endless(progress) -> None:
    while True:
        progress(0.5)
        time.sleep(0.01)


def silent(progress) -> None:
    """Never reports and never ends."""
    time.sleep(3600)


def killed(progress) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def refused(progress) -> None:
    raise ValueError("width 7 is not offered")


def in_this_thread(job, seconds, progress):
    """A stand-in for ``server.lab_runs.in_worker``: the worker's run (``run_job``) without the process,
    so a test can replace part of the engine the page runs."""
    return run_job(job, seconds, progress)


def app_modules(progress) -> list[str]:
    """The worker's modules of Streamlit, pandas and the app's pages' layer (none, if it ran no page)."""
    return sorted({m.split(".")[0] for m in sys.modules} & {"streamlit", "pandas"}
                  | {m for m in sys.modules if m.startswith("widgets.chrome")})
