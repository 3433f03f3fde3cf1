"""Shared pieces of the browser benchmarks: servers, Chromium, in-page timing probes, /proc sampling.

Nothing here is a test. Every wait is bounded in time and every loop in count; all traffic stays on
127.0.0.1 / localhost. Chromium is Debian's ``/usr/bin/chromium`` (never a download).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from testbed import local_server
from testbed.local_server import CHROMIUM, CHROMIUM_ARGS  # noqa: F401 - the scripts use them as h.CHROMIUM...

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(__file__).resolve().parent
BASELINE_APP = str(BENCHMARKS / "baseline_app.py")
# The checkout whose app is measured (``--app-root``): by default this one. Point it at a snapshot
# (``git archive <commit> | tar -x -C DIR``) to measure a fixed commit while the tree changes.
APP_ROOT = ROOT
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
EXCEPTION = "[data-testid=stException]"
CLK_TCK = os.sysconf("SC_CLK_TCK")

# Installed in every page before any of its scripts (context.add_init_script):
# * the first mousedown / keydown after arm() stamps ``t0`` with performance.now() (capture phase, so
#   before any app handler runs);
# * the WebSocket is wrapped to stamp every frame sent and received (time, size), to split a latency
#   into "before the request left", "server" and "drawing";
# * a requestAnimationFrame probe stamps the first-load milestones (performance.now() counts from the
#   navigation's start): first chart drawn, first h1, first idle with an h1, every chart drawn.
INIT_SCRIPT = """
(() => {
  const B = window.__bench = {t0: null, armed: false, ws: [], load: {}, gen: 0};
  const onInput = e => { if (B.armed && B.t0 === null) { B.t0 = performance.now(); B.t0type = e.type; } };
  window.addEventListener('mousedown', onInput, true);
  window.addEventListener('keydown', onInput, true);
  const size = d => (d && (d.byteLength ?? d.size ?? d.length)) || 0;
  const Native = window.WebSocket;
  class Tapped extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', ev => {
        if (B.ws.length < 5000) B.ws.push([performance.now(), 'r', size(ev.data)]);
      });
    }
    send(data) {
      if (B.ws.length < 5000) B.ws.push([performance.now(), 's', size(data)]);
      return super.send(data);
    }
  }
  window.WebSocket = Tapped;
  const drawn = gd => !!(gd && gd._fullData && gd.querySelector('.main-svg'));
  const probe = () => {
    const now = performance.now(), L = B.load;
    const plots = [...document.querySelectorAll('.js-plotly-plot')];
    if (L.firstChart == null && plots.length && drawn(plots[0])) L.firstChart = now;
    if (L.h1 == null && document.querySelector('h1')) L.h1 = now;
    const app = document.querySelector('[data-testid=stApp]');
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning';
    if (L.idleH1 == null && L.h1 != null && idle) L.idleH1 = now;
    if (idle && plots.length && plots.every(drawn)) { L.allCharts = L.allCharts ?? now; L.charts = plots.length; }
    if (now < 60000 && (L.firstChart == null || L.idleH1 == null || L.allCharts == null)) requestAnimationFrame(probe);
  };
  requestAnimationFrame(probe);
})();
"""

# A fingerprint of every chart's drawn data (x and y of every trace of _fullData), compared each
# animation frame after arm(); ``changed[i]`` is the performance.now() of the frame where chart i
# first showed other data. Charts are found by their Streamlit key (``st-key-*`` container; the
# instant Explorer's three by their place in its one container), not by position on the page:
# Streamlit remounts a chart whose spec changed (a new div), and while it does, the positions shift.
# A chart that is not drawn (no _fullData) has no fingerprint and is never "changed".
# The loop stops at collect() or after 30 s.
ARM = """() => {
  const B = window.__bench;
  const fp = gd => {
    if (!gd || !gd._fullData) return null;
    let s = '';
    for (const t of gd._fullData) s += '|' + Array.prototype.join.call(t.x || [], ',') + ';'
                                         + Array.prototype.join.call(t.y || [], ',');
    return s;
  };
  const where = [...document.querySelectorAll('.js-plotly-plot')].map((gd, i) => {
    const box = gd.closest('[class*="st-key-"]');
    const key = box && [...box.classList].find(c => c.startsWith('st-key-'));
    return key ? ['.' + CSS.escape(key) + ' .js-plotly-plot', [...box.querySelectorAll('.js-plotly-plot')].indexOf(gd)]
               : i;
  });
  const find = w => typeof w === 'number' ? document.querySelectorAll('.js-plotly-plot')[w]
                                          : document.querySelectorAll(w[0])[w[1]];
  const gen = ++B.gen;
  B.base = where.map(w => fp(find(w)));
  B.changed = B.base.map(() => null);
  B.t0 = null; B.ws = []; B.armedAt = performance.now(); B.armed = true;
  const loop = () => {
    if (B.gen !== gen || !B.armed) return;
    const now = performance.now();
    for (let i = 0; i < where.length; i++) {
      if (B.changed[i] !== null) continue;
      const f = fp(find(where[i]));
      if (f !== null && f !== B.base[i]) B.changed[i] = now;
    }
    if (now - B.armedAt > 30000) { B.armed = false; return; }
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  return B.base.length;
}"""
# Done: some chart changed and the script is idle (a Plotly-only change never leaves idle).
DONE = """() => { const B = window.__bench; const a = document.querySelector('[data-testid=stApp]');
  return B.changed && B.changed.some(c => c !== null)
    && a && a.getAttribute('data-test-script-state') === 'notRunning'; }"""
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
COLLECT = """() => { const B = window.__bench; B.armed = false;
  return {t0: B.t0, t0type: B.t0type || null, changed: B.changed, ws: B.ws}; }"""
LOAD = "() => window.__bench.load"


@dataclass
class Sample:
    """One interaction: input-to-chart-change latency (ms) and where the time went."""

    first: float | None  # first chart whose data changed
    last: float | None  # last chart that changed (all charts of the page up to date)
    send: float | None = None  # input -> first WebSocket frame sent (client side, before the request)
    server: float | None = None  # first frame sent -> last frame received before the first chart change
    draw: float | None = None  # that last frame -> first chart changed
    recv_bytes: int = 0
    done: float | None = None  # input -> last WebSocket frame received (the script's end)
    charts: list = field(default_factory=list)  # input -> each chart's change (None: unchanged)
    error: str | None = None


def sample_from(raw: dict) -> Sample:
    t0 = raw.get("t0")
    changed = [c for c in (raw.get("changed") or []) if c is not None]
    if t0 is None:
        return Sample(None, None, error="no input event seen")
    if not changed:
        return Sample(None, None, error="chart never changed")
    first, last = min(changed), max(changed)
    ws = [w for w in raw.get("ws") or [] if w[0] >= t0]
    sent = [w[0] for w in ws if w[1] == "s"]
    before = [w[0] for w in ws if w[1] == "r" and w[0] <= first]
    received = [w[0] for w in ws if w[1] == "r"]
    s = Sample(first - t0, last - t0, recv_bytes=int(sum(w[2] for w in ws if w[1] == "r")),
               done=max(received) - t0 if received else None,
               charts=[None if c is None else round(c - t0, 1) for c in raw["changed"]])
    if sent:
        s.send = sent[0] - t0
        if before:
            s.server = max(before) - sent[0]
            s.draw = first - max(before)
    return s


def measure(page, action, timeout_ms: int = 15_000) -> Sample:
    """Arm the probe, perform ``action()`` (a click or key press), wait (bounded) for the change."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate(ARM)
    action()
    try:
        page.wait_for_function(DONE, timeout=timeout_ms, polling=50)
    except PlaywrightTimeout:
        raw = page.evaluate(COLLECT)
        s = sample_from(raw)
        s.error = "timeout" + (f" ({s.error})" if s.error else "")
        return s
    page.evaluate(TWO_FRAMES)
    return sample_from(page.evaluate(COLLECT))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 100)))  # ceil(q/100 * n), at least 1
    return ordered[min(rank, len(ordered)) - 1]


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": min(values), "median": statistics.median(values),
            "p95": percentile(values, 95), "max": max(values)}


def fmt_row(name: str, values: list[float]) -> str:
    s = summary(values)
    if not s["n"]:
        return f"{name:<44}{'n=0':>6}"
    return (f"{name:<44}{s['n']:>6}{s['min']:>9.1f}{s['median']:>9.1f}{s['p95']:>9.1f}{s['max']:>9.1f}")


HEADER = f"{'':<44}{'n':>6}{'min':>9}{'median':>9}{'p95':>9}{'max':>9}   (ms)"


# --- servers ------------------------------------------------------------------------------------


@contextlib.contextmanager
def streamlit_server(script: str, log_path: Path, extra: tuple[str, ...] = ()):
    """``streamlit run <script>`` from APP_ROOT (its .streamlit/config.toml applies) on a free
    localhost port; yields (url, Popen). The server start is the browser tests' (testbed/local_server.py)."""
    try:
        with local_server.streamlit_server(script, log_path, APP_ROOT, extra) as running:
            yield running
    except local_server.ServerFailed as error:
        raise RuntimeError(str(error)) from None


def write_record(path: Path | None, args, record: dict) -> None:
    """Write a run's ``record`` with its arguments as JSON to ``path`` (``--json``), if given."""
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, **record}, indent=1,
                                   default=str))
        print(f"numbers: {path}")


def use_app_root(path: Path | None) -> Path:
    """Measure the app in ``path`` (a checkout or snapshot with app.py) instead of this checkout."""
    global APP_ROOT
    if path is not None:
        path = path.resolve()
        if not (path / "app.py").exists():
            sys.exit(f"{path}/app.py not found")
        APP_ROOT = path
    return APP_ROOT


def app_catalog(lang: str = "en") -> dict[str, str]:
    """The measured app's catalog in ``lang`` (the labels its pages show, to find controls by)."""
    return json.loads((APP_ROOT / "ui" / "locales" / f"{lang}.json").read_text(encoding="utf-8"))


def git_state(path: Path) -> str:
    """Commit and dirtiness of ``path`` (read-only git calls), or what the snapshot says."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            raise OSError(head.stderr)
        dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        marker = path / "SNAPSHOT"
        return marker.read_text().strip() if marker.exists() else "not a git checkout"


class ForeignLoad:
    """CPU used on this machine by processes that are not this one or its children (another test
    run, say), sampled every second in a thread: a benchmark sharing 2 cores must say so. Summed per
    process over the processes alive at both ends of each second, so an exiting browser tab of ours
    is never mistaken for foreign work."""

    def __init__(self):
        import threading

        self.samples: list[float] = []  # cores busy with foreign work, per second
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _foreign() -> dict[int, float]:
        me = os.getpid()
        mine = {me, *descendants(me)}
        out = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) not in mine:
                cpu = cpu_seconds(int(entry.name))
                if cpu is not None:
                    out[int(entry.name)] = cpu
        return out

    def _run(self) -> None:
        before, t0 = self._foreign(), time.monotonic()
        for _ in range(100_000):
            if self._stop.wait(1.0):
                break
            after, t1 = self._foreign(), time.monotonic()
            used = sum(after[p] - before[p] for p in after.keys() & before.keys())
            self.samples.append(max(0.0, used / max(1e-6, t1 - t0)))
            before, t0 = after, t1

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)

    def summary(self) -> str:
        if not self.samples:
            return "foreign CPU: not sampled"
        mean = statistics.mean(self.samples)
        busy = sum(1 for s in self.samples if s > 0.25)
        note = "" if mean < 0.1 else "  WARNING: other work shared the cores; figures are inflated"
        return (f"foreign CPU (not this benchmark): mean {mean:.2f} cores, max {max(self.samples):.2f}, "
                f"{busy} of {len(self.samples)} s above 0.25 core{note}")


def ours_then_baseline(measure, baseline: Path | None) -> None:
    """``measure(root)`` (a coroutine function) for this checkout, then for the ``baseline``
    snapshot if given: each result printed as JSON beside the foreign CPU it ran with."""
    for name, root in (("ours", ROOT), ("baseline", baseline)):
        if root is not None:
            with ForeignLoad() as load:
                result = asyncio.run(measure(root))
            print(name, json.dumps(result | {"machine": load.summary()}, indent=1), flush=True)


def verdict(ok: bool) -> str:
    """A target's verdict as the reports print it."""
    return "met" if ok else "MISSED"


def log_problems(path: Path) -> list[str]:
    """The server log's lines that speak of a problem."""
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    return [x[:200] for x in lines if re.search(r"Traceback|Error|Exception|WARNING|CRITICAL", x)]


def check_chromium() -> None:
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium (a browser is never downloaded)")


# --- /proc sampling -------------------------------------------------------------------------------


def block_ranges_built(base: str, bundle: str | None = None, tens_url: str | None = None) -> int | None:
    """How many block ranges of a sentence the app at ``base`` has built, from the Explorer's
    ``bundle`` address (its index) or, in an app from before the bundles, its ``tens_url`` (its
    ``built.json``); ``None`` when the page named neither."""
    from ui.bundle import read_part  # noqa: PLC0415 - this checkout's reader

    try:
        if bundle:
            with urllib.request.urlopen(f"{base}{bundle}index.js?read={time.monotonic()}", timeout=5) as response:
                index = read_part(response.read().decode("ascii"))
            return sum(name.startswith("blocks-") for name in index["built"])
        if tens_url:
            with urllib.request.urlopen(f"{base}{tens_url}built.json", timeout=5) as response:
                return len(json.loads(response.read()))
    except OSError:
        return 0
    return None


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def pss_mb(pid: int) -> float | None:
    """Proportional set size (shared pages split between their users): sums across processes."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_seconds(pid: int, reaped: bool = False) -> float | None:
    """utime + stime of one process, in seconds; with ``reaped``, also the time of its children that
    ended and that it waited for (cutime + cstime)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return sum(int(f) for f in fields[11:15 if reaped else 13]) / CLK_TCK


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and every process below it, those that ended included: a worker that ends
    between two readings takes its time with it from the live processes, into its parent's reaped time."""
    return sum(cpu_seconds(p, reaped=True) or 0.0 for p in (root, *descendants(root)))


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (from /proc/*/stat parent ids)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo and len(out) < 10_000:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    parts = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return sum(parts) - idle, sum(parts)


@dataclass
class ProcSeries:
    t: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # cumulative CPU seconds
