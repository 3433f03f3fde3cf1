"""What a stabiliser toggle would cost if the browser switched the Explorer's charts itself.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.client_switch            # 40 switches, the first 4 not counted

A decision input for the widget-latency target (docs/benchmarks.md, round 4), not a product
feature. It starts ``app.py`` (free localhost port, headless) and opens the Explorer at
1400 × 900 in Debian's Chromium. The three figures for the residual connection off and on are
built here by the app's own pure views (``ui.views.FIGURES``, as JSON). In the page,
``Plotly.react`` gives the three drawn charts one setting, then the other, 150 ms apart. Each
switch is timed from the call to the next animation frame. There is no server round trip:
that is what a client-side toggle would cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from benchmarks import harness as h

SWITCH = """async ([settings, n]) => {
  const charts = [...document.querySelectorAll('.js-plotly-plot')];
  const times = [];
  for (let i = 0; i < n; i++) {
    const figures = settings[i % 2];
    await new Promise(r => setTimeout(r, 150));
    const t0 = performance.now();
    await Promise.all(charts.map((gd, k) => Plotly.react(gd, structuredClone(figures[k]))));
    await new Promise(r => requestAnimationFrame(() => r()));
    times.push(performance.now() - t0);
  }
  return times;
}"""


def explorer_figures(residual: bool) -> list[dict]:
    """The Explorer's three figures (default view, English) as the page would receive them."""
    import plotly.io as pio

    from ui.controls import ExplorerState
    from ui.text import Text
    from ui.views import FIGURES, explore

    state = ExplorerState(residual=residual)
    return [json.loads(pio.to_json(FIGURES[name](state, explore(state), Text("en")), validate=False))
            for name in ("block", "depth", "readouts")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="switches, the first 4 not counted (default 40)")
    args = parser.parse_args()
    n = max(8, min(args.n, 400))
    h.check_chromium()
    from playwright.sync_api import sync_playwright

    settings = [explorer_figures(residual=False), explorer_figures(residual=True)]
    logs = Path(tempfile.mkdtemp(prefix="blockstab-switch-"))
    with h.streamlit_server("app.py", logs / "server.log") as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=h.CHROMIUM, args=h.CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.add_init_script(h.INIT_SCRIPT)
        page = context.new_page()
        page.goto(url + "/?lang=en")
        page.wait_for_selector(h.IDLE, state="attached")
        page.wait_for_function("() => window.__bench.load.allCharts != null")
        times = page.evaluate(SWITCH, [settings, n])[4:]
        browser.close()
    print(h.HEADER)
    print(h.fmt_row("three charts switched in the page", times))
    print(f"median {statistics.median(times):.1f} ms; compare with the baseline's round-trip p95 "
          "(browser_latency.py) for the ratio")


if __name__ == "__main__":
    main()
