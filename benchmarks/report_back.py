"""The instant Explorer's report-back against the bare baseline's rerun, interleaved (issue #16).

Run by hand from the repo root (never as a timed test), about two minutes::

    .venv/bin/python benchmarks/report_back.py                            # 60 rounds
    .venv/bin/python benchmarks/report_back.py --also /tmp/old-checkout   # and another commit's app

Each app gets a server of its own and one protocol session (protocol_client.py). Rerun by rerun,
in turn: this checkout's Explorer reports a view back (the residual switch flipped, then a depth;
its page reruns the fragment that keeps the URL), ``--also``'s does the same, and the bare
baseline (``baseline_app.py``: one slider, one toggle, one small chart) reruns its whole script
for its own toggle and slider. Each is timed from the rerun request to the server's
``script_finished``. Interleaving the apps rerun by rerun puts them under the same load on a
shared, noisy machine: the issue's 10 ms is a number of one machine's day, the ratio to the bare
baseline's rerun in the same run is what another day can compare.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import local_server  # noqa: E402
from protocol_client import ProtocolSession  # noqa: E402

CHANGES = {"residual": lambda n: {"residual": n % 2 == 0}, "depth": lambda n: {"depth": 25 + n % 60}}
WARM_UP = 3  # rounds not counted (first runs import and build)


async def interleaved(apps: list[tuple[str, str, Path]], rounds: int, pause: float) -> dict[str, dict[str, list]]:
    """For each app, by change: the ms of each rerun, the apps taking turns rerun by rerun."""
    with contextlib.ExitStack() as servers:
        sessions = {}
        for name, script, root in apps:
            log = Path(tempfile.mkdtemp()) / "server.log"
            base, _ = servers.enter_context(local_server.streamlit_server(script, log, root))
            sessions[name] = ProtocolSession(int(base.rsplit(":", 1)[1]), "lang=en")
            await sessions[name].connect(timeout=90)
        times = {name: {change: [] for change in CHANGES} for name in sessions}
        for n in range(WARM_UP + rounds):
            for change, values in CHANGES.items():
                for name, session in sessions.items():
                    elapsed = await session.rerun(values(n), timeout=60)
                    if n >= WARM_UP:
                        times[name][change].append(elapsed)
                    await asyncio.sleep(pause)
        for name, session in sessions.items():
            if session.exceptions:
                raise RuntimeError(f"{name}: {session.exceptions} exception elements")
            await session.close()
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60, help="reruns of each change per app")
    parser.add_argument("--pause", type=float, default=0.15, help="seconds between reruns")
    parser.add_argument("--also", type=Path, help="another checkout's app, measured in the same run")
    args = parser.parse_args()
    apps = [(f"ours ({h.git_state(h.ROOT)})", "app.py", h.ROOT)]
    if args.also is not None:
        apps.append((f"also ({h.git_state(args.also)})", "app.py", args.also.resolve()))
    apps.append(("bare baseline (whole rerun)", h.BASELINE_APP, h.ROOT))
    foreign = h.ForeignLoad()
    with foreign:
        times = asyncio.run(interleaved(apps, max(5, args.rounds), args.pause))
    print(f"\nrerun request to script_finished, {args.rounds} each, apps interleaved; {foreign.summary()}")
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
