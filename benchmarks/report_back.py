"""The instant Explorer's report-back against the bare baseline's rerun, interleaved (issue #16).

Run by hand from the repo root (never as a timed test), about two minutes::

    .venv/bin/python -m benchmarks.report_back                            # 60 rounds
    .venv/bin/python -m benchmarks.report_back --also /tmp/old-checkout   # and another commit's app
    .venv/bin/python -m benchmarks.report_back --builder                  # while tens are built ahead

Each app gets a server of its own and one protocol session (testbed/protocol_client.py). Rerun by rerun,
in turn: this checkout's Explorer reports a view back (the residual switch flipped, then a depth;
its page reruns the fragment that keeps the URL), ``--also``'s does the same, and the bare
baseline (``baseline_app.py``: one slider, one toggle, one small chart) reruns its whole script
for its own toggle and slider. Each is timed from the rerun request to the server's
``script_finished``. Interleaving the apps rerun by rerun puts them under the same load on a
shared, noisy machine: the issue's 10 ms is a number of one machine's day, the ratio to the bare
baseline's rerun in the same run is what another day can compare.

``--builder`` adds, on each of our servers, a session that keeps the server building tens of
blocks ahead (``server/tens.py``) the whole time: it goes through twelve sentences and looks
(``BUILDER_LOOKS``, more tens than the server keeps, so they are built again and again), moves the
block in each (which has the server build that sentence's other nine tens in the background), and
waits until they are built before the next (in an app from before the tens' files, which builds
only the two tens beside, in a server thread: OLD_APP_WAIT). The measured sessions' reruns then share the machine
with those builds; run it with and without to see what the builds cost the others.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import tempfile
import time
from pathlib import Path

from benchmarks import harness as h
from testbed import local_server
from testbed.protocol_client import ProtocolSession

CHANGES = {"residual": lambda n: {"residual": n % 2 == 0}, "depth": lambda n: {"depth": 25 + n % 60}}
WARM_UP = 3  # rounds not counted (first runs import and build)
OLD_APP_WAIT = 3.0  # s a builder waits in each look of an app that builds only the two tens beside (0627d1c)
BUILDER_LOOKS = [f"lang={lang}&sc={sc}&scenario={scenario}&depth=100" for lang, sc, scenario in
                 itertools.product(("en", "zh"), ("lesson", "triage", "support"), ("both", "confirmed"))]


async def keep_building(port: int, stop: asyncio.Event, built: list[int]) -> None:
    """Until ``stop``: the next look of BUILDER_LOOKS, a block moved, its tens built (``built``
    counts the looks whose every ten was built)."""
    for query in itertools.cycle(BUILDER_LOOKS):
        if stop.is_set():
            return
        session = ProtocolSession(port, query)
        await session.connect(timeout=90)
        await session.rerun({"block": 2}, timeout=60)
        data = json.loads(session.component_bytes)  # (an app before the tens' files names neither)
        where = data.get("bundle"), data.get("tens_url")
        deadline = time.monotonic() + (60 if any(where) else OLD_APP_WAIT)
        while not stop.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            if any(where) and await asyncio.to_thread(h.block_ranges_built, f"http://localhost:{port}", *where) == 10:
                built.append(1)
                break
        await session.close()


async def interleaved(apps: list[tuple[str, str, Path]], rounds: int, pause: float,
                      builder: bool) -> tuple[dict[str, dict[str, list]], dict[str, int]]:
    """For each app, by change: the ms of each rerun, the apps taking turns rerun by rerun; and,
    with ``builder``, how many looks' tens each app's builder session had built meanwhile."""
    stop, builders, built = asyncio.Event(), [], {}
    with contextlib.ExitStack() as servers:
        sessions = {}
        for name, script, root in apps:
            log = Path(tempfile.mkdtemp()) / "server.log"
            base, _ = servers.enter_context(local_server.streamlit_server(script, log, root))
            sessions[name] = ProtocolSession(int(base.rsplit(":", 1)[1]), "lang=en")
            await sessions[name].connect(timeout=90)
            if builder and script == "app.py":
                for query in BUILDER_LOOKS:  # every look's payload built first: only the tens are left to build
                    await ProtocolSession(sessions[name].port, query).connect(timeout=120)
                built[name] = []
                builders.append(asyncio.create_task(keep_building(sessions[name].port, stop, built[name])))
        times = {name: {change: [] for change in CHANGES} for name in sessions}
        for n in range(WARM_UP + rounds):
            for change, values in CHANGES.items():
                for name, session in sessions.items():
                    elapsed = await session.rerun(values(n), timeout=60)
                    if n >= WARM_UP:
                        times[name][change].append(elapsed)
                    await asyncio.sleep(pause)
        stop.set()
        await asyncio.gather(*builders)
        for name, session in sessions.items():
            if session.exceptions:
                raise RuntimeError(f"{name}: {session.exceptions} exception elements")
            await session.close()
        return times, {name: len(looks) for name, looks in built.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60, help="reruns of each change per app")
    parser.add_argument("--pause", type=float, default=0.15, help="seconds between reruns")
    parser.add_argument("--also", type=Path, help="another checkout's app, measured in the same run")
    parser.add_argument("--builder", action="store_true", help="a session keeps each of our servers building tens")
    args = parser.parse_args()
    args.rounds = max(5, args.rounds)
    apps = [(f"ours ({h.git_state(h.ROOT)})", "app.py", h.ROOT)]
    if args.also is not None:
        apps.append((f"also ({h.git_state(args.also)})", "app.py", args.also.resolve()))
    apps.append(("bare baseline (whole rerun)", h.BASELINE_APP, h.ROOT))
    foreign = h.ForeignLoad()
    with foreign:
        times, built = asyncio.run(interleaved(apps, args.rounds, args.pause, args.builder))
    print(f"\nrerun request to script_finished, {args.rounds} each, apps interleaved; {foreign.summary()}")
    if args.builder:
        print("meanwhile, every ten built ahead for this many looks: "
              + ", ".join(f"{name.split(' (')[0]} {n}" for name, n in built.items()))
    print("; ".join(name for name in times) + "\n" + h.HEADER)
    for name, changes in times.items():
        for change, values in changes.items():
            print(h.fmt_row(f"{name.split(' (')[0]} {change}", values))
    base = [v for values in times[apps[-1][0]].values() for v in values]
    for name, changes in list(times.items())[:-1]:
        ours = [v for values in changes.values() for v in values]
        print(f"{name}: median {h.summary(ours)['median']:.1f} ms, "
              f"{h.summary(ours)['median'] / h.summary(base)['median']:.2f}x the bare baseline's rerun")


if __name__ == "__main__":
    main()
