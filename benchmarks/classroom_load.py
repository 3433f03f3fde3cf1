"""A classroom on one server: N concurrent browser sessions at a human pace, for a bounded time.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.classroom_load                          # 40 sessions, 180 s
    .venv/bin/python -m benchmarks.classroom_load --seconds 120 --sessions 40 --json /tmp/class.json

It starts ``app.py`` itself (free localhost port, headless) and one headless Chromium (Debian's;
it resolves no host but localhost). 40 rendering Chromium pages alone saturate a 2-core machine
(measured: the browser took ~1.7 cores, 36 of 40 pages never finished loading, the server sat at
6 % CPU), so by default only ``--browser-sessions`` (4) are real pages, timed end to end; the other
sessions speak Streamlit's WebSocket protocol (testbed/protocol_client.py: every widget's value, the URL,
cached-message hashes, as the frontend sends them) and are timed from the rerun request to the
server's script_finished. ``--browser-sessions 40`` runs the all-browser variant.

First one browser page, then one protocol session, measure the interactions alone (the
single-user reference); then the sessions join one every ``--join-every`` seconds and each loops
until the deadline: pause 2-6 s (random), then the next of: residual toggle, depth slider one step
(arrow key, a bounded random walk), normalization toggle. Browser interactions are timed in the
page from the input event to the chart data changing (see harness.py). Errors counted:
``stException`` / exception elements, failed script runs, uncaught page errors, console errors,
interactions that time out, sessions that do not load.
Every 2 s the server's RSS (/proc/<pid>/status VmRSS) and CPU (/proc/<pid>/stat utime+stime)
are sampled, with the browser's CPU (every process below this one but the server) beside it:
on a 2-core machine the 40 pages' rendering competes with the server for the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import tempfile
import time
from pathlib import Path

from benchmarks import harness as h
from testbed.protocol_client import ProtocolSession

LOCAL_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"
LABELS: dict[str, str] = {}  # the English control labels of the measured app (filled in main)
CYCLE = ("residual", "depth", "norm")
INTERACTION_TIMEOUT_MS = 20_000
LOAD_TIMEOUT_MS = 60_000
# The page icon is a Material Symbol that the browser fetches from a font CDN on every rerun; this
# benchmark lets Chromium resolve no host but localhost, so that fetch fails with this text.
BLOCKED_ICON = "ERR_NAME_NOT_RESOLVED"


class Session:
    def __init__(self, number: int, browser, url: str, stats: dict, seed: int):
        self.number, self.browser, self.url, self.stats = number, browser, url, stats
        self.random = random.Random(seed * 1000 + number)
        self.depth = 24
        self.samples: list[dict] = []

    async def open(self) -> bool:
        self.context = await self.browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
        await self.context.add_init_script(h.INIT_SCRIPT)
        self.page = await self.context.new_page()
        self.page.set_default_timeout(INTERACTION_TIMEOUT_MS)
        self.page.on("pageerror", lambda e: self.stats["page_errors"].append(str(e)[:200]))
        self.page.on("console", self._console)
        start = time.monotonic()
        try:
            await self.page.goto(self.url + "/?lang=en", wait_until="commit", timeout=LOAD_TIMEOUT_MS)
            await self.page.wait_for_function("() => window.__bench.load.allCharts != null",
                                              timeout=LOAD_TIMEOUT_MS, polling=100)
        except Exception as error:  # noqa: BLE001 - counted, never fatal
            self.stats["load_errors"].append(f"session {self.number}: {error}"[:300])
            return False
        self.stats["loads_s"].append(time.monotonic() - start)
        return True

    def _console(self, message) -> None:
        if message.type != "error":
            return
        key = "blocked_icon_fetches" if BLOCKED_ICON in message.text else "console_errors"
        self.stats[key].append(message.text[:200])

    async def interact(self, kind: str) -> dict:
        page = self.page
        if kind == "depth":
            step = self.random.choice((-1, 1))
            if not 5 <= self.depth + step <= 60:
                step = -step
            self.depth += step
            label = json.dumps(LABELS["depth"])
            slider = page.locator(f"[role=slider][aria-label={label}], input[type=range][aria-label={label}]").first
            await slider.focus()
            act = page.keyboard.press("ArrowRight" if step > 0 else "ArrowLeft")
        else:
            target = page.get_by_text(LABELS[kind], exact=True)
            await target.scroll_into_view_if_needed()
            act = target.click()
        await page.evaluate(h.ARM)
        started = time.monotonic()
        await act
        try:
            await page.wait_for_function(h.DONE, timeout=INTERACTION_TIMEOUT_MS, polling=50)
            await page.evaluate(h.TWO_FRAMES)
            sample = h.sample_from(await page.evaluate(h.COLLECT)).__dict__
        except Exception as error:  # noqa: BLE001 - a timeout is a counted error
            sample = h.Sample(None, None, error=f"timeout after {time.monotonic() - started:.0f} s: "
                                                f"{type(error).__name__}").__dict__
        if await page.locator(h.EXCEPTION).count():
            sample["error"] = (sample["error"] or "") + " stException on the page"
        sample["kind"] = kind
        return sample

    async def run(self, deadline: float, pause: tuple[float, float], limit: int) -> None:
        for i in range(limit):
            wait = self.random.uniform(*pause)
            if time.monotonic() + wait >= deadline:
                break
            await asyncio.sleep(wait)
            try:
                sample = await self.interact(CYCLE[i % len(CYCLE)])
            except Exception as error:  # noqa: BLE001 - e.g. a locator timeout; counted, never fatal
                sample = {"first": None, "last": None, "kind": CYCLE[i % len(CYCLE)],
                          "error": f"{type(error).__name__}: {error}"[:200]}
            sample["at"] = time.monotonic()
            self.samples.append(sample)

    async def close(self) -> None:
        with contextlib.suppress(Exception):  # a context that is already gone
            await self.context.close()


class Student:
    """A session without a browser (protocol_client): the same loop, timed from the rerun request
    to the server's script_finished (server work + loopback; no drawing)."""

    def __init__(self, number: int, port: int, stats: dict, seed: int):
        self.number, self.stats = number, stats
        self.session = ProtocolSession(port)
        self.random = random.Random(seed * 1000 + number)
        self.values = {"residual": True, "norm": True, "depth": 24}
        self.samples: list[dict] = []

    async def open(self) -> bool:
        try:
            self.stats["protocol_loads_ms"].append(await self.session.connect(timeout=LOAD_TIMEOUT_MS / 1000))
        except Exception as error:  # noqa: BLE001 - counted, never fatal
            self.stats["load_errors"].append(f"student {self.number}: {type(error).__name__}: {error}"[:300])
            return False
        return True

    async def run(self, deadline: float, pause: tuple[float, float], limit: int) -> None:
        for i in range(limit):
            wait = self.random.uniform(*pause)
            if time.monotonic() + wait >= deadline:
                break
            await asyncio.sleep(wait)
            kind = CYCLE[i % len(CYCLE)]
            if kind == "depth":
                step = self.random.choice((-1, 1))
                if not 5 <= self.values["depth"] + step <= 60:
                    step = -step
                self.values["depth"] += step
            else:
                self.values[kind] = not self.values[kind]
            exceptions = self.session.exceptions
            sample: dict = {"kind": kind, "server_ms": None, "error": None}
            try:
                sample["server_ms"] = await self.session.rerun({kind: self.values[kind]},
                                                               timeout=INTERACTION_TIMEOUT_MS / 1000)
            except TimeoutError:
                sample["error"] = "timeout"
            except Exception as error:  # noqa: BLE001 - a failed run or a closed socket; counted
                sample["error"] = f"{type(error).__name__}: {error}"[:200]
            if self.session.exceptions > exceptions:
                sample["error"] = (sample["error"] or "") + " exception element"
            sample["at"] = time.monotonic()
            self.samples.append(sample)
            if sample["error"] and "closed" in sample["error"]:
                break

    async def close(self) -> None:
        await self.session.close()


async def sampler(server_pid: int, series: dict, stop: asyncio.Event, every: float = 2.0) -> None:
    """RSS and CPU of the server, CPU of the browser (every other process below this one), machine CPU."""
    me = os.getpid()
    for _ in range(100_000):
        if stop.is_set():
            break
        browser_cpu = 0.0
        for pid in h.descendants(me):
            if pid != server_pid:
                browser_cpu += h.cpu_seconds(pid) or 0.0
        busy, total = h.machine_cpu()
        series["t"].append(time.monotonic())
        series["rss"].append(h.rss_mb(server_pid))
        series["cpu"].append(h.cpu_seconds(server_pid))
        series["browser_cpu"].append(browser_cpu)
        series["browser_pss"].append(sum(h.pss_mb(p) or 0.0 for p in h.descendants(me) if p != server_pid))
        series["machine"].append((busy, total))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)


def new_stats() -> dict:
    return {"page_errors": [], "console_errors": [], "blocked_icon_fetches": [], "load_errors": [], "loads_s": [],
            "protocol_loads_ms": []}


async def solo(browser, url: str, seconds: float, seed: int) -> tuple[list[dict], list[dict], dict]:
    """One session alone, a brisk pace: the single-user reference for the same interactions, first
    in a browser page, then as a protocol session."""
    stats = new_stats()
    session = Session(0, browser, url, stats, seed)
    if await session.open():
        await session.run(time.monotonic() + seconds, (0.4, 0.8), limit=90)
    await session.close()
    student = Student(0, int(url.rsplit(":", 1)[1]), stats, seed)
    if await student.open():
        await student.run(time.monotonic() + seconds / 2, (0.2, 0.4), limit=60)
    await student.close()
    return session.samples, student.samples, stats


async def classroom(browser, url: str, server_pid: int, args) -> dict:
    stats = new_stats()
    series: dict = {"t": [], "rss": [], "cpu": [], "browser_cpu": [], "browser_pss": [], "machine": []}
    stop = asyncio.Event()
    sampling = asyncio.create_task(sampler(server_pid, series, stop))
    start = time.monotonic()
    deadline = start + args.seconds
    port = int(url.rsplit(":", 1)[1])
    # The browser pages join first, then the protocol sessions, one every join_every seconds.
    sessions: list = [Session(n + 1, browser, url, stats, args.seed) for n in range(args.browser_sessions)]
    sessions += [Student(n + 1, port, stats, args.seed) for n in range(args.browser_sessions, args.sessions)]

    async def student(session, delay: float) -> None:
        await asyncio.sleep(delay)
        if time.monotonic() < deadline and await session.open():
            await session.run(deadline, (args.pause_min, args.pause_max), limit=1000)

    await asyncio.gather(*(student(x, n * args.join_every) for n, x in enumerate(sessions)))
    end = time.monotonic()
    for s in sessions:
        await s.close()
    await asyncio.sleep(args.cooldown)  # the server after every session left
    stop.set()
    await sampling
    samples = [x for s in sessions if isinstance(s, Session) for x in s.samples]
    protocol = [x for s in sessions if isinstance(s, Student) for x in s.samples]
    return {"start": start, "end": end, "series": series, "samples": samples, "protocol": protocol, "stats": stats,
            "interacting": sum(1 for s in sessions if s.samples),
            "all_joined": start + (len(sessions) - 1) * args.join_every}


# --- report ---------------------------------------------------------------------------------------


def ok(samples: list[dict], field: str = "first") -> list[float]:
    return [s[field] for s in samples if s.get(field) is not None and not s.get("error")]


def slope_mb_per_min(t: list[float], rss: list[float]) -> float:
    n = len(t)
    if n < 2:
        return 0.0
    mt, mr = sum(t) / n, sum(rss) / n
    var = sum((x - mt) ** 2 for x in t)
    return 0.0 if var == 0 else 60 * sum((x - mt) * (y - mr) for x, y in zip(t, rss, strict=True)) / var


def report(solo_samples: list[dict], solo_protocol: list[dict], room: dict, args) -> dict:
    out: dict = {}
    print(f"\nsingle user: a browser page ({len(solo_samples)} interactions, pause 0.4-0.8 s), then a protocol "
          f"session ({len(solo_protocol)} reruns, pause 0.2-0.4 s)")
    print(h.HEADER)
    for kind in CYCLE:
        print(h.fmt_row(f"solo {kind} (first chart)", ok([s for s in solo_samples if s["kind"] == kind])))
    print(h.fmt_row("solo all (first chart)", ok(solo_samples)))
    print(h.fmt_row("solo all (every chart)", ok(solo_samples, "last")))
    print(h.fmt_row("solo protocol: rerun to script_finished", ok(solo_protocol, "server_ms")))
    samples, protocol = room["samples"], room["protocol"]
    full = [x for x in samples if x["at"] >= room["all_joined"]]
    errors = [s for s in samples + protocol if s.get("error")]
    print(f"\nclassroom: {args.sessions} sessions ({args.browser_sessions} Chromium pages, "
          f"{args.sessions - args.browser_sessions} protocol sessions) joining one every {args.join_every} s, "
          f"{args.seconds:.0f} s, pause {args.pause_min}-{args.pause_max} s; {room['interacting']} sessions interacted")
    print(h.HEADER)
    for kind in CYCLE:
        print(h.fmt_row(f"browser {kind} (first chart)", ok([s for s in samples if s["kind"] == kind])))
    print(h.fmt_row("browser all (first chart)", ok(samples)))
    print(h.fmt_row("browser all (every chart)", ok(samples, "last")))
    print(h.fmt_row("browser, all sessions joined (first chart)", ok(full)))
    print(h.fmt_row("browser, all sessions joined (every chart)", ok(full, "last")))
    for part in ("send", "server", "draw"):
        print(h.fmt_row(f"    {part}", ok(samples, part)))
    for kind in CYCLE:
        print(h.fmt_row(f"protocol {kind}: rerun to script_finished", ok([s for s in protocol if s["kind"] == kind],
                                                                          "server_ms")))
    print(h.fmt_row("protocol all: rerun to script_finished", ok(protocol, "server_ms")))
    loads = room["stats"]["loads_s"]
    if loads:
        print(h.fmt_row("browser session join: to every chart (s)", loads))
    if room["stats"]["protocol_loads_ms"]:
        print(h.fmt_row("protocol session join: first run", room["stats"]["protocol_loads_ms"]))

    def ratio(a: list[float], b: list[float]) -> float:
        return h.percentile(a, 95) / h.percentile(b, 95) if a and b else float("nan")

    first = ratio(ok(samples), ok(solo_samples))
    every = ratio(ok(samples, "last"), ok(solo_samples, "last"))
    server = ratio(ok(protocol, "server_ms"), ok(solo_protocol, "server_ms"))
    print(f"  p95 classroom / single user: browser first chart {first:.2f}, every chart {every:.2f}; "
          f"protocol rerun {server:.2f}   (target <= 2)")
    stats = room["stats"]
    n = len(samples) + len(protocol)
    print(f"\nerrors: {len(errors)} of {n} interactions "
          f"({sum(1 for e in errors if 'timeout' in e['error'])} timeouts, "
          f"{sum(1 for e in errors if 'stException' in e['error'] or 'exception element' in e['error'])} with an "
          f"exception shown); {len(stats['page_errors'])} uncaught page errors; "
          f"{len(stats['console_errors'])} console errors; {len(stats['load_errors'])} sessions that did not load")
    print(f"  (+ {len(stats['blocked_icon_fetches'])} failed fetches of the page icon from a font CDN, one per rerun "
          "in a browser page: the benchmark resolves no outside host)")
    for e in (errors[:3] + [{"error": x} for x in stats["console_errors"][:3] + stats["page_errors"][:3]
                            + stats["load_errors"][:3]]):
        print("   ", str(e.get("error"))[:200])
    out.update(solo_p95=h.percentile(ok(solo_samples), 95) if ok(solo_samples) else None,
               room_p95=h.percentile(ok(samples), 95) if ok(samples) else None, ratio_first=first,
               ratio_every=every, ratio_protocol=server, errors=len(errors), interactions=n)

    s = room["series"]
    t = [x - room["start"] for x in s["t"]]
    rss = [r or 0.0 for r in s["rss"]]
    during = [i for i, x in enumerate(s["t"]) if x <= room["end"]]
    last_half = [i for i in during if t[i] >= (room["end"] - room["start"]) / 2]
    peak = max(rss[i] for i in during)

    def pct(a: int, b: int, key: str, cores: bool = False) -> float:
        dt = s["t"][b] - s["t"][a]
        if cores:
            (b0, t0), (b1, t1) = s["machine"][a], s["machine"][b]
            return 100 * (b1 - b0) / max(1, t1 - t0)
        return 100 * ((s[key][b] or 0) - (s[key][a] or 0)) / dt if dt else 0.0

    first, last = during[0], during[-1]
    half = last_half[0]
    print(f"\nserver RSS (MB): start {rss[first]:.0f}, peak {peak:.0f}, end of run {rss[last]:.0f}, "
          f"after {args.cooldown:.0f} s with no session {rss[-1]:.0f}")
    growth = rss[last] - rss[half]
    rate = slope_mb_per_min([t[i] for i in last_half], [rss[i] for i in last_half])
    print(f"  last half of the run: {rss[half]:.0f} -> {rss[last]:.0f} MB ({growth:+.1f} MB; fit {rate:+.2f} MB/min)")
    print(f"CPU over the run (100 % = one core; the machine has {os.cpu_count()}): "
          f"server {pct(first, last, 'cpu'):.0f} %, browser {pct(first, last, 'browser_cpu'):.0f} %, "
          f"machine busy {pct(first, last, '', cores=True):.0f} % of all cores")
    print(f"  last half: server {pct(half, last, 'cpu'):.0f} %, browser {pct(half, last, 'browser_cpu'):.0f} %; "
          f"browser memory (PSS) peak {max(s['browser_pss']) / 1024:.1f} GB")
    out.update(rss_start=rss[first], rss_peak=peak, rss_end=rss[last], rss_after=rss[-1],
               rss_last_half_growth=growth, rss_rate=rate)
    return out


async def main_async(args) -> None:
    from playwright.async_api import async_playwright

    logs = Path(tempfile.mkdtemp(prefix="blockstab-classroom-"))
    options = f" with {' '.join(args.option)}" if args.option else ""
    print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}{options}")
    extra = tuple(x for o in args.option for x in ("--" + o.split("=", 1)[0], o.split("=", 1)[1]))
    with h.streamlit_server("app.py", logs / "server.log", extra) as (url, server), h.ForeignLoad() as foreign:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=h.CHROMIUM, args=[*h.CHROMIUM_ARGS, LOCAL_ONLY])
            solo_samples, solo_protocol, _ = await solo(browser, url, args.solo_seconds, args.seed)
            room = await classroom(browser, url, server.pid, args)
            await browser.close()
        result = report(solo_samples, solo_protocol, room, args)
    print(foreign.summary())
    result["foreign_cpu_mean"] = sum(foreign.samples) / max(1, len(foreign.samples))
    print(f"server log: {logs / 'server.log'}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        record = {"args": {k: str(v) for k, v in vars(args).items()}, "summary": result, "solo": solo_samples,
                  "solo_protocol": solo_protocol, "room": room}
        args.json.write_text(json.dumps(record, indent=1, default=str))
        print(f"samples: {args.json}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=40, help="sessions in all (browser pages included)")
    parser.add_argument("--browser-sessions", type=int, default=4,
                        help="how many of them are real Chromium pages (the rest speak the protocol); default 4")
    parser.add_argument("--seconds", type=float, default=180.0, help="classroom phase, joining included")
    parser.add_argument("--solo-seconds", type=float, default=45.0, help="single-user reference phase")
    parser.add_argument("--join-every", type=float, default=0.5, help="seconds between two sessions joining")
    parser.add_argument("--pause-min", type=float, default=2.0)
    parser.add_argument("--pause-max", type=float, default=6.0)
    parser.add_argument("--cooldown", type=float, default=20.0, help="sampling after every session left")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--app-root", type=Path, help="measure the app in this checkout / snapshot (default: this one)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a Streamlit option for the server, e.g. runner.postScriptGC=false (repeatable)")
    args = parser.parse_args()
    h.use_app_root(args.app_root)
    en = h.app_catalog()
    LABELS.update(residual=en["control.residual"], norm=en["control.norm"], depth=en["control.depth"])
    args.sessions = max(1, min(args.sessions, 200))
    args.browser_sessions = max(0, min(args.browser_sessions, args.sessions))
    args.seconds = max(10.0, min(args.seconds, 3600.0))
    args.solo_seconds = max(5.0, min(args.solo_seconds, 600.0))
    h.check_chromium()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
