"""A Depth lab run as a page asks for it: shared by every session, in a worker process, with a
progress bar and a translated message when it is stopped."""

from __future__ import annotations

import os
import time

import streamlit as st

from blockstab.lab import MAX_SECONDS
from ui.text import Text

from .lab_worker import OverTime, WorkerCrashed, in_worker
from .shared_runs import Replaced, SharedRuns, Waiting
from .streamlit_internals import session_id

# The wall-clock time a page's lab runs may take together: the engine's budget, or BLOCKSTAB_LAB_SECONDS
# on a machine known to be slower (the browser tests set it: a loaded CI machine must not decide what they see).
LAB_SECONDS = float(os.environ.get("BLOCKSTAB_LAB_SECONDS") or MAX_SECONDS)


@st.cache_resource
def _lab_runs() -> SharedRuns:
    """One run per core, each in its own low-priority worker process (``server.lab_worker``)."""
    return SharedRuns(size=64, workers=max(1, min(4, os.cpu_count() or 1)))


def _client() -> str:
    """Who asks for a run: the student's computer (all its tabs), or this session on localhost."""
    return st.context.ip_address or session_id()


def computed_with_progress(key, job, t: Text):
    """``job(progress)`` (picklable, see :func:`server.lab_worker.in_worker`) run once for every session
    (see ``server.shared_runs``) in a worker process, with a progress bar while it runs or while this
    session waits for it. Changing a control meanwhile stops the run or the wait: Streamlit ends
    the script at the bar's next update, which ends the worker."""
    runs = _lab_runs()
    found = runs.get(key)
    if found is not None:
        return found
    bar = st.progress(0.0, text=t("lab.running"))

    def run_in_worker(report):
        last = [0.0, time.monotonic()]

        def progress(fraction: float) -> None:  # at most ~20 bar updates a second over the websocket
            report(fraction)
            if fraction - last[0] >= 0.01 and time.monotonic() - last[1] >= 0.05:
                last[:] = fraction, time.monotonic()
                bar.progress(min(fraction, 1.0), text=t("lab.running"))

        return in_worker(job, LAB_SECONDS, progress)

    def show(waiting: Waiting) -> None:
        text = t("lab.queued", ahead=waiting.ahead) if waiting.ahead else t("lab.running")
        bar.progress(min(waiting.fraction, 1.0), text=text)

    try:
        found = runs.run(key, run_in_worker, show, owner=_client())
    except (OverTime, Replaced, WorkerCrashed) as stopped:
        bar.empty()
        if isinstance(stopped, WorkerCrashed):
            st.error(t("lab.worker_crashed"), icon=":material/error:")
        else:
            message = t("lab.over_time_none", seconds=f"{LAB_SECONDS:.0f}") if isinstance(stopped, OverTime) \
                else t("lab.replaced")
            st.warning(message, icon=":material/timer_off:")
        st.stop()
    bar.empty()
    return found

