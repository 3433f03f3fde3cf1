"""A class asking the Depth lab for many different heavy setups at once, while one student uses
the Explorer: each session's time to its first result, and the Explorer's toggle latency, for
this checkout and a baseline snapshot in the same run (issue #15).

Run by hand from the repo root (never as a timed test)::

    git archive ff59289 | (mkdir -p /tmp/blockstab-ff59289 && tar -x -C /tmp/blockstab-ff59289)
    .venv/bin/python -m benchmarks.lab_fairness --baseline /tmp/blockstab-ff59289 --sessions 12

For each app: a fresh server; the Explorer's residual toggle timed alone (quiet); then
``--sessions`` sessions open ``/lab`` with different seeds of one heavy stack (no two share a run)
while the Explorer session keeps toggling. Every wait is bounded by ``--timeout``; localhost only.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from benchmarks import harness as h
from testbed.protocol_client import ProtocolSession, served_session

HEAVY = "lab_width=128&lab_tokens=64&lab_heads=4&lab_depth=1000&lab_compare=stabilisers&lang=en"


async def first_result(port: int, seed: int, timeout: float) -> float | None:
    session = ProtocolSession(port, f"{HEAVY}&lab_seed={seed}", page_name="lab")
    start = time.perf_counter()
    try:
        await session.connect(timeout=timeout)
        return time.perf_counter() - start
    except Exception:  # noqa: BLE001 - a timeout or a failed run is reported as None
        return None
    finally:
        await session.close()


async def measure(root: Path, sessions: int, timeout: float) -> dict:
    async with served_session(root) as (port, explorer):
        quiet = await explorer.toggle_times(20, timeout, 0.5)
        stop = asyncio.Event()
        busy = asyncio.create_task(explorer.toggle_times(10_000, timeout, 0.5, stop))
        start = time.perf_counter()
        results = await asyncio.gather(*(first_result(port, seed, timeout) for seed in range(sessions)))
        wall = time.perf_counter() - start
        stop.set()
        loaded = await busy
    done = [r for r in results if r is not None]
    return {"app": f"{root} at {h.git_state(root)}", "sessions": sessions, "wall_s": round(wall, 1),
            "first_result_s": h.summary(done), "unanswered": len(results) - len(done),
            "toggle_quiet_ms": h.summary(quiet), "toggle_loaded_ms": h.summary(loaded)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a snapshot of the baseline commit (git archive)")
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a session may take (bounded)")
    args = parser.parse_args()
    args.timeout = max(10.0, min(args.timeout, 1800.0))
    h.ours_then_baseline(lambda root: measure(root, args.sessions, args.timeout), args.baseline)


if __name__ == "__main__":
    main()
