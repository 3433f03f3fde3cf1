"""Past one process (issue #37): 1 replica against 2 behind HAProxy, and a replica killed under 20 sessions.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.cluster --json /tmp/cluster.json            # the full run (~16 min)
    .venv/bin/python -m benchmarks.cluster --sessions 10 --browser-sessions 1 --seconds 40 \\
        --kill-sessions 6 --kill-browser-pages 2                             # a quick look

Every cluster is the project's own ``scripts/serve_cluster.sh --replicas N`` (HAProxy with
deploy/haproxy.cfg, Redis, N app processes), started on a free port with HAProxy's per-address limits
raised (``BLOCKSTAB_CONNECTIONS_PER_ADDRESS``, ``BLOCKSTAB_CONNECTION_RATE``), as every session here
comes from 127.0.0.1; stopped with SIGTERM.

1. **1 replica against 2, the same script.** For each ``--sessions`` (40, 80) and each ``--replicas``
   (1, 2): a fresh cluster, each replica warmed by one session (the lesson's bundle built) until its
   CPU is quiet, then the classroom mix of ``classroom_load.py`` for ``--seconds``: the scripted sessions
   (testbed/protocol_client.py; each first fetches the page, as a browser does, and keeps the affinity cookie
   HAProxy sets on it for its WebSocket and its bundle fetch) plus ``--browser-sessions`` (4) headless
   Chromium pages, joining one every ``--join-every`` s, each toggling the residual, stepping the depth
   and toggling the normalization, 2-6 s apart. Per configuration: errors (failed or timed-out
   interactions, exception elements, sessions that did not load, page and console errors, HTTP errors in
   HAProxy's log), misrouted requests (HAProxy's log: a request carrying one replica's cookie served by
   another; beside them the bundle fetches answered 404 and the replicas marked down), the server p95 per
   interaction (a scripted session's rerun request to its script_finished, through HAProxy), Chromium's
   p95 (input to first chart changed, and to the report-back's last frame), and the CPU of each replica,
   HAProxy, Redis, Chromium and this process. The ratio 2-replica/1-replica
   of the server p95 is reported at each size.
2. **The kill test.** A fresh 2-replica cluster: on replica 1 (pinned by its affinity cookie)
   ``--kill-sessions`` (20) Explorer sessions opened from a link with a view in it (every other one
   then moved the depth one step, as a student who used it; the others only opened their link). Of the
   20, ``--kill-browser-pages`` (4) are Chromium pages, which
   reconnect with Streamlit's own frontend; the rest are scripted sessions that mimic that frontend's
   reconnect as Streamlit 1.67's code does it (wait 250-500 ms, ping /_stcore/health and host-config
   with the cookie, backing off; open a new WebSocket with the cookie HAProxy gave back; ask for a run of
   the page with the old widget values only when the frontend would: a page whose last run was a
   fragment's). Replica 1 is SIGKILLed. Per affected
   session: the time from the kill to its new WebSocket being open on replica 2, and to the first run
   there having finished with the "new session" line and the view of its URL (the same URL
   and the instant Explorer's view equal to it). A page that asks for no run on reconnecting is back when its
   socket is; its next touch is then
   checked (said "new session", shows its URL's view, kept the touch). Target: recovery p95 <= 10 s. (A live
   class on the cluster, its students on the light page of /join: ``benchmarks/live_class.py --cluster``.)
3. ``--json PATH`` writes every number; a summary is printed.

The machine has 2 cores, shared by the replicas, HAProxy, Redis, Chromium and the scripted sessions of
this process: what a second replica buys here is a second Python process (a second GIL) on the second
core, not a core of its own. Other work on the machine is sampled and reported (harness.ForeignLoad).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import websockets

from benchmarks import classroom_load
from benchmarks import harness as h
from testbed import local_server
from testbed.local_server import free_port
from testbed.protocol_client import INSTANT, ProtocolSession
from ui.text import Text

COOKIE = "BLOCKSTAB_REPLICA"
LINE = re.compile(r"replica (\d+) pid (\d+) port (\d+)")
# Every session comes from 127.0.0.1: HAProxy's per-address limits raised (the limits themselves are measured
# elsewhere; the app's own are sized for a class behind one address and stay at their defaults).
SETTINGS = {"BLOCKSTAB_CONNECTIONS_PER_ADDRESS": "100000", "BLOCKSTAB_CONNECTION_RATE": "100000"}
NEW_SESSION = Text("en")("app.new_session")
RECOVER_S = 60.0  # the longest a session is waited for after the kill
QUIET_S = 90.0  # the longest a warm-up waits for the replicas to be quiet
# HAProxy's httplog line: the server that answered, its timers (TR/Tw/Tc/Tr/Ta), the status, the request's
# captured cookie, the termination state and the request line.
HTTPLOG = re.compile(r"\] \S+ (?P<backend>[^/\s]+)/(?P<server>\S+) (?P<timers>\S+) (?P<status>-?\d+) \S+ "
                     r"(?P<cookie>\S+) \S+ (?P<state>\S{4}) .*\"(?P<request>[^\"]*)\"$")
PROBE = re.compile(r"^\S+ /[^/\s]+/_stcore/(health|host-config)")  # a deep link's first probes: 404 by design


# --- the cluster ----------------------------------------------------------------------------------


@dataclass
class Cluster:
    port: int
    replicas: dict[int, tuple[int, int]]  # replica -> (pid, port)
    redis_url: str
    run: Path  # serve_cluster.sh's folder of logs (removed when it stops)
    process: subprocess.Popen
    haproxy_pid: int = 0
    redis_pid: int = 0
    tls: ssl.SSLContext | None = None  # HTTPS on the port (--tls), its certificate trusted by this context
    plain_port: int | None = None  # with ``plain_beside``: a second HAProxy, plain HTTP, before the same replicas

    @property
    def base(self) -> str:
        return f"{'https' if self.tls else 'http'}://localhost:{self.port}"

    def log(self) -> list[str]:
        path = self.run / "haproxy.log"
        return path.read_text(errors="replace").splitlines() if path.exists() else []

    def tree(self) -> set[int]:
        return {self.process.pid, *h.descendants(self.process.pid)}


@contextlib.contextmanager
def cluster(replicas: int, logs: Path, name: str, tls: bool = False, settings: dict[str, str] | None = None,
            plain_beside: bool = False):
    """``scripts/serve_cluster.sh --replicas N`` on a free port, with ``settings`` its only BLOCKSTAB_ variables
    (:data:`SETTINGS` unless given; ``{}``: every limit its default) (and ``tls``: ``--tls`` with a self-signed
    certificate made in ``logs``); its logs are copied to ``logs`` before it is stopped (SIGTERM), as the script
    removes them. ``plain_beside`` (with ``tls``): a second HAProxy from the script's own configuration, without
    the certificate, before the same replicas (a class split between HTTPS and plain HTTP then meets every lead
    on both at once)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOCKSTAB_")} | (
        SETTINGS if settings is None else settings)
    pem = local_server.self_signed_pem(Path(tempfile.mkdtemp(prefix=f"{name}-tls-", dir=logs))) if tls else None
    with open(logs / f"{name}-serve_cluster.log", "w") as errors:
        process = subprocess.Popen(["bash", "scripts/serve_cluster.sh", "--replicas", str(replicas),
                                    "--port", str(port), *(("--tls", str(pem)) if pem else ())], cwd=h.APP_ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
    found: dict = {"replicas": {}}
    for line in process.stdout:  # the script's own waits are bounded (60 s each); EOF if it fails
        line = line.strip()
        if match := LINE.fullmatch(line):
            found["replicas"][int(match[1])] = int(match[2]), int(match[3])
        elif line.startswith("redis pid"):
            found["redis_pid"], found["redis_port"] = int(line.split()[2]), int(line.split()[4])
        elif line.startswith("haproxy pid"):
            found["haproxy_pid"] = int(line.split()[2])
            found["run"] = Path(re.search(r"\(logs in (\S+)\)", line)[1])
            break
    if len(found["replicas"]) != replicas or "run" not in found:
        process.kill()
        raise RuntimeError(f"the cluster did not start: {(logs / f'{name}-serve_cluster.log').read_text()[-2000:]}")
    running = Cluster(port, found["replicas"], f"redis://127.0.0.1:{found['redis_port']}/0", found["run"], process,
                      found["haproxy_pid"], found["redis_pid"], ssl.create_default_context(cafile=pem) if pem else None)
    beside = None
    try:
        if plain_beside:
            running.plain_port = free_port()
            plain_env = env | {"BLOCKSTAB_BIND": f"127.0.0.1:{running.plain_port}"}
            with open(logs / f"{name}-plain-haproxy.log", "w") as log:
                beside = subprocess.Popen(["haproxy", "-db", "-f", str(running.run / "haproxy.cfg")], env=plain_env,
                                          stdout=log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 30
            while not local_server.healthy(f"http://127.0.0.1:{running.plain_port}/_stcore/health"):
                if beside.poll() is not None or time.monotonic() > deadline:
                    said = (logs / f"{name}-plain-haproxy.log").read_text()
                    raise RuntimeError(f"the plain HAProxy did not start: {said}")
                time.sleep(0.1)
        yield running
    finally:
        if beside is not None:
            local_server.stop(beside, grace=10)
        for path in running.run.glob("*.log"):
            with contextlib.suppress(OSError):
                shutil.copy(path, logs / f"{name}-{path.name}")
        local_server.stop(process, grace=60)  # (the script stops what it started first)


def http_get(port: int, path: str, cookie: str = "") -> tuple[int, str]:
    """GET ``path`` through HAProxy with ``cookie`` (``NAME=value``): (status, the affinity cookie as the
    browser would hold it afterwards). Status 0: no answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = connection.getresponse()
        response.read()
    except OSError:
        return 0, cookie
    finally:
        connection.close()
    for value in response.headers.get_all("Set-Cookie") or []:
        if value.startswith(COOKIE + "="):
            cookie = value.split(";", 1)[0]
    return response.status, cookie


# The sessions' HTTP requests, each in a thread of its own (asyncio's default pool has cores + 4 threads: 16
# sessions pinging a dead replica at once, each request held about a second by HAProxy's retry, queued there).
FETCHERS = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="fetch")


async def fetch(port: int, path: str, cookie: str = "") -> tuple[int, str]:
    """:func:`http_get` without blocking the sessions or waiting for another's request."""
    return await asyncio.get_running_loop().run_in_executor(FETCHERS, http_get, port, path, cookie)


def replica_of(cookie: str) -> int | None:
    match = re.fullmatch(COOKIE + r"=r(\d+)", cookie or "")
    return int(match[1]) if match else None


def read_log(lines: list[str], killed: int | None = None) -> dict:
    """HAProxy's log: requests, those with an affinity cookie, misrouted ones (a replica's cookie, another
    replica's answer; with ``killed``, those of the killed replica's cookie are counted as redispatched),
    HTTP errors, termination states."""
    out = {"requests": 0, "with_cookie": 0, "misrouted": 0, "redispatched": 0, "http_errors": 0, "bundle_404": 0,
           "slow_answers": 0,
           "by_server": {}, "states": {}, "misrouted_lines": [], "error_lines": []}
    out["marked_down"] = [line[:160] for line in lines if line.startswith("Server ") and " is DOWN" in line]
    for line in lines:
        match = HTTPLOG.search(line)
        if match is None:
            continue
        out["requests"] += 1
        server, status = match["server"], int(match["status"])
        out["by_server"][server] = out["by_server"].get(server, 0) + 1
        out["states"][match["state"]] = out["states"].get(match["state"], 0) + 1
        wanted = replica_of(match["cookie"])
        if wanted is not None:
            out["with_cookie"] += 1
            if server != f"replica{wanted}":
                if wanted == killed:
                    out["redispatched"] += 1
                else:
                    out["misrouted"] += 1
                    out["misrouted_lines"].append(line[-300:])
        if status == 404 and "/api/bundles/" in match["request"]:
            out["bundle_404"] += 1  # a fetch that reached a replica without its session (named by another's key)
        if int(match["timers"].split("/")[3]) > 1000:
            out["slow_answers"] += 1  # a replica that took over a second to answer (e.g. its health check)
        if status >= 500 or status < 0 or (400 <= status < 500 and not PROBE.match(match["request"])):
            out["http_errors"] += 1
            out["error_lines"].append(line[-300:])
    out["misrouted_lines"], out["error_lines"] = out["misrouted_lines"][:10], out["error_lines"][:10]
    return out


# What Streamlit says in a replica's worker processes (Depth lab, bundle builds), which import it bare: not a problem.
BARE = re.compile(r"missing ScriptRunContext|Session state does not function when running a script without"
                  r"|WARNING streamlit: *$")


def replica_problems(logs: Path, name: str) -> list[str]:
    """The replicas' log lines that speak of a problem."""
    return [f"{path.name}: {x}" for path in sorted(logs.glob(f"{name}-replica*.log"))
            for x in h.log_problems(path) if not BARE.search(x)][:20]


# --- CPU and memory -------------------------------------------------------------------------------


def cpu_now(running: Cluster) -> dict[str, float]:
    """CPU seconds so far: each replica (with its worker processes), HAProxy, Redis, Chromium (every other
    process below this one) and this process (the scripted sessions)."""
    me, out, cluster_tree = os.getpid(), {}, running.tree()
    for n, (pid, _) in running.replicas.items():
        out[f"replica{n}"] = h.tree_cpu_seconds(pid)
    out["haproxy"] = h.cpu_seconds(running.haproxy_pid) or 0.0
    out["redis"] = h.cpu_seconds(running.redis_pid) or 0.0
    out["chromium"] = sum(h.cpu_seconds(p) or 0.0 for p in h.descendants(me) if p not in cluster_tree)
    out["benchmark"] = h.cpu_seconds(me) or 0.0
    return out


@dataclass
class Usage:
    """CPU of each part (% of one core) and each replica's RSS, sampled every 2 s between start and stop."""

    running: Cluster
    t: list[float] = field(default_factory=list)
    cpu: list[dict] = field(default_factory=list)
    machine: list[tuple[float, float]] = field(default_factory=list)
    rss: list[dict] = field(default_factory=list)

    def sample(self) -> None:
        self.t.append(time.monotonic())
        self.cpu.append(cpu_now(self.running))
        self.machine.append(h.machine_cpu())
        self.rss.append({n: h.rss_mb(pid) or 0.0 for n, (pid, _) in self.running.replicas.items()})

    async def run(self, stop: asyncio.Event) -> None:
        for _ in range(100_000):
            self.sample()
            if stop.is_set():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 2.0)

    def summary(self) -> dict:
        elapsed = self.t[-1] - self.t[0]
        busy = 100 * (self.machine[-1][0] - self.machine[0][0]) / max(1, self.machine[-1][1] - self.machine[0][1])
        return {"seconds": elapsed, "machine_busy_percent": busy,
                "cpu_percent": {k: 100 * (self.cpu[-1][k] - self.cpu[0][k]) / max(elapsed, 1e-6) for k in self.cpu[0]},
                "rss_peak_mb": {f"replica{n}": max(r[n] for r in self.rss) for n in self.rss[0]}}


async def quiet(running: Cluster, below: float = 0.1, every: float = 2.0) -> float:
    """Wait (at most :data:`QUIET_S`) until no replica used more than ``below`` core over ``every`` s: the
    seconds waited."""
    start = time.monotonic()
    before = cpu_now(running)
    while time.monotonic() - start < QUIET_S:
        await asyncio.sleep(every)
        after = cpu_now(running)
        if all((after[k] - before[k]) / every < below for k in after if k.startswith("replica")):
            break
        before = after
    return time.monotonic() - start


# --- 1. one replica against two -------------------------------------------------------------------


class Student(classroom_load.Student):
    """classroom_load's scripted session, through HAProxy as a browser comes: the page first (HAProxy sets
    the affinity cookie on it), the WebSocket with that cookie, then the Explorer's bundle index."""

    def __init__(self, number: int, port: int, stats: dict, seed: int):
        super().__init__(number, port, stats, seed)
        self.port, self.cookie = port, ""

    async def open(self) -> bool:
        status, self.cookie = await fetch(self.port, "/?lang=en")
        if status != 200 or not self.cookie:
            self.stats["load_errors"].append(f"student {self.number}: the page answered {status} without a cookie")
            return False
        self.session.headers["Cookie"] = self.cookie
        if not await super().open():
            return False
        bundle = json.loads(self.session.component_bytes or b"{}").get("bundle")
        status, _ = await fetch(self.port, f"{bundle}index.js", self.cookie)
        if status != 200:
            self.stats["load_errors"].append(f"student {self.number}: its bundle's index answered {status}")
        return True


async def warm(running: Cluster) -> dict:
    """One session per replica (pinned by its cookie) opens the Explorer and changes each control once; then
    the replicas are left until quiet (their block ranges built in the background)."""
    took = {}
    for n in running.replicas:
        session = ProtocolSession(running.port)
        session.headers["Cookie"] = f"{COOKIE}=r{n}"
        start = time.monotonic()
        await session.connect(timeout=120)
        for kind, value in (("residual", False), ("depth", 25), ("norm", False)):
            await session.rerun({kind: value}, timeout=60)
        await session.close()
        took[f"replica{n}"] = time.monotonic() - start
    took["quiet_after"] = await quiet(running)
    return took


async def room(browser, running: Cluster, sessions: int, args) -> dict:
    """The classroom mix through HAProxy for ``--seconds``: Chromium pages first, then scripted sessions."""
    stats = classroom_load.new_stats()
    usage, stop = Usage(running), asyncio.Event()
    sampling = asyncio.create_task(usage.run(stop))
    start = time.monotonic()
    deadline = start + args.seconds
    pages: list = [classroom_load.Session(n + 1, browser, running.base, stats, args.seed)
                   for n in range(args.browser_sessions)]
    pages += [Student(n + 1, running.port, stats, args.seed)
              for n in range(args.browser_sessions, args.browser_sessions + sessions)]

    async def one(session, delay: float) -> None:
        await asyncio.sleep(delay)
        if time.monotonic() < deadline and await session.open():
            await session.run(deadline, (args.pause_min, args.pause_max), limit=1000)

    await asyncio.gather(*(one(x, n * args.join_every) for n, x in enumerate(pages)))
    stop.set()
    await sampling
    placed = {}
    for session in pages:
        if isinstance(session, Student):
            cookie = session.cookie
        else:
            cookie = next((f"{c['name']}={c['value']}" for c in await session.context.cookies()
                           if c["name"] == COOKIE), "") if hasattr(session, "context") else ""
        key = f"replica{replica_of(cookie)}" if replica_of(cookie) else "none"
        placed[key] = placed.get(key, 0) + 1
    for session in pages:
        await session.close()
    all_joined = start + (len(pages) - 1) * args.join_every
    return {"usage": usage.summary(), "stats": stats, "sessions_by_replica": placed,
            "protocol": [x for s in pages if isinstance(s, Student) for x in s.samples],
            "browser": [x for s in pages if not isinstance(s, Student) for x in s.samples],
            "all_joined_at": all_joined - start, "start": start}


def room_numbers(r: dict) -> dict:
    """The configuration's figures: server p95 per interaction, Chromium's, errors."""
    protocol, browser, stats = r["protocol"], r["browser"], r["stats"]
    joined = r["start"] + r["all_joined_at"]
    errors = [s for s in protocol + browser if s.get("error")]
    counted = {"interactions": len(errors), "not_loaded": len(stats["load_errors"]),
               "page_errors": len(stats["page_errors"]), "console_errors": len(stats["console_errors"]),
               "http_errors": r["log"]["http_errors"]}
    return {"server": h.summary(classroom_load.ok(protocol, "server_ms")),
            "server_all_joined": h.summary(classroom_load.ok([s for s in protocol if s["at"] >= joined], "server_ms")),
            "browser_first_chart": h.summary(classroom_load.ok(browser)),
            "browser_report_back": h.summary(classroom_load.ok(browser, "done")),
            "interactions": len(protocol) + len(browser), "errors": counted, "errors_total": sum(counted.values()),
            "error_examples": [str(e.get("error"))[:200] for e in errors[:3]] + stats["load_errors"][:3]
            + stats["page_errors"][:3] + stats["console_errors"][:3],
            "misrouted": r["log"]["misrouted"], "requests": r["log"]["requests"],
            "requests_with_cookie": r["log"]["with_cookie"]}


async def scale(browser, args, logs: Path) -> dict:
    """Each size, each replica count: a fresh cluster, warmed, then the room."""
    out = {}
    for sessions in args.sessions:
        for replicas in args.replicas:
            name = f"{replicas}r-{sessions}s"
            print(f"\n-- {replicas} replica(s), {sessions} scripted sessions + {args.browser_sessions} Chromium pages; "
                  f"load average {os.getloadavg()[0]:.2f} --", flush=True)
            with h.ForeignLoad() as foreign, cluster(replicas, logs, name) as running:
                warmed = await warm(running)
                result = await room(browser, running, sessions, args)
                await asyncio.sleep(2)  # the closed WebSockets' lines written
                result["log"] = read_log(running.log())
            result |= {"warm": warmed, "replica_log_problems": replica_problems(logs, name),
                       "foreign_cpu_mean": sum(foreign.samples) / max(1, len(foreign.samples)),
                       "foreign": foreign.summary()}
            result["numbers"] = room_numbers(result)
            out[name] = result
            print_room(name, result, args)
    return out


def print_room(name: str, r: dict, args) -> None:
    n, u = r["numbers"], r["usage"]
    print(h.HEADER)
    print(h.fmt_row("server: rerun to script_finished", classroom_load.ok(r["protocol"], "server_ms")))
    print(h.fmt_row("Chromium: input to first chart", classroom_load.ok(r["browser"])))
    print(h.fmt_row("Chromium: input to the report-back's end", classroom_load.ok(r["browser"], "done")))
    cpu = ", ".join(f"{k} {v:.0f} %" for k, v in u["cpu_percent"].items())
    rss = ", ".join(f"{k} {v:.0f} MB" for k, v in u["rss_peak_mb"].items())
    warm = ", ".join(f"{k} {v:.0f} s" for k, v in r["warm"].items())
    print(f"   {n['interactions']} interactions; errors {n['errors_total']} {n['errors']}; misrouted {n['misrouted']} "
          f"of {n['requests_with_cookie']} requests with a cookie ({n['requests']} in HAProxy's log; "
          f"{r['log']['bundle_404']} bundle fetches 404, {r['log']['slow_answers']} answers over 1 s, "
          f"{len(r['log']['marked_down'])} replicas marked down); sessions by "
          f"replica {r['sessions_by_replica']}\n   CPU (% of one core): {cpu}; machine "
          f"{u['machine_busy_percent']:.0f} % of {os.cpu_count()} cores; RSS peak {rss}\n   warm-up {warm}; "
          f"{r['foreign']}")
    for example in n["error_examples"][:5]:
        print(f"     {example}")
    for line in (r["log"]["marked_down"][:3] + r["log"]["misrouted_lines"][:3] + r["log"]["error_lines"][:3]
                 + r["replica_log_problems"][:3]):
        print(f"     {line}")


# --- 2. the kill test -----------------------------------------------------------------------------


class Pinned:
    """A Chromium whose new contexts hold a replica's affinity cookie (HAProxy then sends them there)."""

    def __init__(self, browser, base: str, replica: int):
        self.browser, self.base, self.replica = browser, base, replica

    async def new_context(self, **options):
        context = await self.browser.new_context(**options)
        await context.add_cookies([{"name": COOKIE, "value": f"r{self.replica}", "url": self.base}])
        await context.add_init_script(SOCKETS)
        return context


class ExplorerPage(classroom_load.Session):
    """A Chromium page on the Explorer, opened from a link with a view in it."""

    kind, role = "browser", "explorer"

    def __init__(self, number: int, browser, base: str, query: str, stats: dict, seed: int):
        super().__init__(number, browser, base, stats, seed)
        self.query = query
        self.depth = int(dict(parse_qsl(query))["depth"])

    async def open(self) -> bool:
        target = self.url
        self.url = f"{target}/?{self.query}#"  # the Session opens url + "/?lang=en": after "#", ignored
        try:
            return await super().open()
        finally:
            self.url = target

    async def address(self) -> str:
        return self.page.url.split("#", 1)[0]


class ExplorerSession(ProtocolSession):
    kind, role = "protocol", "explorer"


def view_query(rng: random.Random) -> str:
    """An Explorer link's query: the switches, a depth and a block in focus."""
    depth = rng.randint(6, 60)
    return urlencode(sorted({"lang": "en", "residual": rng.choice(("true", "false")),
                             "norm": rng.choice(("true", "false")), "depth": str(depth),
                             "block": str(rng.randint(1, depth))}.items()))


def view_matches(query: str, view: dict | None) -> bool:
    """Whether the instant Explorer's view is the one the URL asks for (the instant controls it names)."""
    if not view:
        return False
    wanted = {k: v for k, v in parse_qsl(query) if k in INSTANT}
    return all(str(view.get(k)).lower() == v.lower() for k, v in wanted.items())


def reconnect_delay(attempt: int, rng: random.Random) -> float:
    """Streamlit 1.67's frontend: seconds before its attempt-th reconnect (nextReconnectDelayMs)."""
    longest = min(60.0, 0.5 * 2 ** (attempt - 1))
    shortest = 0.25 if attempt == 1 else longest / 2
    return rng.uniform(shortest, longest)


async def ping(session: ProtocolSession, rng: random.Random, deadline: float) -> None:
    """The frontend's ping before a reconnect: /_stcore/health and /_stcore/host-config with the cookie, retried
    100 ms x 2^n apart (70-100 % of it) until both answer 200; the cookie follows what HAProxy sets."""
    for tries in range(1, 1000):
        cookie = session.headers.get("Cookie", "")
        (health, first), (config, second) = await asyncio.gather(  # both at once, as the frontend asks
            fetch(session.port, "/_stcore/health", cookie), fetch(session.port, "/_stcore/host-config", cookie))
        session.headers["Cookie"] = second if second != cookie else first
        if health == config == 200 or time.monotonic() > deadline:
            return
        wait = min(1.0, 0.1 * 2 ** (tries - 1))
        await asyncio.sleep(wait if tries == 1 else wait * rng.uniform(0.7, 1.0))


async def protocol_back(session, killed_at: float, rng: random.Random) -> dict:
    """A scripted session after its replica died, reconnecting as Streamlit's frontend does: when its socket
    closed, when the new one opened (and on which replica), when the run it asks for finished, and whether
    that run showed the new-session line and the URL's view."""
    out = {"kind": "protocol", "role": session.role, "url_before": session.query}
    deadline = time.monotonic() + RECOVER_S
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(session._reader), RECOVER_S)
    out["closed_s"] = time.time() - killed_at
    would_run = bool(session.running_fragment)  # the frontend's rule on a reconnect (no page has a run_every timer)
    for attempt in range(1, 30):
        await asyncio.sleep(reconnect_delay(attempt, rng))
        await ping(session, rng, deadline)
        try:
            sock = session.headers.get("Cookie", "")
            await websockets_open(session)
            out["socket_s"] = time.time() - killed_at
            out["replica_after"] = replica_of(sock)
            break
        except (OSError, websockets.WebSocketException, TimeoutError):
            if time.monotonic() > deadline:
                return out | {"error": "no socket"}
    else:
        return out | {"error": "no socket"}
    out["asked_for_a_run"] = would_run
    if not would_run:
        out["back_s"] = out["socket_s"]  # the page keeps showing its view; the next touch runs it whole
        return out
    session.elements, session.element_fragments = [], []
    try:
        await session.rerun(timeout=max(1.0, deadline - time.monotonic()))
    except Exception as error:  # noqa: BLE001 - counted
        return out | {"error": f"{type(error).__name__}: {error}"[:200]}
    out["back_s"] = time.time() - killed_at
    alerts = [e.alert.body for e in session.finished_elements if e.WhichOneof("type") == "alert"]
    out["said_new_session"] = NEW_SESSION in alerts
    out["same_url"] = dict(parse_qsl(session.query)) == dict(parse_qsl(out["url_before"]))
    view = json.loads(session.component_bytes or b"{}").get("view")
    out["view_restored"] = out["same_url"] and view_matches(session.query, view)
    return out


async def websockets_open(session: ProtocolSession) -> None:
    """A new WebSocket for ``session`` (its cookie as the ping left it), read as before."""
    session.ws = await websockets.connect(
        f"ws://localhost:{session.port}/_stcore/stream", subprotocols=["streamlit"],
        origin=f"http://localhost:{session.port}", max_size=None, open_timeout=10,
        additional_headers=session.headers)
    session._reader = asyncio.create_task(session._read())


# A promise in the page: the Date.now() at which the new-session line is shown and the script is idle.
BACK = """([text, idle]) => new Promise(resolve => {
  const done = () => [...document.querySelectorAll('[data-testid=stAlert]')].some(e => e.textContent.includes(text))
    && document.querySelector(idle);
  if (done()) return resolve(Date.now());
  const observer = new MutationObserver(() => { if (done()) { observer.disconnect(); resolve(Date.now()); } });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true, attributes: true});
})"""
# The Date.now() of each WebSocket opened in the page (after the one it loaded with).
SOCKETS = """(() => {
  const opened = window.__sockets = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); this.addEventListener('open', () => opened.push(Date.now())); }
  };
})();"""


# Every chart's drawn data (x and y of each trace), in page order: the view a page shows.
CHARTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => gd._fullData
  ? gd._fullData.map(t => Array.prototype.join.call(t.x || [], ',') + ';' + Array.prototype.join.call(t.y || [], ','))
      .join('|')
  : null)"""
SAME_CHARTS = (f"before => {{ const now = ({CHARTS})(); return now.length === before.length"
               " && now.every((c, i) => c !== null && c === before[i]) && Date.now(); }")


async def browser_back(session, killed_at: float, watching: asyncio.Future) -> dict:
    """A Chromium page after its replica died: when its new WebSocket opened, when the page showed the new
    session's line with the script idle and the charts it drew before the kill; what it shows
    then (its URL). An Explorer page whose last run was the whole page asks for no run on
    reconnecting (Streamlit's frontend): it is back when its socket is."""
    out = {"kind": "browser", "role": session.role, "url_before": session.url_before,
           "asked_for_a_run": session.touched}
    page = session.page
    if out["asked_for_a_run"]:
        try:
            out["back_s"] = await asyncio.wait_for(watching, RECOVER_S) / 1000 - killed_at
        except (TimeoutError, Exception) as error:  # noqa: BLE001 - a page that did not come back: counted
            out["error"] = f"no new-session line within {RECOVER_S:.0f} s ({type(error).__name__})"
    else:
        watching.cancel()
        with contextlib.suppress(Exception):  # (no socket: counted below)
            await page.wait_for_function(f"() => (window.__sockets || []).some(t => t >= {killed_at * 1000})",
                                         timeout=RECOVER_S * 1000, polling=100)
    sockets = [t / 1000 - killed_at for t in await page.evaluate("() => window.__sockets || []")
               if t / 1000 >= killed_at]
    out["socket_s"] = min(sockets) if sockets else None
    if not out["asked_for_a_run"] and sockets:
        out["back_s"] = out["socket_s"]
    cookie = next((c["value"] for c in await page.context.cookies() if c["name"] == COOKIE), "")
    out["replica_after"] = replica_of(f"{COOKIE}={cookie}")
    out["said_new_session"] = out["asked_for_a_run"] and "error" not in out
    out["same_url"] = page.url.split("#", 1)[0] == session.url_before
    try:
        done = await page.wait_for_function(SAME_CHARTS, arg=session.charts_before, timeout=20_000, polling=100)
        out["view_restored"] = out["same_url"]
        if "back_s" in out:
            out["back_s"] = max(out["back_s"], await done.json_value() / 1000 - killed_at)
    except Exception:  # noqa: BLE001 - other charts than before, or none: counted
        out["view_restored"] = False
    out["exceptions_shown"] = await page.locator(h.EXCEPTION).count()
    return out


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(url.split("#", 1)[0].split("?", 1)[-1]))


# After a touch: the page idle again with the new-session line and every chart drawn; the Date.now() then.
TOUCHED = f"""() => {{ const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const said = [...document.querySelectorAll('[data-testid=stAlert]')]
    .some(e => e.textContent.includes({json.dumps(NEW_SESSION)}));
  return said && document.querySelector({json.dumps(h.IDLE)}) && plots.length > 0 && plots.every(gd => gd._fullData)
    && Date.now(); }}"""


async def next_touch(session) -> dict:
    """An Explorer page that asked for no run on reconnecting: its next touch (the depth, one step) runs the page
    whole on the new replica. Does it say so and show a view of its URL (``view_restored``), how long until it
    is drawn again, and is the step kept (its URL the one before with that step: ``touch_kept``)?"""
    if session.kind == "browser":
        page, before = session.page, query_of(session.page.url)
        step = 1 if int(before["depth"]) < 100 else -1
        label = json.dumps(classroom_load.LABELS["depth"])
        slider = page.locator(f"[role=slider][aria-label={label}], input[type=range][aria-label={label}]").first
        try:
            await slider.focus()
            started = time.time()
            await page.keyboard.press("ArrowRight" if step > 0 else "ArrowLeft")
            await asyncio.sleep(0.5)  # the page's rerun under way
            done = await page.wait_for_function(TOUCHED, timeout=RECOVER_S * 1000, polling=100)
        except Exception as error:  # noqa: BLE001 - counted
            return {"error": f"{type(error).__name__}: {error}"[:200]}
        after = query_of(page.url)
        return {"error": None, "said_new_session": True, "run_s": await done.json_value() / 1000 - started,
                "view_restored": after in (before, before | {"depth": str(int(before["depth"]) + step)})
                and not await page.locator(h.EXCEPTION).count(),
                "touch_kept": after == before | {"depth": str(int(before["depth"]) + step)}}
    before, depth = query_of(session.query), int(session.value("depth"))
    step = 1 if depth < 100 else -1
    started = time.time()
    try:
        await session.rerun({"depth": depth + step}, timeout=RECOVER_S)
    except Exception as error:  # noqa: BLE001 - counted
        return {"error": f"{type(error).__name__}: {error}"[:200]}
    alerts = [e.alert.body for e in session.finished_elements if e.WhichOneof("type") == "alert"]
    after = query_of(session.query)
    view = json.loads(session.component_bytes or b"{}").get("view")
    kept = before | {"depth": str(depth + step)}
    return {"error": None, "said_new_session": NEW_SESSION in alerts, "run_s": time.time() - started,
            "view_restored": after in (before, kept) and view_matches(session.query, view), "touch_kept": after == kept}


async def kill_test(browser, args, logs: Path) -> dict:
    """Explorer sessions on replica 1 of 2, replica 1 SIGKILLed: each session's recovery."""
    rng = random.Random(args.seed)
    killed, live = 1, 2
    with cluster(2, logs, "kill") as running:
        await warm(running)
        port, pinned = running.port, Pinned(browser, running.base, killed)
        browser_explorers = args.kill_browser_pages
        stats = classroom_load.new_stats()
        explorers: list = [ExplorerPage(n, pinned, running.base, view_query(rng), stats, args.seed)
                           for n in range(browser_explorers)]
        for _ in range(args.kill_sessions - browser_explorers):
            session = ExplorerSession(port, view_query(rng))
            session.headers["Cookie"] = f"{COOKIE}=r{killed}"
            explorers.append(session)
        for session in explorers:  # one at a time, as a class comes in
            if isinstance(session, ExplorerPage):
                opened = await session.open()
            else:
                opened = bool(await session.connect(timeout=60))
            if not opened:
                raise RuntimeError(f"a {session.kind} {getattr(session, 'role', '')} session did not open")
            await asyncio.sleep(args.join_every)
        touched = []
        for i, session in enumerate(explorers):  # every other one moved the depth one step
            if i % 2 == 0:
                if isinstance(session, ExplorerPage):
                    sample = await session.interact("depth")
                    touched.append(sample.get("error"))
                else:
                    step = 1 if session.value("depth") < 60 else -1
                    await session.rerun({"depth": int(session.value("depth")) + step}, timeout=30)
                    touched.append(None)
            session.touched = i % 2 == 0
        await asyncio.sleep(3)  # every page idle
        watching = {}
        for session in explorers:
            if isinstance(session, ExplorerPage):
                page = session.page
                session.url_before = page.url.split("#", 1)[0]
                session.charts_before = await page.evaluate(CHARTS)
                watching[id(session)] = asyncio.ensure_future(page.evaluate(BACK, [NEW_SESSION, h.IDLE]))
        before = {"touch_errors": [e for e in touched if e], "sessions_killed_replica": len(explorers)}
        doomed = {running.replicas[killed][0], *h.descendants(running.replicas[killed][0])}
        killed_at = time.time()
        os.kill(running.replicas[killed][0], signal.SIGKILL)
        tasks = []
        for session in explorers:
            if session.kind == "browser":
                tasks.append(browser_back(session, killed_at, watching[id(session)]))
            else:
                tasks.append(protocol_back(session, killed_at, random.Random(rng.random())))
        recovered = await asyncio.gather(*tasks)
        for result, session in zip(recovered, explorers, strict=True):
            result["touched"] = getattr(session, "touched", None)
            if result.get("asked_for_a_run") is False and "back_s" in result:
                result["next_touch"] = await next_touch(session)
        for session in explorers:
            await session.close()
        await asyncio.sleep(2)
        log = read_log(running.log(), killed=killed)
        left = [p for p in doomed if p != running.replicas[killed][0] and Path(f"/proc/{p}").exists()]
        for pid in left:  # the killed replica's worker processes, if any outlived it
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return {"before": before, "sessions": recovered, "log": log, "orphans_killed": len(left),
            "replica_log_problems": replica_problems(logs, "kill"), "killed": killed, "live": live}


def passed(s: dict, live: int) -> bool:
    """Whether a session of the killed replica came back on the live one, said so, and shows its view; one that
    asked for no run, at its next touch."""
    if "error" in s or "back_s" not in s or s.get("replica_after") != live or s.get("exceptions_shown"):
        return False
    if s.get("asked_for_a_run"):
        return bool(s.get("said_new_session") and s.get("view_restored"))
    touch = s.get("next_touch") or {}
    return bool(s.get("view_restored", True) and not touch.get("error") and touch.get("said_new_session")
                and touch.get("view_restored"))


def kill_numbers(k: dict) -> dict:
    sessions = k["sessions"]
    back = [s["back_s"] for s in sessions if "back_s" in s]
    failed = [s for s in sessions if not passed(s, k["live"])]
    summary = h.summary(back)
    return {"recovery_s": summary, "socket_s": h.summary([s["socket_s"] for s in sessions if s.get("socket_s")]),
            "back": len(back), "sessions": len(sessions), "failed": len(failed),
            "not_asked_to_run": sum(1 for s in sessions if s.get("asked_for_a_run") is False),
            "recovery_met": bool(back) and len(back) == len(sessions) and summary["p95"] <= 10 and not failed,
            "misrouted": k["log"]["misrouted"], "redispatched": k["log"]["redispatched"],
            "first_touch_lost": sum(1 for s in sessions if (s.get("next_touch") or {}).get("touch_kept") is False),
            "first_touch_run_s": h.summary([s["next_touch"]["run_s"] for s in sessions
                                            if (s.get("next_touch") or {}).get("run_s") is not None])}


def print_kill(k: dict) -> None:
    n = k["numbers"]
    print(f"\n== the kill test: {n['sessions']} sessions on replica {k['killed']} of 2 ({k['before']}) ==")
    print(f"{'':<44}{'n':>6}{'min':>9}{'median':>9}{'p95':>9}{'max':>9}   (s)")
    for kind in ("browser", "protocol"):
        part = [s for s in k["sessions"] if s["kind"] == kind]
        print(h.fmt_row(f"{kind} explorers: kill -> back (run done)", [s["back_s"] for s in part if "back_s" in s]))
    print(h.fmt_row("all: kill -> new WebSocket open", [s["socket_s"] for s in k["sessions"] if s.get("socket_s")]))
    print(h.fmt_row("all: kill -> back", [s["back_s"] for s in k["sessions"] if "back_s" in s]))
    print(f"   {n['back']} of {n['sessions']} back; {n['failed']} failed a check; {n['not_asked_to_run']} untouched "
          "Explorer pages asked for no run on reconnecting (Streamlit's frontend): back when their socket was, their "
          "view checked at their next touch")
    touches = [s["next_touch"] for s in k["sessions"] if s.get("next_touch")]
    print(h.fmt_row("untouched Explorers' next touch: its run (s)", [t["run_s"] for t in touches if t.get("run_s")]))
    print(f"   at that next touch: {sum(bool(t.get('said_new_session')) for t in touches)} of {len(touches)} said "
          f"'new session', {sum(bool(t.get('view_restored')) for t in touches)} showed their URL's view, "
          f"{n['first_touch_lost']} lost the touch itself (the page back on the URL's view before it)")
    for s in k["sessions"]:
        if not passed(s, k["live"]):
            print(f"     {s}")
    print(f"   HAProxy: {k['log']['redispatched']} requests with the dead replica's cookie redispatched, "
          f"{k['log']['misrouted']} misrouted, {k['log']['http_errors']} HTTP errors {k['log']['error_lines'][:2]}")
    print(f"   recovery p95 <= 10 s: {h.verdict(n['recovery_met'])}")


# --- the run --------------------------------------------------------------------------------------


def ratios(rooms: dict, args) -> dict:
    out = {}
    for sessions in args.sessions:
        one, two = rooms.get(f"1r-{sessions}s"), rooms.get(f"2r-{sessions}s")
        if one and two and one["numbers"]["server"]["n"] and two["numbers"]["server"]["n"]:
            out[sessions] = {"p95_1": one["numbers"]["server"]["p95"], "p95_2": two["numbers"]["server"]["p95"],
                             "ratio": two["numbers"]["server"]["p95"] / one["numbers"]["server"]["p95"],
                             "ratio_all_joined": (two["numbers"]["server_all_joined"].get("p95") or float("nan"))
                             / (one["numbers"]["server_all_joined"].get("p95") or float("nan")),
                             "browser_ratio": (two["numbers"]["browser_first_chart"].get("p95") or float("nan"))
                             / (one["numbers"]["browser_first_chart"].get("p95") or float("nan"))}
    return out


def print_summary(record: dict, args) -> None:
    print("\n== summary ==")
    rooms = record.get("scale", {})
    for name, r in rooms.items():
        n = r["numbers"]
        print(f"{name}: server p95 {n['server'].get('p95', float('nan')):.0f} ms (median "
              f"{n['server'].get('median', float('nan')):.0f}; once all had joined p95 "
              f"{n['server_all_joined'].get('p95', float('nan')):.0f}), Chromium first chart p95 "
              f"{n['browser_first_chart'].get('p95', float('nan')):.0f} ms; errors {n['errors_total']}; misrouted "
              f"{n['misrouted']}; foreign CPU {r['foreign_cpu_mean']:.2f} cores")
    for sessions, x in record.get("ratios", {}).items():
        target = "<= 1.0" if sessions <= 40 else "< 0.8 (clearly better)"
        ok = x["ratio"] <= 1.0 if sessions <= 40 else x["ratio"] < 0.8
        print(f"at {sessions} sessions: 2-replica/1-replica server p95 = {x['p95_2']:.0f}/{x['p95_1']:.0f} ms = "
              f"{x['ratio']:.2f} (target {target}: {h.verdict(ok)}); once all had joined "
              f"{x['ratio_all_joined']:.2f}; Chromium first chart {x['browser_ratio']:.2f}")
    if rooms:
        errors = sum(r["numbers"]["errors_total"] for r in rooms.values())
        misrouted = sum(r["numbers"]["misrouted"] for r in rooms.values())
        print(f"errors {errors}, misrouted {misrouted} (targets 0, 0): {h.verdict(errors == misrouted == 0)}")
    if "kill" in record and "numbers" in record["kill"]:
        n = record["kill"]["numbers"]
        print(f"kill: recovery p95 {n['recovery_s'].get('p95', float('nan')):.1f} s over {n['back']} of "
              f"{n['sessions']} sessions, {n['failed']} failed a check ({h.verdict(n['recovery_met'])})")


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright  # noqa: PLC0415 - only a run needs it

    logs = Path(tempfile.mkdtemp(prefix="blockstab-cluster-bench-"))
    print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}; logs in {logs}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    record: dict = {"app": f"{h.APP_ROOT} at {h.git_state(h.APP_ROOT)}", "logs": str(logs),
                    "load_average_start": os.getloadavg()}
    with h.ForeignLoad() as foreign:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=h.CHROMIUM,
                                              args=[*h.CHROMIUM_ARGS, classroom_load.LOCAL_ONLY])
            if args.only in (None, "scale"):
                record["scale"] = await scale(browser, args, logs)
                record["ratios"] = ratios(record["scale"], args)
            if args.only in (None, "kill"):
                try:
                    record["kill"] = await kill_test(browser, args, logs)
                    record["kill"]["numbers"] = kill_numbers(record["kill"])
                    print_kill(record["kill"])
                except Exception as error:  # noqa: BLE001 - the rest is still reported
                    traceback.print_exc()
                    record["kill"] = {"failed": f"{type(error).__name__}: {error}"}
            await browser.close()
    record |= {"foreign": foreign.summary(), "foreign_cpu_mean": sum(foreign.samples) / max(1, len(foreign.samples)),
               "load_average_end": os.getloadavg()}
    print_summary(record, args)
    print(foreign.summary())
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=lambda s: [int(x) for x in s.split(",")], default=[40, 80],
                        help="scripted sessions per run, comma-separated (default 40,80)")
    parser.add_argument("--replicas", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2])
    parser.add_argument("--browser-sessions", type=int, default=4, help="Chromium pages beside them")
    parser.add_argument("--seconds", type=float, default=120.0, help="each configuration's room, joining included")
    parser.add_argument("--join-every", type=float, default=0.5)
    parser.add_argument("--pause-min", type=float, default=2.0)
    parser.add_argument("--pause-max", type=float, default=6.0)
    parser.add_argument("--kill-sessions", type=int, default=20, help="sessions on the replica that is killed")
    parser.add_argument("--kill-browser-pages", type=int, default=4, help="how many of them are Chromium pages")
    parser.add_argument("--only", choices=("scale", "kill"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--app-root", type=Path, help="measure the app in this checkout / snapshot (with its .venv)")
    args = parser.parse_args()
    h.use_app_root(args.app_root)
    en = h.app_catalog()
    classroom_load.LABELS.update(residual=en["control.residual"], norm=en["control.norm"], depth=en["control.depth"])
    args.sessions = [max(1, min(n, 200)) for n in args.sessions]
    args.kill_sessions = max(2, min(args.kill_sessions, 100))
    args.kill_browser_pages = max(0, min(args.kill_browser_pages, args.kill_sessions))
    h.check_chromium()
    record = asyncio.run(main_async(args))
    h.write_record(args.json, args, record)


if __name__ == "__main__":
    main()
