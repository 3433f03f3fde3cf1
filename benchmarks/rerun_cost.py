"""Where a server-side rerun of the Explorer spends its time, without a browser.

Run by hand from the repo root: ``.venv/bin/python -m benchmarks.rerun_cost`` (about a minute).

1. Each step of ``pages/explorer.py`` for a few states: the engine (uncached), each figure's
   construction, and what ``st.plotly_chart`` then does with it (``to_dict`` + ``plotly.io.to_json``),
   with the JSON size that goes over the WebSocket; the depth figure's frames shown separately.
2. A whole rerun in Streamlit's AppTest (script + element marshalling, no WebSocket, no browser):
   the residual toggle and the depth slider, ours against ``benchmarks/baseline_app.py``.
3. (``--cprofile``) the functions the three figure builders spend their time in.
4. (``--send-ahead``) what sending the Explorer's figures ahead for every setting of its switches
   and every depth (issue #16) would cost to build and to send, with today's views: measured at a
   few depths per setting, summed over depths 1-100 by linear interpolation; then the same sent as
   cuts (``ui.views.cut``): each setting's deepest figures once and a cut per depth.

``--app-root DIR`` measures another checkout or snapshot: this file runs again in a process of DIR's own
(its ``.venv``'s python when it has one, started in DIR), so that process's ``ui`` and ``blockstab`` are DIR's.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import io
import itertools
import os
import pstats
import statistics
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import plotly.io
import plotly.tools

ROOT = Path(__file__).resolve().parents[1]
BASELINE_APP = Path(__file__).resolve().parent / "baseline_app.py"
app = SimpleNamespace()  # the measured checkout's ui functions, filled by load_app()


def imports_from(root: Path) -> bool:
    """Whether this process's ``ui`` (and so its ``blockstab``) is the one in ``root``."""
    spec = find_spec("ui")
    return spec is not None and spec.origin is not None and Path(spec.origin).resolve().parents[1] == root


def run_in(root: Path, argv: list[str]) -> int:
    """This file, with ``argv``, in a process of ``root``'s own: its ``.venv``'s python if it has one (else
    this one), started in ``root``, where ``python -c`` imports first (so ``ui`` is ``root``'s); its exit code."""
    if not ((root / "app.py").exists() and (root / "ui" / "__init__.py").exists()):
        sys.exit(f"{root} has no app.py and ui/ to measure")
    if os.environ.get("BLOCKSTAB_RERUN_COST_IN") == str(root):  # already in root's process, which imports ours
        sys.exit(f"a process started in {root} does not import {root}/ui")
    venv = root / ".venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    run = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r}, run_name='__main__')"
    print(f"measuring {root} with {python}", flush=True)
    return subprocess.run([python, "-c", run, *argv], cwd=root, check=False,
                          env={**os.environ, "BLOCKSTAB_RERUN_COST_IN": str(root)}).returncode


def load_app(root: Path) -> None:
    """Import the measured checkout's ui package: this process's own, which is ``root``'s."""
    app.root = root
    os.chdir(app.root)
    from ui.controls import ExplorerState
    from ui.text import Text
    from ui.views import explore
    from ui.views.block import block_figure
    from ui.views.depth import depth_figure, readouts_figure

    print(f"the app measured: {root} (its ui imported from {Path(find_spec('ui').origin).parent})", flush=True)
    app.Text, app.explore = Text, explore
    app.figures = {"block": block_figure, "depth": depth_figure, "readouts": readouts_figure}
    app.states = {"default (depth 24)": ExplorerState(), "residual off": ExplorerState(residual=False),
                  "depth 100": ExplorerState(depth=100)}
    app.default = ExplorerState()


def timed(fn, repeats: int) -> float:
    """Median wall time in ms over ``repeats`` calls after one warm-up call (as engine.py's timer; this file
    imports nothing of ``benchmarks``, so that it also runs in another checkout's process)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def as_streamlit_does(fig) -> str:
    """What st.plotly_chart does with a go.Figure before it is queued: to_dict, then to_json."""
    figure = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    return plotly.io.to_json(figure, validate=False)


def pieces(repeats: int) -> None:
    t, explore = app.Text("en"), app.explore
    print(f"{'state / step':<42}{'median ms':>10}{'JSON kB':>10}")
    for label, state in app.states.items():
        print(label)
        print(f"  {'engine: explore() (uncached)':<40}{timed(lambda s=state: explore(s), repeats):>10.2f}")
        result = explore(state)
        total_build = total_ship = 0.0
        for name, builder in app.figures.items():
            build = timed(lambda b=builder, s=state, r=result: b(s, r, t), repeats)
            fig = builder(state, result, t)
            ship = timed(lambda f=fig: as_streamlit_does(f), repeats)
            size = len(as_streamlit_does(fig)) / 1024
            total_build += build
            total_ship += ship
            print(f"  {name + ' figure: build':<40}{build:>10.2f}")
            print(f"  {name + ' figure: to_dict + to_json':<40}{ship:>10.2f}{size:>10.1f}")
            if fig.frames:
                frames = plotly.io.to_json({"frames": fig.to_dict()["frames"]}, validate=False)
                sliders = plotly.io.to_json({"layout": {"sliders": fig.to_dict()["layout"].get("sliders", [])}},
                                            validate=False)
                print(f"    {len(fig.frames)} frames: {len(frames) / 1024:.1f} kB, slider steps "
                      f"{len(sliders) / 1024:.1f} kB of the spec")
        print(f"  {'three figures: build + ship':<40}{total_build + total_ship:>10.2f}")


def retained_memory() -> None:
    """What one cached result or figure keeps alive (tracemalloc), to bound a cache of N entries."""
    import gc
    import tracemalloc

    t = app.Text("en")
    print("\nRetained memory per cached object (tracemalloc, kB)")
    for label, state in app.states.items():
        sizes = []
        gc.collect()
        tracemalloc.start()  # engine result first, then each figure built from it, one at a time
        before = tracemalloc.get_traced_memory()[0]
        result = app.explore(state)
        sizes.append(tracemalloc.get_traced_memory()[0] - before)
        for builder in app.figures.values():
            before = tracemalloc.get_traced_memory()[0]
            fig = builder(state, result, t)
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0] - before)
            del fig
            gc.collect()  # the figure's own cycles go now, not during the next measurement
        tracemalloc.stop()
        print(f"  {label:<22} engine result {sizes[0] / 1024:8.0f}   figures: "
              + ", ".join(f"{n} {v / 1024:.0f}" for n, v in zip(app.figures, sizes[1:], strict=True)))


def gc_with_cached_figures() -> None:
    """What one full collection (Streamlit's post-script gc.collect(2)) costs as built figures are
    kept alive, e.g. by a cache of go.Figure objects."""
    import gc

    t = app.Text("en")
    kept = []
    print("\ngc.collect(2) while built figures stay alive (median of 5, ms)")
    depths = iter(range(1, 101))
    for target in (0, 24, 96):
        while len(kept) < target:
            state = app.default.__class__(depth=next(depths))
            kept.extend(builder(state, app.explore(state), t) for builder in app.figures.values())
            kept = kept[:target]
        times = []
        for _ in range(5):
            start = time.perf_counter()
            gc.collect(2)
            times.append(time.perf_counter() - start)
        print(f"  {target:>3} figures alive: {statistics.median(times) * 1e3:7.1f} ms, "
              f"{len(gc.get_objects()):>8} tracked objects")


def apptest_reruns(repeats: int) -> None:
    import gc

    from streamlit.testing.v1 import AppTest

    print("\nWhole reruns in AppTest (server CPU only; median ms over", repeats, "reruns; the instant Explorer's"
          " switches and depth: a report-back rerun)")

    def rerun_times(script: str, change) -> float:
        at = AppTest.from_file(str(script), default_timeout=60)
        at.query_params["lang"] = "en"
        at.run()
        times = []
        for i in range(repeats + 2):
            change(at, i)
            start = time.perf_counter()
            at.run()
            if i >= 2:
                times.append(time.perf_counter() - start)
            assert not at.exception, at.exception
        return statistics.median(times) * 1e3

    def change(at, key: str, value) -> None:
        """A widget's new value; the instant Explorer's as the browser reports it (its whole view)."""
        try:
            state = at.session_state["instant_explorer"]
        except KeyError:  # a checkout without it
            state = None
        if state is not None and key in state["view"]:
            at.session_state["instant_explorer"] = {"view": {**state["view"], key: value}}
        elif isinstance(value, bool):
            at.toggle(key=key).set_value(value)
        else:
            at.slider(key=key).set_value(value)

    toggle = lambda at, i: change(at, "residual", i % 2 == 1)  # noqa: E731
    walk = lambda at, i: change(at, "depth", 25 + i % 70)  # noqa: E731
    deep = lambda at, i: change(at, "depth", 100 - (i % 2))  # noqa: E731
    inside = lambda at, i: change(at, "block", 2 + i % 23)  # noqa: E731
    for name, script in (("ours", app.root / "app.py"), ("baseline", BASELINE_APP)):
        line = (f"  {name:<9} residual toggle {rerun_times(script, toggle):>8.1f}   depth 25.. walk "
                f"{rerun_times(script, walk):>8.1f}   depth 99/100 {rerun_times(script, deep):>8.1f}")
        if name == "ours":  # the baseline has no block slider
            line += f"   block 2..24 walk {rerun_times(script, inside):>8.1f}"
        print(line)
    collect = []
    for _ in range(5):
        start = time.perf_counter()
        gc.collect(2)
        collect.append(time.perf_counter() - start)
    print(f"  one gc.collect(2) in this process now: {statistics.median(collect) * 1e3:.1f} ms over "
          f"{len(gc.get_objects())} tracked objects (Streamlit runs one after every script run)")


def profile_builders() -> None:
    t, state = app.Text("en"), app.default
    result = app.explore(state)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        for builder in app.figures.values():
            as_streamlit_does(builder(state, result, t))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
    print("\ncProfile: 5 x (build + ship) of the three figures, default state, top 25 by cumulative time")
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


SAMPLED_DEPTHS = (1, 2, 5, 10, 24, 50, 100)


def send_ahead() -> None:
    """Build time and JSON size of the depth and readouts figures at sampled depths, for each of the
    Explorer's 12 switch settings (the block view does not change with depth: once per setting)."""
    from dataclasses import replace

    from ui.views import figure_state

    t = app.Text("en")
    settings = [dict(residual=r, norm=n != "none", norm_kind="rmsnorm" if n == "none" else n, placement=p)
                for r, n, p in itertools.product((True, False), ("none", "rmsnorm", "layernorm"), ("post", "pre"))]
    print("\nSending every (setting, depth) ahead with today's views: one build each, English")
    print(f"  {'setting':<44}{'build s':>9}{'JSON MB':>9}{'gzip MB':>9}   (depth + readouts, depths 1-100)")
    totals = [0.0, 0.0, 0.0]
    deepest = [0.0, 0.0, 0.0]
    for setting in settings:
        sampled = []
        for depth in SAMPLED_DEPTHS:
            cost = [0.0, 0.0, 0.0]
            for name in ("depth", "readouts"):
                state = figure_state(name, replace(app.default, depth=depth, **setting))
                result = app.explore(state)
                start = time.perf_counter()
                text = as_streamlit_does(app.figures[name](state, result, t))
                cost[0] += time.perf_counter() - start
                cost[1] += len(text) / 1e6
                cost[2] += len(gzip.compress(text.encode(), mtime=0)) / 1e6
            sampled.append(cost)
        every = [float(sum(np.interp(range(1, 101), SAMPLED_DEPTHS, [c[i] for c in sampled]))) for i in range(3)]
        totals = [a + b for a, b in zip(totals, every, strict=True)]
        deepest = [a + b for a, b in zip(deepest, sampled[-1], strict=True)]
        norm = setting["norm_kind"] if setting["norm"] else "no norm"
        label = f"residual {'on' if setting['residual'] else 'off'}, {norm}, {setting['placement']}"
        print(f"  {label:<44}{every[0]:>9.1f}{every[1]:>9.2f}{every[2]:>9.2f}")
    print(f"  {'all 12 settings x 100 depths':<44}{totals[0]:>9.1f}{totals[1]:>9.2f}{totals[2]:>9.2f}")
    print(f"  {'one depth-100 figure pair per setting':<44}{deepest[0]:>9.1f}{deepest[1]:>9.2f}{deepest[2]:>9.2f}")
    send_cuts_ahead(settings, t)


def send_cuts_ahead(settings: list[dict], t) -> None:
    """Every (setting, depth) as cuts: the depth and readouts figures of each setting's deepest run
    (as Streamlit would send them) and a cut per depth 1-100 (Plotly's JSON encoder), built once."""
    from dataclasses import replace

    from ui.views.depth import depth_cut, depth_plane, readout_panels, readouts_cut

    print("\nThe same as cuts: each setting's depth-100 figures, and a cut per depth")
    print(f"  {'setting':<44}{'build s':>9}{'JSON MB':>9}{'gzip MB':>9}   (of which cuts: s, MB)")
    totals = [0.0, 0.0, 0.0]
    for setting in settings:
        state = replace(app.default, depth=100, **setting)
        result = app.explore(state)
        start = time.perf_counter()
        figures = [as_streamlit_does(build(state, result, t)) for build in (depth_plane, readout_panels)]
        middle = time.perf_counter()
        cuts = plotly.io.json.to_json_plotly([[depth_cut(state, result, t, n), readouts_cut(state, result, t, n)]
                                              for n in range(1, 101)])
        end = time.perf_counter()
        text = "".join(figures) + cuts
        cost = [end - start, len(text) / 1e6, len(gzip.compress(text.encode(), mtime=0)) / 1e6]
        totals = [a + b for a, b in zip(totals, cost, strict=True)]
        norm = setting["norm_kind"] if setting["norm"] else "no norm"
        label = f"residual {'on' if setting['residual'] else 'off'}, {norm}, {setting['placement']}"
        print(f"  {label:<44}{cost[0]:>9.2f}{cost[1]:>9.2f}{cost[2]:>9.2f}"
              f"   ({end - middle:.2f}, {len(cuts) / 1e6:.2f})")
    print(f"  {'all 12 settings x 100 depths':<44}{totals[0]:>9.2f}{totals[1]:>9.2f}{totals[2]:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--send-ahead", action="store_true", help="only section 4 (issue #16), a few minutes")
    parser.add_argument("--app-root", type=Path, default=ROOT,
                        help="the checkout / snapshot to measure (default: this one), in a process of its own")
    args = parser.parse_args()
    root = args.app_root.resolve()
    if not imports_from(root):
        sys.exit(run_in(root, [*sys.argv[1:], "--app-root", str(root)]))  # the last --app-root counts
    load_app(root)
    repeats = max(3, min(args.repeats, 200))
    if args.send_ahead:
        return send_ahead()
    pieces(repeats)
    retained_memory()
    gc_with_cached_figures()
    apptest_reruns(repeats)
    if args.cprofile:
        profile_builders()


if __name__ == "__main__":
    main()
