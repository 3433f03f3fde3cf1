"""What one student's script can cost the classroom server: uploads, WebSocket frames, editor rows
(issue #15), for this checkout and a baseline snapshot in the same run.

Run by hand from the repo root (never as a timed test)::

    git archive ff59289 | (mkdir -p /tmp/blockstab-ff59289 && tar -x -C /tmp/blockstab-ff59289)
    .venv/bin/python -m benchmarks.lan_limits --baseline /tmp/blockstab-ff59289

For each app it starts a server (free localhost port) and measures: the largest legitimate
WebSocket frame each way (a 1,000-block Depth lab chart of four runs; a maximal example and a full
editor table); uploads of ``--upload-mb`` bytes each (HTTP status, server RSS); oversized frames
(does the server close the socket; RSS; another session's toggle meanwhile); and one rerun of
the editor with N added rows (server time). Every wait is bounded; traffic stays on localhost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from benchmarks import harness as h
from testbed.oversize import closed_after, editor_state, largest_frames, rerun_frame, upload
from testbed.protocol_client import ProtocolSession


async def uploads(base: str, port: int, pid: int, count: int, megabytes: int) -> dict:
    holder = ProtocolSession(port, "lang=en", page_name="scenario")
    await holder.connect(timeout=60)
    before = h.rss_mb(pid)
    statuses = [await asyncio.to_thread(upload, base, holder.session_id, megabytes * 1024 * 1024)
                for _ in range(count)]
    after = h.rss_mb(pid)
    await holder.close()
    return {"statuses": statuses, "rss_before_mb": before, "rss_after_mb": after}


async def big_frames(port: int, pid: int, count: int, megabytes: int) -> dict:
    """``count`` sessions each send one rerun frame of ``megabytes`` (a query string); another
    session toggles meanwhile. Was each socket closed by the server?"""
    other = ProtocolSession(port, "lang=en")
    await other.connect(timeout=60)
    senders = [ProtocolSession(port, "lang=en") for _ in range(count)]
    for s in senders:
        await s.connect(timeout=60)
    before = h.rss_mb(pid)
    frame = rerun_frame(megabytes)
    sending = [asyncio.create_task(closed_after(s, frame)) for s in senders]
    await asyncio.sleep(0.2)
    toggles = []
    for n in range(5):
        toggles.append(round(await other.rerun({"residual": n % 2 == 0}, timeout=180)))
    closed = await asyncio.gather(*sending)
    peak = h.rss_mb(pid)
    for s in (other, *senders):
        await s.close()
    return {"closed_by_server": closed, "rss_before_mb": before, "rss_after_mb": peak, "other_toggle_ms": toggles}


async def added_rows(port: int, rows: int) -> dict:
    session = ProtocolSession(port, "lang=en", page_name="scenario")
    await session.connect(timeout=60)
    state = editor_state(session, {"added_rows": [{"label": f"w{i}", "x": "0", "y": "1", "role": "plain"}
                                                  for i in range(rows)]})
    start = time.perf_counter()
    try:
        await session.rerun(extra=(state,), timeout=300)
        outcome = "ran"
    except TimeoutError:
        outcome = "timeout (300 s)"
    except (ConnectionError, RuntimeError) as error:
        outcome = f"refused: {type(error).__name__}"
    seconds = time.perf_counter() - start
    alerts = [e.alert.body[:90] for e in session.elements if e.WhichOneof("type") == "alert"]
    await session.close()
    return {"rows": rows, "seconds": round(seconds, 2), "outcome": outcome, "frame_bytes": session.largest_sent,
            "alerts": alerts}


async def measure(root: Path, args) -> dict:
    log = Path(tempfile.mkdtemp()) / "server.log"
    found: dict = {"app": f"{root} at {h.git_state(root)}"}
    with h.local_server.streamlit_server("app.py", log, root) as (base, server):
        port = int(base.rsplit(":", 1)[1])
        found["largest_frames"] = await largest_frames(port)
        found["uploads"] = await uploads(base, port, server.pid, args.uploads, args.upload_mb)
        found["big_frames"] = await big_frames(port, server.pid, args.frames, args.frame_mb)
        found["added_rows"] = [await added_rows(port, n) for n in args.rows]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a snapshot of the baseline commit (git archive)")
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--upload-mb", type=int, default=50)
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--frame-mb", type=int, default=20, help="under Streamlit's 25 MB widget-state cap")
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--out", type=Path, help="also write the results here (JSON)")
    args = parser.parse_args()
    results = {"ours": asyncio.run(measure(h.ROOT, args))}
    print(json.dumps(results["ours"], indent=1), flush=True)
    if args.baseline:
        results["baseline"] = asyncio.run(measure(args.baseline, args))
        print(json.dumps(results["baseline"], indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
