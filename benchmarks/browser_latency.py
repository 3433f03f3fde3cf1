"""Browser latency of BlockStab against a bare Streamlit baseline, both measured in the same run.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.browser_latency            # everything, about 8 minutes
    .venv/bin/python -m benchmarks.browser_latency --n 30 --loads 5 --json /tmp/latency.json
    .venv/bin/python -m benchmarks.browser_latency --only widgets --profile /tmp/prof   # + py-spy

It starts both servers itself (``app.py`` and ``benchmarks/baseline_app.py``, free localhost ports,
headless) and drives Debian's headless Chromium. Chromium resolves no host but localhost (the
``--host-resolver-rules`` flag below), so nothing leaves the machine.

(a) widgets: time from the input event (performance.now() in a capture-phase mousedown / keydown
    listener) to a Plotly chart's drawn data (``_fullData`` x / y) changing, polled every animation
    frame in the page, for the first chart and for every chart. Our app and the baseline alternate,
    interaction by interaction: the residual and norm switches, Pre/Post, depth +-1 and a depth walk.
    The instant Explorer keeps the charts it drew and draws the depths on either side ahead in idle
    time, so a switch back and a step along depth at this pace are swaps. Ours alone: ``residual_new``,
    a residual switch right after a jump to a depth far from any drawn (charts never drawn, while
    the depths beside the jump are being drawn ahead), ``residual_paused``, the same after a pause
    of PAUSED_S (the switch flipped is drawn ahead after a pause), and ``depth_hold``, depth +1 steps with no
    pause (a held arrow key outrunning the drawing ahead); ``stage``, the stage in focus switched
    between two, ``block_alt``, the block in focus +-1 (both change the block view only), and
    ``block_far``, the block in focus stepped ten at a time (PageUp / PageDown: each step lands in
    another ten of blocks) at depth 100 without normalization, once the server has built every ten
    (the browser reads the block ranges from the app once built).
(b) scrub: the tour's 'Across depth' chart's Plotly slider, a click on its rail, and the same
    ``Plotly.animate`` call the slider makes, to the 'now' marker moving (no server involved). The
    Explorer's own switches and depth change its figures in the browser too (issue #16): part (a).
(c) first load: cold (new browser context) and warm (same context, reload) navigation to the
    first chart drawn (pages without a chart: idle with an h1), every page of ours and the baseline.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness as h

LOCAL_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"
OURS_PAGES = ["/", "/walk", "/case", "/practice", "/geometry", "/teach"]
PAUSE_S = 0.25  # between two interactions, so each starts from an idle page
KINDS = ["residual", "residual_new", "residual_paused", "norm", "placement", "depth_alt", "depth_walk", "depth_hold",
         "stage", "block_alt", "block_far"]
OURS_ONLY = ("residual_new", "residual_paused", "depth_hold", "stage", "block_alt", "block_far")
FAR_STEPS = ["PageUp"] * 7 + ["PageDown"] * 7  # block 1 -> 71 -> 1, ten blocks a step (further on, overflow)
# Where the instant Explorer reads its block ranges (an app before the bundles: tensUrl).
RANGES_AT = """() => { const e = document.querySelector('.instant-explorer');
  return e ? [e.dataset.bundle || null, e.dataset.tensUrl || null] : [null, null]; }"""
PAUSED_S = 2.0  # residual_paused: a teacher's pause between moving the depth and flipping the switch
FAR_DEPTHS = [2 + (37 * i) % 97 for i in range(97)]  # 2..98, consecutive ones at least 11 apart
SET_DEPTH = """n => { const r = document.querySelector('#instant-depth'); r.value = String(n);
  r.dispatchEvent(new Event('input', {bubbles: true})); r.dispatchEvent(new Event('change', {bubbles: true})); }"""
# The instant Explorer has drawn the depth its slider shows.
DEPTH_DRAWN = """() => { const e = document.querySelector('.instant-explorer');
  const r = document.querySelector('#instant-depth');
  return e && r && e.dataset.drawn && JSON.parse(e.dataset.drawn).depth === Number(r.value); }"""
DEPTH_CHART = ("() => [...document.querySelectorAll('.js-plotly-plot')]"
               ".findIndex(gd => gd.layout && gd.layout.sliders && gd.layout.sliders.length)")
ANIMATE = """([i, name]) => {
  const gd = document.querySelectorAll('.js-plotly-plot')[i], B = window.__bench;
  B.t0 = performance.now(); B.t0type = 'Plotly.animate';
  Plotly.animate(gd, [name], {mode: 'immediate', frame: {duration: 0, redraw: false}, transition: {duration: 0}});
}"""


class App:
    """One server's page in its own browser context, with the widgets an interaction uses."""

    def __init__(self, name: str, url: str, labels: dict[str, str], browser):
        self.name, self.url, self.labels = name, url, labels
        self.context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
        self.context.add_init_script(h.INIT_SCRIPT)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.js_errors: list[str] = []
        self.console_errors: list[str] = []
        self.page.on("pageerror", lambda e: self.js_errors.append(str(e)))
        self.page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)

    def open(self) -> None:
        self.page.goto(self.url + "/?lang=en")
        self.page.wait_for_selector(h.IDLE, state="attached")
        self.page.wait_for_function("() => window.__bench.load.allCharts != null")

    def action(self, kind: str, i: int):
        """(prepare, act) for the i-th interaction of ``kind``; prepare runs before the probe is armed."""
        page = self.page
        if kind in ("residual_new", "residual_paused"):  # a jump to a depth not drawn (not measured), the switch
            _, switch = self.action("residual", i)
            depth, pause = FAR_DEPTHS[i % len(FAR_DEPTHS)], PAUSED_S if kind == "residual_paused" else 0

            def jump() -> None:
                page.evaluate(SET_DEPTH, depth)
                page.wait_for_function(DEPTH_DRAWN)
                time.sleep(pause)
            return jump, switch
        if kind == "block_far":
            slider = page.locator(f"input[type=range][aria-label={json.dumps(self.labels['block'])}]").first

            def ready() -> None:
                if i == 0:  # depth 100 with no norm (with one, the deep blocks draw the same numbers, to the
                    # last bit, and the probe sees no change), and a block moved: the server builds every ten
                    page.goto(self.url + "/?lang=en&depth=100&norm=false")
                    page.wait_for_selector(h.IDLE, state="attached")
                    page.wait_for_function(DEPTH_DRAWN)
                    slider.focus()
                    page.keyboard.press("ArrowRight")
                    page.keyboard.press("ArrowLeft")
                    deadline = time.monotonic() + 120
                    while h.block_ranges_built(self.url, *page.evaluate(RANGES_AT)) != 10 \
                            and time.monotonic() < deadline:
                        time.sleep(0.5)
                slider.scroll_into_view_if_needed()
                slider.focus()
            return ready, lambda: page.keyboard.press(FAR_STEPS[i % len(FAR_STEPS)])
        if kind in ("residual", "norm", "placement", "stage"):
            label = self.labels[kind] if kind in ("residual", "norm") else self.labels[kind][i % 2]
            where = page.locator(".instant-block-controls" if kind == "stage" else "body")
            target = where.get_by_text(label, exact=True)
            return target.scroll_into_view_if_needed, target.click
        # the slider thumb: a range input (implicit role slider)
        label = json.dumps(self.labels["block" if kind == "block_alt" else "depth"])
        slider = page.locator(f"[role=slider][aria-label={label}], input[type=range][aria-label={label}]").first
        key = "ArrowRight" if kind in ("depth_walk", "depth_hold") or i % 2 == 0 else "ArrowLeft"
        return lambda: (slider.scroll_into_view_if_needed(), slider.focus()), lambda: page.keyboard.press(key)

    def exceptions(self) -> int:
        return self.page.locator(h.EXCEPTION).count()


def ours_labels(en: dict[str, str]) -> dict:
    """The Explorer's controls an interaction uses, by their English labels (``en``: the app's catalog)."""
    return {"residual": en["control.residual"], "norm": en["control.norm"],
            "placement": (en["option.placement.pre"], en["option.placement.post"]),
            "depth": en["control.depth"], "block": en["control.block"],
            "stage": (en["option.focus.feed_forward"], en["option.focus.attention_residual"])}


def start_profiler(pid: int, out: Path) -> subprocess.Popen | None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("py-spy not found (pip install py-spy); no profile", file=sys.stderr)
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "200", "--nonblocking", "--format", "raw",
                             "--output", str(out), "--duration", "900"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def stop_profiler(spy: subprocess.Popen | None) -> None:
    if spy is None:
        return
    spy.send_signal(signal.SIGINT)
    try:
        spy.wait(timeout=60)
    except subprocess.TimeoutExpired:
        spy.kill()
        spy.wait()


def widgets(apps: list[App], n: int, warmup: int, kinds: list[str]) -> dict:
    """Each interaction of ``kinds``, N measured after the warm-ups, the apps taking turns."""
    results: dict = {}
    for kind in kinds:
        shared = kind not in OURS_ONLY
        active = [a for a in apps if a.name == "ours" or shared and (kind in a.labels or kind.startswith("depth"))]
        for app in active:
            app.open()  # a fresh session on the default view for every interaction kind
            results.setdefault(app.name, {})[kind] = []
        deadline = time.monotonic() + 20 * 60
        for i in range(warmup + n):
            if time.monotonic() > deadline:
                print(f"  {kind}: stopped at the 20-minute bound after {i} rounds", file=sys.stderr)
                break
            for app in active:
                prepare, act = app.action(kind, i)
                prepare()
                sample = h.measure(app.page, act)
                if i >= warmup:
                    results[app.name][kind].append(sample.__dict__)
                time.sleep(0 if kind == "depth_hold" else PAUSE_S)
        for app in active:
            results[app.name][kind + "_exceptions"] = app.exceptions()
    return results


def scrub(app: App, n: int, warmup: int) -> dict:
    """The tour's depth chart's Plotly slider (the Explorer's depth control is part (a)): rail
    clicks, then the slider's own Plotly.animate call."""
    page = app.page
    page.goto(app.url + "/walk?lang=en&step=6")
    page.wait_for_selector(h.IDLE, state="attached")
    page.wait_for_function("() => window.__bench.load.allCharts != null")
    index = page.evaluate(DEPTH_CHART)
    plot = page.locator(".js-plotly-plot").nth(index)
    plot.scroll_into_view_if_needed()
    rail = plot.locator(".slider-rail-rect").first.bounding_box()
    out: dict = {"rail_click": [], "plotly_animate": []}
    for i in range(warmup + n):
        fraction = 0.25 if i % 2 == 0 else 0.75
        x, y = rail["x"] + rail["width"] * fraction, rail["y"] + rail["height"] / 2
        sample = h.measure(page, lambda x=x, y=y: page.mouse.click(x, y), timeout_ms=5_000)
        if i >= warmup:
            out["rail_click"].append(sample.__dict__)
        time.sleep(0.1)
    steps = page.evaluate("i => document.querySelectorAll('.js-plotly-plot')[i].layout.sliders[0].steps.length", index)
    for i in range(warmup + n):
        name = str((steps - 1) // 4 if i % 2 == 0 else 3 * (steps - 1) // 4)
        page.evaluate(h.ARM)
        page.evaluate(ANIMATE, [index, name])
        try:
            page.wait_for_function(h.DONE, timeout=5_000, polling=50)
            page.evaluate(h.TWO_FRAMES)
            sample = h.sample_from(page.evaluate(h.COLLECT))
        except Exception as error:  # noqa: BLE001 - a timeout is recorded, never fatal
            sample = h.Sample(None, None, error=f"timeout: {error}"[:200])
        if i >= warmup:
            out["plotly_animate"].append(sample.__dict__)
        time.sleep(0.1)
    # A sample whose "send" is set saw a WebSocket frame leave the page after its input: a rerun.
    out["server_frames_sent"] = sum(1 for k in ("rail_click", "plotly_animate") for s in out[k]
                                    if s["send"] is not None)
    return out


def has_chart(script: str) -> bool:
    return "plotly_chart" in (h.APP_ROOT / script).read_text(encoding="utf-8")


def first_loads(browser, targets: list[tuple[str, str, bool]], loads: int) -> dict:
    """Cold (fresh context each time) and warm (reload in one context) loads, targets interleaved."""
    results: dict = {name: {"cold": [], "warm": [], "errors": 0} for name, _, _ in targets}

    def milestone(page, chart: bool) -> dict:
        key = "firstChart" if chart else "idleH1"
        page.wait_for_function(f"() => window.__bench.load.{key} != null", timeout=30_000, polling=50)
        if chart:
            page.wait_for_function("() => window.__bench.load.allCharts != null", timeout=30_000, polling=50)
        load = page.evaluate(h.LOAD)
        load["milestone"] = load[key]
        load["exceptions"] = page.locator(h.EXCEPTION).count()
        return load

    for _ in range(loads):
        for name, url, chart in targets:
            context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
            context.add_init_script(h.INIT_SCRIPT)
            page = context.new_page()
            try:
                page.goto(url, wait_until="commit")
                results[name]["cold"].append(milestone(page, chart))
            except Exception as error:  # noqa: BLE001 - counted, never fatal
                results[name]["errors"] += 1
                print(f"  cold load {name}: {error}"[:300], file=sys.stderr)
            context.close()
    warm_pages = {}
    for name, url, chart in targets:
        context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
        context.add_init_script(h.INIT_SCRIPT)
        page = context.new_page()
        page.goto(url, wait_until="commit")
        milestone(page, chart)  # fills the HTTP cache; not counted
        warm_pages[name] = (context, page)
    for _ in range(loads):
        for name, _url, chart in targets:
            page = warm_pages[name][1]
            try:
                page.reload(wait_until="commit")
                results[name]["warm"].append(milestone(page, chart))
            except Exception as error:  # noqa: BLE001 - counted, never fatal
                results[name]["errors"] += 1
                print(f"  warm load {name}: {error}"[:300], file=sys.stderr)
    for context, _page in warm_pages.values():
        context.close()
    return results


def routes() -> list[tuple[str, str]]:
    """(url path, script) of our pages, read from app.py's st.Page calls."""
    import ast

    found = {}
    for node in ast.walk(ast.parse((h.APP_ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            kw = {k.arg: k.value for k in node.keywords}
            found["/" + kw["url_path"].value] = node.args[0].value
            if "default" in kw and kw["default"].value is True:
                found["/"] = node.args[0].value
    return [(path, found[path]) for path in OURS_PAGES]


# --- report ---------------------------------------------------------------------------------------


def values(samples: list[dict], field: str) -> list[float]:
    return [s[field] for s in samples if s.get(field) is not None and not s.get("error")]


def print_widgets(results: dict) -> None:
    print("\n(a) widget latency: input event -> chart data changed")
    print(h.HEADER)
    base_p95 = None
    for kind in KINDS:
        for app in ("ours", "baseline"):
            samples = results.get(app, {}).get(kind)
            if samples is None:
                continue
            errors = sum(1 for s in samples if s.get("error"))
            print(h.fmt_row(f"{kind} / {app} (first chart)", values(samples, "first"))
                  + (f"   errors={errors}" if errors else ""))
            if app == "ours":
                print(h.fmt_row(f"{kind} / {app} (every chart)", values(samples, "last")))
            for part in ("send", "server", "draw"):
                print(h.fmt_row(f"    {part}", values(samples, part)))
            kb = values(samples, "recv_bytes")
            if kb:
                print(f"    {'received per interaction':<40}{sorted(kb)[len(kb) // 2] / 1024:>10.1f} kB (median)")
        ours, base = results.get("ours", {}).get(kind), results.get("baseline", {}).get(kind)
        if base and values(base, "first"):
            base_p95 = h.percentile(values(base, "first"), 95)  # one chart: first = every
        if ours and base_p95 and values(ours, "first"):  # (no such control in the baseline: its last toggle's)
            first = h.percentile(values(ours, "first"), 95) / base_p95
            every = h.percentile(values(ours, "last"), 95)
            print(f"  ratio ours p95 / baseline p95 ({kind}): first chart {first:.2f}, every chart "
                  f"{every / base_p95:.2f}; every chart p95 {every:.0f} ms   (target <= 0.6 and <= 100 ms)")


def print_scrub(results: dict) -> None:
    print("\n(b) in-browser depth scrub: input -> 'now' marker moved (target p95 <= 50 ms)")
    print(h.HEADER)
    for kind in ("rail_click", "plotly_animate"):
        samples = results[kind]
        errors = sum(1 for s in samples if s.get("error"))
        print(h.fmt_row(kind, values(samples, "first")) + (f"   errors={errors}" if errors else ""))
    print(f"  scrub samples that sent anything to the server: {results['server_frames_sent']} (0 = no rerun)")


def print_loads(results: dict) -> None:
    print("\n(c) first load: navigation start -> first chart drawn (no chart: idle with an h1), median of N")
    print(f"{'':<22}{'n':>4}{'cold':>9}{'warm':>9}{'cold all':>10}{'warm all':>10}   (ms; 'all': every chart)")
    base_cold = None
    for name, r in results.items():
        cold = [x["milestone"] for x in r["cold"]]
        warm = [x["milestone"] for x in r["warm"]]
        cold_all = [x.get("allCharts") or x["milestone"] for x in r["cold"]]
        warm_all = [x.get("allCharts") or x["milestone"] for x in r["warm"]]
        med = lambda v: h.summary(v).get("median", float("nan"))  # noqa: E731
        print(f"{name:<22}{len(cold):>4}{med(cold):>9.0f}{med(warm):>9.0f}{med(cold_all):>10.0f}{med(warm_all):>10.0f}"
              + (f"   errors={r['errors']}" if r["errors"] else ""))
        if name == "baseline /":
            base_cold = med(cold)
    if base_cold:
        for name, r in results.items():
            if name != "baseline /" and r["cold"]:
                ratio = h.summary([x["milestone"] for x in r["cold"]])["median"] / base_cold
                print(f"  cold {name} / baseline: {ratio:.2f}   (target <= 1.10)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="measured interactions per kind (default 40)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--loads", type=int, default=5, help="cold and warm loads per page (default 5)")
    parser.add_argument("--only", choices=["widgets", "scrub", "loads"], action="append",
                        help="run only these parts (repeatable)")
    parser.add_argument("--kinds", help=f"widgets: only these interactions, comma-separated (of {','.join(KINDS)})")
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--profile", type=Path, help="py-spy our server during the widget part into this folder")
    parser.add_argument("--app-root", type=Path, help="measure the app in this checkout / snapshot (default: this one)")
    parser.add_argument("--ours-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a Streamlit option for our server only, e.g. runner.postScriptGC=false (repeatable)")
    args = parser.parse_args()
    extra = tuple(x for o in args.ours_option for x in ("--" + o.split("=", 1)[0], o.split("=", 1)[1]))
    h.use_app_root(args.app_root)
    en = h.app_catalog()
    parts = set(args.only or ["widgets", "scrub", "loads"])
    args.n = max(1, min(args.n, 60))  # depth_walk walks up from 24; 100 is the slider's end
    h.check_chromium()
    from playwright.sync_api import sync_playwright

    logs = Path(tempfile.mkdtemp(prefix="blockstab-bench-"))
    out: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "n": args.n, "warmup": args.warmup,
                 "app": f"{h.APP_ROOT} at {h.git_state(h.APP_ROOT)}", "ours_options": args.ours_option}
    print(f"measuring {out['app']}" + (f" with {' '.join(args.ours_option)}" if args.ours_option else ""))
    with (h.streamlit_server("app.py", logs / "ours.log", extra) as (ours_url, ours_server),
          h.streamlit_server(h.BASELINE_APP, logs / "baseline.log") as (base_url, _),
          h.ForeignLoad() as foreign, sync_playwright() as p):
        browser = p.chromium.launch(executable_path=h.CHROMIUM, args=[*h.CHROMIUM_ARGS, LOCAL_ONLY])
        ours = App("ours", ours_url, ours_labels(en), browser)
        base = App("baseline", base_url, {"residual": "Residual", "depth": "Depth"}, browser)
        if "widgets" in parts:
            spy = start_profiler(ours_server.pid, args.profile / "ours-widgets.txt") if args.profile else None
            kinds = args.kinds.split(",") if args.kinds else KINDS
            out["widgets"] = widgets([ours, base], args.n, args.warmup, kinds)
            stop_profiler(spy)
            print_widgets(out["widgets"])
        if "scrub" in parts:
            out["scrub"] = scrub(ours, args.n, args.warmup)
            print_scrub(out["scrub"])
        for app in (ours, base):
            out[f"{app.name}_js_errors"] = app.js_errors
            out[f"{app.name}_console_errors"] = app.console_errors
            app.context.close()
        if "loads" in parts:
            targets = [("baseline /", base_url + "/", True)]
            targets += [(f"ours {path}", ours_url + path, has_chart(script)) for path, script in routes()]
            out["loads"] = first_loads(browser, targets, args.loads)
            print_loads(out["loads"])
        browser.close()
    for name in ("ours", "baseline"):
        errors = out.get(f"{name}_console_errors", [])
        print(f"\n{name}: {len(out.get(f'{name}_js_errors', []))} uncaught JS errors, {len(errors)} console errors"
              + (f" (first: {errors[0][:120]})" if errors else ""))
    print(foreign.summary())
    out["foreign_cpu"] = foreign.samples
    print(f"server logs: {logs}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1))
        print(f"samples: {args.json}")


if __name__ == "__main__":
    main()
