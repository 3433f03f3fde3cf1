"""The lesson for one person on a phone (``/study``, issue #61): a thousand phones open it within a minute, on
one process; and its Explorer's switch, input to chart drawn, on a phone's slower CPU.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.study --json /tmp/study.json
    .venv/bin/python -m benchmarks.study --phones 100 --seconds 10 --switches 10     # a quick look

**Load.** One Chromium page at 390 px opens ``/study`` (its first tour step, as the homework link does) and lists
what it fetches from the app; then ``--phones`` scripted phones, arriving evenly over ``--seconds``, each from a
loopback address of its own (one phone per school), fetch the same, gzip accepted, as a first visit does (nothing
cached). Reported: the server's CPU per phone (its process tree, over the arrivals), the bytes per phone on the
wire, each phone's time to have every file (median / p95), and every answer that was not 200. The server should
spend nothing but serving files made once.

**Switch.** A Chromium page at 390 px with its CPU slowed ``--cpu-slowdown`` (4, as Lighthouse's mobile profile)
opens ``/study?part=explorer`` and flips the residual switch ``--switches`` times (the first 4 not counted), 0.3 s
apart, by a click: from the input event (its ``timeStamp``) to the animation frame after the Explorer has drawn the
other view (its ``data-drawn``, set once every chart is drawn; that frame paints it). Target: p95 <= 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks import harness as h
from testbed.local_server import CHROMIUM, CHROMIUM_ARGS, PHONE_USER_AGENT, streamlit_server
from testbed.phones import request
from ui.text import Text

ROOT = Path(__file__).resolve().parents[1]
OPENED = "/study?lang=en"  # the homework link: the tour's first step, its figure
EXPLORER = "/study?part=explorer&lang=en"
# Before a switch: when the Explorer has drawn another view (``data-drawn``, set once its charts are drawn, as the
# browser tests wait for it), the next animation frame's time (that frame paints it); the input's time.
ARM = """() => {
  const explorer = document.querySelector('.instant-explorer'), before = explorer.dataset.drawn;
  const run = window.__switch = {input: null, drawn: null};
  addEventListener('pointerdown', e => { run.input = e.timeStamp; }, {capture: true, once: true});
  const seen = new MutationObserver(() => {
    if (run.input === null || explorer.dataset.drawn === before) return;
    seen.disconnect();
    requestAnimationFrame(() => { run.drawn = performance.now(); });
  });
  seen.observe(explorer, {attributes: true, attributeFilter: ['data-drawn']});
}"""


def fetched_by_a_phone(base: str) -> list[str]:
    """The app's paths (with their queries) a phone's Chromium fetches to draw :data:`OPENED`."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only this step drives a browser

    paths: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 390, "height": 844}, user_agent=PHONE_USER_AGENT,
                                      is_mobile=True)
        page = context.new_page()
        page.on("request", lambda r: r.url.startswith(base) and paths.append(r.url[len(base):]))
        page.goto(base + OPENED)
        page.wait_for_selector(".js-plotly-plot")
        page.wait_for_load_state("networkidle")
        browser.close()
    return paths


def switches(base: str, n: int, slowdown: float) -> list[float]:
    """Each counted switch's milliseconds from the click to every chart drawn anew."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 390, "height": 844}, user_agent=PHONE_USER_AGENT,
                                   is_mobile=True, has_touch=True).new_page()
        page.goto(base + EXPLORER)
        page.wait_for_selector(".instant-explorer .js-plotly-plot")
        page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
        switch = page.get_by_role("switch", name=Text("en")("control.residual"))
        for i in range(n + 4):
            page.wait_for_timeout(300)
            page.evaluate(ARM)
            switch.click()
            page.wait_for_function("() => window.__switch.drawn !== null", timeout=30_000)
            if i >= 4:
                times.append(page.evaluate("() => window.__switch.drawn - window.__switch.input"))
        browser.close()
    return times


async def phone(port: int, number: int, paths: list[str]) -> tuple[float, int, Counter]:
    """One phone's first visit from its own address: its seconds, bytes on the wire and answers by status."""
    source, start, wire, statuses = f"127.0.{1 + number // 250}.{1 + number % 250}", time.perf_counter(), 0, Counter()
    for path in paths:
        answer = await request(port, "GET", path, source=source, sent={"Accept-Encoding": "gzip"})
        wire += len(answer.body)
        statuses[answer.status] += 1
    return time.perf_counter() - start, wire, statuses


async def arrivals(port: int, paths: list[str], phones: int, seconds: float) -> list[tuple[float, int, Counter]]:
    async def arriving(number: int):
        await asyncio.sleep(seconds * number / phones)
        return await phone(port, number, paths)

    return await asyncio.gather(*(arriving(n) for n in range(phones)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phones", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0, help="over which the phones arrive")
    parser.add_argument("--switches", type=int, default=40, help="switches counted (4 more first, not counted)")
    parser.add_argument("--cpu-slowdown", type=float, default=4.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="blockstab-study-"))
    with streamlit_server("app.py", work / "server.log", ROOT, env=dict(os.environ)) as (base, server):
        paths = fetched_by_a_phone(base)
        port, before = urlsplit(base).port, h.tree_cpu_seconds(server.pid)
        phones = asyncio.run(arrivals(port, paths, args.phones, args.seconds))
        cpu = h.tree_cpu_seconds(server.pid) - before
        switched = switches(base, args.switches, args.cpu_slowdown)
    times, wire = [1000 * p[0] for p in phones], [p[1] for p in phones]
    statuses = sum((p[2] for p in phones), Counter())
    record = {"phones": args.phones, "seconds": args.seconds, "paths": paths, "server_cpu_s": cpu,
              "cpu_ms_per_phone": 1000 * cpu / args.phones, "wire_bytes_per_phone": statistics.median(wire),
              "phone_s": h.summary(times), "statuses": dict(statuses), "switch_ms": h.summary(switched),
              "switch_met": h.percentile(switched, 95) <= 100, "load_average": os.getloadavg()}
    print(f"{args.phones} phones over {args.seconds:.0f} s, {len(paths)} files each; load average "
          f"{os.getloadavg()[0]:.1f}\n  server CPU {cpu:.2f} s: {record['cpu_ms_per_phone']:.2f} ms a phone\n"
          f"  on the wire {record['wire_bytes_per_phone'] / 1024:.0f} KiB a phone\n"
          f"  {h.HEADER}\n  {h.fmt_row('a phone, every file', times)}\n  answers {dict(statuses)}: "
          f"{h.verdict(set(statuses) == {200})}\n  the residual switch at {args.cpu_slowdown:g}x slower CPU, input to "
          f"every chart drawn:\n  {h.fmt_row('switch', switched)}: {h.verdict(record['switch_met'])} (p95 <= 100 ms)")
    h.write_record(args.json, args, record)


if __name__ == "__main__":
    main()
