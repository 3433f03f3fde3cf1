"""A class opening the teacher's Depth lab links at once: N sessions start lab runs together.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.lab_rush                                # 40 sessions, one preset
    .venv/bin/python -m benchmarks.lab_rush --presets dong,xiong,noci,deepnet --json /tmp/rush.json
    .venv/bin/python -m benchmarks.lab_rush --app-root /tmp/snapshot       # the same against a snapshot
    .venv/bin/python -m benchmarks.lab_rush --first-visits --presets dong,xiong,noci,deepnet,geometry

It starts ``app.py`` itself (free localhost port, headless). The sessions speak Streamlit's
WebSocket protocol (testbed/protocol_client.py) on loopback and all open ``/lab?lab_show=<preset>`` in the
same instant, the presets dealt round-robin: the teachers page links each preset, so a class that
follows one link asks for one run forty times. Each session is timed from its request to the
server's script_finished (the results on its page). First one session alone on a fresh server
(the single-user time, no cache); then the server is restarted, so the rush starts cold too.
Every 0.5 s the server's RSS and CPU are sampled. Errors counted: exception elements, failed or
timed-out runs. Everything is bounded by ``--timeout`` seconds per session.

``--first-visits``: each preset's link opened by one session on a server of its own, started for it (the
first visit after a start, as a teacher's on a classroom server): the time from the request to the results.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import tempfile
import time
from pathlib import Path

from benchmarks import harness as h
from testbed.protocol_client import ProtocolSession


async def open_lab(port: int, preset: str, timeout: float) -> dict:
    session = ProtocolSession(port, query=f"lab_show={preset}&lang=en", page_name="lab")
    start = time.perf_counter()
    try:
        await session.connect(timeout=timeout)
        return {"preset": preset, "ms": (time.perf_counter() - start) * 1e3, "exceptions": session.exceptions,
                "error": None}
    except Exception as error:  # noqa: BLE001 - every failure is counted, none ends the benchmark
        return {"preset": preset, "ms": None, "exceptions": session.exceptions, "error": repr(error)[:200]}
    finally:
        await session.close()


async def sampled(pid: int, stop: asyncio.Event, series: list) -> None:
    t0 = time.monotonic()
    while not stop.is_set():
        series.append((time.monotonic() - t0, h.rss_mb(pid), h.cpu_seconds(pid)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


async def rush(port: int, pid: int, presets: list[str], sessions: int, timeout: float) -> dict:
    stop, series = asyncio.Event(), []
    sampler = asyncio.create_task(sampled(pid, stop, series))
    wall = time.perf_counter()
    runs = await asyncio.gather(*(open_lab(port, presets[i % len(presets)], timeout) for i in range(sessions)))
    wall = time.perf_counter() - wall
    stop.set()
    await sampler
    return {"runs": runs, "wall_s": wall, "series": series}


def report(single: dict, room: dict) -> dict:
    times = [r["ms"] for r in room["runs"] if r["ms"] is not None]
    errors = [r for r in room["runs"] if r["error"] or r["exceptions"]]
    rss = [s[1] for s in room["series"] if s[1] is not None]
    cpu = [s[2] for s in room["series"] if s[2] is not None]
    print(h.HEADER)
    print(h.fmt_row("one session alone, cold server", [single["ms"]] if single["ms"] else []))
    print(h.fmt_row(f"{len(room['runs'])} sessions at once, each until its results", times))
    for preset in sorted({r["preset"] for r in room["runs"]}):
        print(h.fmt_row(f"  {preset}", [r["ms"] for r in room["runs"] if r["preset"] == preset and r["ms"]]))
    print(f"\nerrors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print(f"all sessions served in {room['wall_s']:.1f} s; server CPU {cpu[-1] - cpu[0]:.1f} s "
          f"({(cpu[-1] - cpu[0]) / max(room['wall_s'], 1e-9) * 100:.0f} % of one core)")
    print(f"server RSS (MB): start {rss[0]:.0f}, peak {max(rss):.0f}, end {rss[-1]:.0f}")
    return {"single_ms": single["ms"], "summary": h.summary(times), "errors": len(errors), "wall_s": room["wall_s"],
            "cpu_s": cpu[-1] - cpu[0], "rss_start": rss[0], "rss_peak": max(rss), "rss_end": rss[-1]}


async def first_visits(presets: list[str], logs: Path, timeout: float) -> dict:
    visits = {}
    for preset in presets:
        with h.streamlit_server("app.py", logs / f"first-{preset}.log") as (url, server):
            visits[preset] = await open_lab(int(url.rsplit(":", 1)[1]), preset, timeout)
        visit = visits[preset]
        problems = f"  error: {visit['error']}" * bool(visit["error"]) + \
            f"  exceptions: {visit['exceptions']}" * bool(visit["exceptions"])
        print(f"{preset:10s} {visit['ms'] or float('nan'):9.0f} ms{problems}")
    return visits


async def main_async(args) -> None:
    logs = Path(tempfile.mkdtemp(prefix="blockstab-rush-"))
    presets = args.presets.split(",")
    if args.first_visits:
        print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}: each preset's first visit on a fresh server")
        with h.ForeignLoad() as foreign:
            visits = await first_visits(presets, logs, args.timeout)
        print(foreign.summary())
        h.write_record(args.json, args, {"first_visits": visits, "foreign_cpu": foreign.samples})
        return
    print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}: {args.sessions} sessions, presets {presets}")
    with h.ForeignLoad() as foreign:
        with h.streamlit_server("app.py", logs / "single.log") as (url, server):
            single = await open_lab(int(url.rsplit(":", 1)[1]), presets[0], args.timeout)
        with h.streamlit_server("app.py", logs / "rush.log") as (url, server):
            room = await rush(int(url.rsplit(":", 1)[1]), server.pid, presets, args.sessions, args.timeout)
        result = report(single, room)
    print(foreign.summary())
    print(f"server logs: {logs}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        record = {"args": {k: str(v) for k, v in vars(args).items()}, "summary": result, "single": single,
                  "room": room, "foreign_cpu": foreign.samples}
        args.json.write_text(json.dumps(record, indent=1))
        print(f"samples: {args.json}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--presets", default="xiong", help="comma-separated lab_show values, dealt round-robin")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a session may take (bounded)")
    parser.add_argument("--first-visits", action="store_true", help="each preset opened alone on a fresh server")
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--app-root", type=Path, help="measure the app in this checkout / snapshot (default: this one)")
    args = parser.parse_args()
    h.use_app_root(args.app_root)
    args.sessions = max(1, min(args.sessions, 200))
    args.timeout = max(10.0, min(args.timeout, 1800.0))
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
