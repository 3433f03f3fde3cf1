"""Depth-lab runs (and the instant Explorer's block ranges built ahead, ``server.bundles``) in
worker processes at the lowest CPU priority, so a class's runs cannot slow the Explorer for
everyone else.

The lab's computations are Python and NumPy over small matrices: two of them in server threads
held the GIL much of the time and slowed every other session's rerun. Each run here is its own
process (``forkserver``, safe from a multithreaded server; the engine and the bundle's views are
loaded once in the fork server, so a run starts in milliseconds), at nice 19 and on one BLAS
thread. Its progress comes back through a pipe; the session that waits for it stops it (the
process is ended) as soon as the progress callback raises: a changed control, a replaced request.
No Streamlit here.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time

from threadpoolctl import threadpool_limits

from blockstab import lab
from blockstab.papers import PAPERS

CONTEXT = multiprocessing.get_context("forkserver")
CONTEXT.set_forkserver_preload([__name__, "ui.bundle"])
POLL_SECONDS = 0.05  # how often the waiting session checks its run (and whether to stop it)
GRACE_SECONDS = 10.0  # past the deadline, a run that has not answered is ended (a starved one may be late)
SEND_SECONDS = 0.05  # the worker sends its progress at most this often


class OverTime(Exception):
    """A Depth lab run passed its deadline (``seconds`` of its own time)."""


class WorkerCrashed(Exception):
    """The worker process of a run ended without an answer (killed, out of memory, crashed)."""


def stack_curves(setups: tuple, gradients: bool, progress) -> dict:
    """Every compared run of ``setups`` (name, LabSetup pairs), or those finished by the deadline
    (at least one)."""
    share, curves = 1 / len(setups), {}
    for i, (name, setup) in enumerate(setups):
        try:
            curves[name] = lab.depth_curves(setup, gradients, lambda f, i=i: progress((i + f) * share))
        except OverTime:
            if not curves:
                raise
            break
    return curves


def paper_run(name: str, progress):
    """A paper preset's run (``blockstab.papers.PAPERS``)."""
    return PAPERS[name](progress=progress)


def run_job(job, seconds: float, report):
    """``job(progress)`` with a deadline: ``progress`` calls ``report(fraction)``, then raises
    :class:`OverTime` once ``seconds`` have passed."""
    deadline = time.monotonic() + seconds

    def progress(fraction: float) -> None:
        report(fraction)
        if time.monotonic() > deadline:
            raise OverTime

    return job(progress)


def _worker(job, seconds: float, conn, niceness: int) -> None:
    """The worker process: at ``niceness`` (the lowest priority, 19, unless a class waits), one BLAS thread,
    progress and the answer sent to ``conn``."""
    os.nice(niceness)
    threadpool_limits(limits=1, user_api="blas")
    sent = [time.monotonic()]

    def report(fraction: float) -> None:
        if time.monotonic() - sent[0] >= SEND_SECONDS:
            sent[0] = time.monotonic()
            conn.send(("progress", fraction))

    try:
        answer = ("done", run_job(job, seconds, report))
    except OverTime:
        answer = ("over_time", None)
    except Exception as error:  # noqa: BLE001 - raised again in the session, as a run in its thread did
        answer = ("error", error)
    with contextlib.suppress(BrokenPipeError):  # no one waits any more: the server stopped while this ran
        conn.send(answer)


def in_worker(job, seconds: float, progress, niceness: int = 19):
    """``job(progress)`` (picklable: a module-level function and its arguments) run in a worker
    process, with a deadline of ``seconds``. ``progress(fraction)`` is called here with the latest
    fraction about every :data:`POLL_SECONDS`; whatever it raises ends the worker and is raised.
    Raises :class:`OverTime` if the run finished nothing in time, :class:`WorkerCrashed` if the
    worker ended without an answer."""
    receive, send = CONTEXT.Pipe(duplex=False)
    worker = CONTEXT.Process(target=_worker, args=(job, seconds, send, niceness), daemon=True)
    worker.start()
    send.close()
    deadline, fraction = time.monotonic() + seconds + GRACE_SECONDS, 0.0
    try:
        while True:
            if receive.poll(POLL_SECONDS):
                try:
                    kind, value = receive.recv()
                except EOFError:
                    worker.join(1)
                    raise WorkerCrashed(f"exit code {worker.exitcode}") from None
                if kind == "done":
                    return value
                if kind == "over_time":
                    raise OverTime
                if kind == "error":
                    raise value
                fraction = value
            elif time.monotonic() > deadline:
                raise OverTime
            progress(fraction)
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
        receive.close()
