"""Scripted sessions flooding the server with reruns while one student toggles (issue #15).

Run by hand from the repo root (never as a timed test)::

    git archive main | (mkdir -p /tmp/blockstab-main && tar -x -C /tmp/blockstab-main)
    .venv/bin/python -m benchmarks.rerun_flood --floods 10 --seconds 30 --baseline /tmp/blockstab-main

For each app (this checkout, then the baseline snapshot if given): a fresh server; the Explorer's
residual toggle timed alone (quiet); then ``--floods`` sessions, in a process of their own, send
rerun requests without waiting (one every ~2 ms each, as long as the socket takes them) for
``--seconds`` while the other session keeps toggling, and once more right after. Every wait is
bounded; localhost only.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from pathlib import Path

from benchmarks import harness as h
from testbed.protocol_client import ProtocolSession, served_session

TIMEOUT_S = 600.0


async def flood(session: ProtocolSession, stop: asyncio.Event, sent: list[int]) -> None:
    """Rerun requests with the session's current widgets, as fast as the socket takes them."""
    while not stop.is_set():
        try:
            await session.send_rerun()
        except Exception:  # noqa: BLE001 - a closed socket ends this flood
            return
        sent[0] += 1
        await asyncio.sleep(0.002)


async def floods_for(port: int, floods: int, seconds: float, started) -> int:
    """``floods`` sessions flooding for ``seconds`` once all are connected (``started`` set then):
    the requests sent."""
    scripts = [ProtocolSession(port, "lang=en") for _ in range(floods)]
    for script in scripts:
        await script.connect(timeout=60)
    stop, sent = asyncio.Event(), [0]
    tasks = [asyncio.create_task(flood(s, stop, sent)) for s in scripts]
    started.set()
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks)
    await asyncio.gather(*(s.close() for s in scripts))
    return sent[0]


def flooding_process(port: int, floods: int, seconds: float, started, sent) -> None:
    """The flood in a process of its own, as a student's script runs on a laptop of its own: its
    work is not counted in the student's timings (it still shares this machine's cores)."""
    sent.value = asyncio.run(floods_for(port, floods, seconds, started))


async def measure(root: Path, floods: int, seconds: float) -> dict:
    loop, context = asyncio.get_running_loop(), multiprocessing.get_context("spawn")
    async with served_session(root) as (port, student):
        quiet = await student.toggle_times(20, TIMEOUT_S, 0.3)
        started, sent = context.Event(), context.Value("q", 0)
        flooder = context.Process(target=flooding_process, args=(port, floods, seconds, started, sent), daemon=True)
        flooder.start()
        await loop.run_in_executor(None, started.wait, 120)
        start, loaded = time.perf_counter(), []
        while flooder.is_alive() and time.perf_counter() - start < seconds + 60 and len(loaded) < 10_000:
            loaded.append(await student.rerun({"residual": len(loaded) % 2 == 0}, timeout=TIMEOUT_S))
            await asyncio.sleep(0.3)
        await loop.run_in_executor(None, flooder.join, 60)
        if flooder.is_alive():
            flooder.kill()
        after = await student.rerun({"residual": True}, timeout=TIMEOUT_S)
    return {"app": f"{root} at {h.git_state(root)}", "floods": floods, "reruns_sent": sent.value,
            "toggle_quiet_ms": h.summary(quiet), "toggle_during_flood_ms": h.summary(loaded),
            "toggle_after_flood_ms": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floods", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--baseline", type=Path, help="a snapshot of the baseline commit (git archive)")
    args = parser.parse_args()
    floods, seconds = max(1, min(args.floods, 50)), max(1.0, min(args.seconds, 300.0))
    h.ours_then_baseline(lambda root: measure(root, floods, seconds), args.baseline)


if __name__ == "__main__":
    main()
