"""Real model benchmark: the trained model's weights, a forward pass, a page update, a classroom.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.real_model                      # 40 sessions, 60 s on each app
    .venv/bin/python -m benchmarks.real_model --sessions 10 --seconds 30

In this process, on one BLAS thread as the page runs (the count is read back and printed): loading
and checking all-MiniLM-L6-v2 (sha256 of the 91 MB file, reading it as float32), one forward pass of
a 16-token sentence (the engine runs the model in float32), and a full page update for every pair
of switch scopes the page offers (the comparison's forward passes, verdict, three figures, table,
CSV; one block for "one"): without caches, and with the intact runs cached as the page keeps them
after its first view.
Then ``--sessions`` protocol sessions (testbed/protocol_client.py; no browser) on /real, joining one every
``--join-every`` s and each changing a control every 2-6 s; the same sessions on the bare baseline
app (benchmarks/baseline_app.py) in the same run. Errors, rerun times (request to the server's
script_finished) and the server's RSS, sampled every 2 s, are reported for both.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import time
from pathlib import Path

from benchmarks import harness as h
from benchmarks.engine import timed
from testbed.protocol_client import ProtocolSession

SIXTEEN_TOKENS = "Checkout errors started after the deploy, so we rolled it back."
SCOPES = ("on", "all", "one")


def engine_part() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    from blockstab.ablations import INCIDENT, Ablation, compare, layer_readouts
    from blockstab.pretrained import intact_config, load_model
    from ui.real_views import comparison_csv, findings, layer_rows, layers_figure, meaning_figure, projection_figure
    from ui.text import Text

    threadpool_limits(limits=1, user_api="blas")
    blas = sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})
    print(f"BLAS threads in this process: {blas}")
    start = time.perf_counter()
    model = load_model()
    first = (time.perf_counter() - start) * 1e3
    best, median = timed(load_model, 3)
    print(f"{'case':<64}{'min ms':>10}{'median ms':>12}")
    print(f"{'load + sha256 check, first in this process':<64}{first:>10.1f}{'':>12}")
    print(f"{'load + sha256 check, again (file in the page cache)':<64}{best:>10.1f}{median:>12.1f}")
    tokens = len(model.token_ids(SIXTEEN_TOKENS))
    best, median = timed(lambda: model.stream(SIXTEEN_TOKENS, intact_config()), 30)
    dtype = model.stream(SIXTEEN_TOKENS, intact_config()).dtype
    print(f"{f'forward pass, {tokens} tokens, {dtype}':<64}{best:>10.2f}{median:>12.2f}")
    t = Text("en")

    intact, runs = intact_config(), {}

    def intact_cached(text, cfg):
        """As the page's cache after its first view: the intact runs kept, every ablated one computed."""
        if cfg != intact:
            return layer_readouts(model.stream(text, cfg))
        if text not in runs:
            runs[text] = layer_readouts(model.stream(text, cfg))
        return runs[text]

    def page_update(ablation, run=None):
        c = compare(model, INCIDENT, ablation, run)
        findings(c), layers_figure(c, t), meaning_figure(c, t), projection_figure(c, t)
        layer_rows(c, t), comparison_csv(c)

    for cached, run in (("no cache", None), ("intact runs cached", intact_cached)):
        for residual in SCOPES:
            for norm in SCOPES:
                ablation = Ablation(residual=residual, norm=norm, layer=3)
                best, median = timed(lambda a=ablation, r=run: page_update(a, r), 5)
                print(f"{f'page update, {cached}: residual {residual}, norm {norm}':<64}{best:>10.1f}{median:>12.1f}")


def real_changes(rng: random.Random, i: int) -> dict:
    """The next control a student changes on /real (radios by their English labels)."""
    from ui.text import Text

    t = Text("en")
    kind = ("real_residual", "real_norm", "real_layer")[i % 3]
    if kind == "real_layer":
        return {kind: rng.randint(1, 6)}
    return {kind: t(f"option.{kind}.{rng.choice(SCOPES)}")}


def baseline_changes(rng: random.Random, i: int) -> dict:
    return {"residual": i % 2 == 0} if i % 2 else {"depth": rng.randint(5, 60)}


async def classroom(script: str, page: str, changes, args) -> dict:
    """``args.sessions`` protocol sessions on ``script``'s page ``page`` for ``args.seconds``."""
    stats = {"loaded": 0, "load_errors": [], "errors": [], "rerun_ms": [], "rss": []}
    log = Path(tempfile.mkdtemp()) / "server.log"
    with h.streamlit_server(script, log) as (base, server):
        port = int(base.rsplit(":", 1)[1])
        deadline = time.monotonic() + args.seconds

        async def sample() -> None:
            while time.monotonic() < deadline + 2:
                stats["rss"].append(h.rss_mb(server.pid))
                await asyncio.sleep(2)

        async def student(n: int) -> None:
            await asyncio.sleep(n * args.join_every)
            session, rng = ProtocolSession(port, "lang=en", page_name=page), random.Random(args.seed * 1000 + n)
            try:
                await session.connect(timeout=60)
                stats["loaded"] += 1
                for i in range(1000):
                    wait = rng.uniform(2, 6)
                    if time.monotonic() + wait >= deadline:
                        break
                    await asyncio.sleep(wait)
                    exceptions = session.exceptions
                    try:
                        stats["rerun_ms"].append(await session.rerun(changes(rng, i), timeout=20))
                    except Exception as error:  # noqa: BLE001 - counted, never fatal
                        stats["errors"].append(f"{type(error).__name__}: {error}"[:200])
                    if session.exceptions > exceptions:
                        stats["errors"].append("exception element")
            except Exception as error:  # noqa: BLE001
                stats["load_errors"].append(f"{type(error).__name__}: {error}"[:200])
            finally:
                with contextlib.suppress(Exception):
                    await session.close()

        await asyncio.gather(sample(), *(student(n) for n in range(args.sessions)))
    return stats


def report(name: str, stats: dict) -> None:
    rss = [r for r in stats["rss"] if r is not None]
    print(h.fmt_row(f"{name}: rerun (request -> finished)", stats["rerun_ms"]))
    print(f"    sessions loaded {stats['loaded']}, load errors {len(stats['load_errors'])}, "
          f"rerun errors {len(stats['errors'])}, server RSS max {max(rss, default=0):.0f} MB, "
          f"last {rss[-1] if rss else 0:.0f} MB")
    for error in (stats["load_errors"] + stats["errors"])[:5]:
        print("    " + error)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--join-every", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"app: {h.git_state(h.APP_ROOT)}")
    with h.ForeignLoad() as foreign:
        engine_part()
        print(f"\n{args.sessions} sessions, {args.seconds:.0f} s on each app, a change every 2-6 s per session")
        print(h.HEADER)
        report("/real", asyncio.run(classroom("app.py", "real", real_changes, args)))
        report("bare baseline", asyncio.run(classroom(h.BASELINE_APP, "", baseline_changes, args)))
    print(foreign.summary())


if __name__ == "__main__":
    main()
