"""Scripted sessions flooding the server with reruns while one student toggles (issue #15).

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python benchmarks/rerun_flood.py --floods 10 --seconds 30
    .venv/bin/python benchmarks/rerun_flood.py --app-root /tmp/blockstab-ff59289   # a snapshot

A fresh server; the Explorer's residual toggle timed alone (quiet); then ``--floods`` sessions send
rerun requests without waiting for them (one every ~2 ms each) for ``--seconds`` while the other
session keeps toggling, and once more right after. Every wait is bounded; localhost only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from protocol_client import ProtocolSession, served_session  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402

TIMEOUT_S = 600.0


async def flood(session: ProtocolSession, stop: asyncio.Event, sent: list[int]) -> None:
    """Rerun requests with the session's current widgets, as fast as the socket takes them."""
    while not stop.is_set():
        msg = BackMsg()
        msg.rerun_script.query_string = session.query
        msg.rerun_script.page_script_hash = session.page_hash
        msg.rerun_script.widget_states.widgets.extend(session.widgets.values())
        try:
            await session.ws.send(msg.SerializeToString())
        except Exception:  # noqa: BLE001 - a closed socket ends this flood
            return
        sent[0] += 1
        await asyncio.sleep(0.002)


async def measure(root: Path, floods: int, seconds: float) -> dict:
    async with served_session(root) as (port, student):
        quiet = await student.toggle_times(20, TIMEOUT_S, 0.3)
        scripts = [ProtocolSession(port, "lang=en") for _ in range(floods)]
        for script in scripts:
            await script.connect(timeout=60)
        stop, sent = asyncio.Event(), [0]
        tasks = [asyncio.create_task(flood(s, stop, sent)) for s in scripts]
        start, loaded = time.perf_counter(), []
        while time.perf_counter() - start < seconds and len(loaded) < 10_000:
            loaded.append(await student.rerun({"residual": len(loaded) % 2 == 0}, timeout=TIMEOUT_S))
            await asyncio.sleep(0.3)
        stop.set()
        await asyncio.gather(*tasks)
        after = await student.rerun({"residual": True}, timeout=TIMEOUT_S)
        for session in scripts:
            await session.close()
    return {"app": f"{root} at {h.git_state(root)}", "floods": floods, "reruns_sent": sent[0],
            "toggle_quiet_ms": h.summary(quiet), "toggle_during_flood_ms": h.summary(loaded),
            "toggle_after_flood_ms": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floods", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--app-root", type=Path, default=h.ROOT, help="the checkout or snapshot to measure")
    args = parser.parse_args()
    floods, seconds = max(1, min(args.floods, 50)), max(1.0, min(args.seconds, 300.0))
    print(json.dumps(asyncio.run(measure(args.app_root, floods, seconds)), indent=1))


if __name__ == "__main__":
    main()
