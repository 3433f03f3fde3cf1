"""Many live classes at once, each behind one address (issue #59, "Measured"): ``--classes`` (50) classes of
``--class-size`` (40) phones, each class with its own teacher and its phones from one loopback address of its own
(127.0.X.Y: one NAT address per school), on the cluster of ``scripts/serve_cluster.sh`` (HAProxy, Redis, N
replicas; every limit at its default), with 2 replicas then 1; and (``--nat``) one class of 200 behind one address
while another address floods wrong codes and requests.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.classes --json /tmp/classes.json               # 50 x 40 on 2 replicas, then 1
    .venv/bin/python -m benchmarks.classes --classes 5 --class-size 10 --replicas 2 --steps 2   # a quick look
    .venv/bin/python -m benchmarks.classes --nat --json /tmp/nat.json             # 200 behind one address, a flood

**The classes.** Each teacher is a Streamlit protocol session on /class (``live_class.Teacher``: its page polls the
class as ``widgets/follow.js`` does) from its school's address, pinned to a replica by HAProxy's affinity cookie
(the teachers spread over the replicas); it starts its class. The phones are ``testbed/phones.py``'s (the page, the
join, the event stream; the step's own file is not fetched), from the school's address, through HAProxy;
``--chromium`` (4) of them, the first phone of the first classes, are headless Chromium pages of /join (from
127.0.0.1: a browser cannot choose its source address). Once every phone follows: ``--idle-seconds`` (30) of nothing
(the replicas', HAProxy's and Redis's CPU and RSS: per idle phone), then every teacher leads ``--steps`` (6) tour
steps, each after a pause of ``--pause`` (5-15 s, drawn), all classes at once: a step is timed from its teacher's
click (the rerun sent) to each phone of its class having the step's state (read by this process; a Chromium page's
title shown); per class and step, its last phone. Targets: median <= 150 ms, p95 <= 300 ms over all classes and
steps. The replicas' CPU over the steps, less the idle rate, per step. Then every teacher asks a question; every
phone answers within 5 s, one in ten again with another choice: every class's record in Redis holds each seat's last
choice, once (none lost, none twice).

**A NAT class beside a flood** (``--nat``, 2 replicas): a class of ``--nat-size`` (200) phones from 127.0.4.1, its
teacher from 127.0.4.2; ``--nat-steps`` (10) steps quiet, then as many while 127.0.0.9 sends, on 50 keep-alive
connections as fast as they are answered, joins to random codes (wrong codes) and reads of a class's state with random
tokens; the step's p95 (every phone) flooded against quiet (target <= 1.5x), and the flood's answers by status (429s).

The machine has 2 cores, shared by the replicas, HAProxy, Redis, Chromium and this process (every phone and
teacher): their CPU is reported apart, with the load average and the foreign CPU (harness.ForeignLoad).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks import cluster as served
from benchmarks import harness as h
from benchmarks.classroom_load import LOCAL_ONLY
from benchmarks.live_class import (
    COOKIE,
    WAIT_S,
    BrowserStudent,
    Connection,
    Teacher,
    known,
    lateness,
    tour_step,
)
from server.class_store import RedisStore
from testbed.phones import Phone
from ui.lessons import QUESTIONS, TOUR
from ui.live_class import new_code, new_student

NAT_SCHOOL, NAT_TEACHER, FLOODER, FLOOD_CONNECTIONS = "127.0.4.1", "127.0.4.2", "127.0.0.9", 50
ANSWER_WINDOW_S = 5.0
OPENING = 24  # phones opening their page at once


def school(n: int) -> str:
    """Class ``n``'s address (its school's NAT): 127.0.10.1, 127.0.10.2, ..."""
    return f"127.0.{10 + n // 250}.{1 + n % 250}"


def rss(pids: list[int], children: bool = True) -> float:
    """The RSS (MB) of ``pids`` (and their children: the Explorer's build workers)."""
    return sum((h.rss_mb(p) or 0.0) + sum(h.rss_mb(c) or 0.0 for c in h.descendants(p) if children) for p in pids)


async def quiet(pids: list[int], below: float = 0.05, every: float = 5.0, most: float = 180.0) -> float:
    """Wait until ``pids`` (with their children: the parts built ahead after a class starts) used less than
    ``below`` of a core each over ``every`` s, at most ``most`` s: the seconds waited."""
    start = time.monotonic()
    used = lambda: sum(h.tree_cpu_seconds(p) for p in pids)  # noqa: E731
    before = used()
    while time.monotonic() - start < most:
        await asyncio.sleep(every)
        after = used()
        if after - before < below * every * len(pids):
            break
        before = after
    return time.monotonic() - start


class Meter:
    """CPU seconds so far of the cluster's parts and of this side (this process, Chromium)."""

    def __init__(self, running: served.Cluster):
        self.running = running

    def read(self) -> dict[str, float]:
        replicas = [p for p, _ in self.running.replicas.values() if Path(f"/proc/{p}").exists()]
        tree = self.running.tree()
        mine = [p for p in h.descendants(os.getpid()) if p not in tree]
        return {"replicas": sum(h.tree_cpu_seconds(p) for p in replicas),
                "haproxy": h.cpu_seconds(self.running.haproxy_pid) or 0.0,
                "redis": h.cpu_seconds(self.running.redis_pid) or 0.0,
                "benchmark": h.cpu_seconds(os.getpid()) or 0.0,
                "chromium": sum(h.cpu_seconds(p) or 0.0 for p in mine), "t": time.monotonic()}

    @staticmethod
    def rate(before: dict, after: dict) -> dict[str, float]:
        """Each part's CPU between two readings, in % of one core."""
        seconds = max(1e-6, after["t"] - before["t"])
        return {k: 100 * (after[k] - before[k]) / seconds for k in before if k != "t"} | {"seconds": seconds}


def arrival(phone: Phone, shows, since: float) -> float | None:
    """When ``phone`` first had a state ``shows`` holds for, at or after ``since``."""
    return next((t for s, t in zip(phone.states, phone.arrived, strict=True) if t >= since and s and shows(s)), None)


async def reached(phone: Phone, shows) -> None:
    with contextlib.suppress(TimeoutError):
        await phone.until(lambda s: s is not None and shows(s), WAIT_S)


class Class:
    """One class: its teacher, its phones (scripted, and Chromium pages), where its tour is."""

    def __init__(self, n: int, teacher: Teacher, code: str):
        self.n, self.teacher, self.code = n, teacher, code
        self.phones: list[Phone] = []
        self.pages: list[BrowserStudent] = []
        self.steps: list[dict] = []

    async def step(self) -> dict:
        """Next (Previous from the tour's last step): the click to each phone having the step."""
        at = self.teacher.step()
        self.teacher.forward = at < len(TOUR) - 1 and (self.teacher.forward or at == 0)
        to = at + 1 if self.teacher.forward else at - 1
        shown = tour_step(to)
        sent, ran = await self.teacher.press("class_next" if self.teacher.forward else "class_previous",
                                             shown.teacher)
        pages = asyncio.gather(*(page.shown_at(sent, shown) for page in self.pages))
        await asyncio.gather(*(reached(p, shown.state) for p in self.phones))
        times = [arrival(p, shown.state, sent) for p in self.phones] + list(await pages)
        ms = [None if t is None else 1000 * (t - sent) for t in times]
        led = {"class": self.n, "step": to, "teacher_ms": None if ran is None else 1000 * (ran - sent), "ms": ms,
               "chromium_ms": ms[len(self.phones):], "last_ms": None if None in ms else max(ms, default=None)}
        self.steps.append(led)
        return led


async def open_phones(phones: list[Phone], gate: asyncio.Semaphore) -> int:
    """Each phone opens its page, joins and follows; how many could not."""

    async def one(phone: Phone) -> bool:
        async with gate:
            try:
                answer = await phone.open()
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
                return False
            if answer.status != 200:
                return False
            phone.follow()
            return True

    return sum(not ok for ok in await asyncio.gather(*(one(p) for p in phones)))


async def start_class(n: int, port: int, replicas: int, gate: asyncio.Semaphore) -> Class:
    async with gate:
        teacher = Teacher(port, headers={"Cookie": f"{COOKIE}=r{1 + n % replicas}"}, source=school(n))
        return Class(n, teacher, await teacher.start())


async def teach(c: Class, steps: int, pause: tuple[float, float], rng: random.Random) -> None:
    for _ in range(steps):
        await asyncio.sleep(rng.uniform(*pause))
        await c.step()


async def answer_all(c: Class, rng: random.Random) -> dict:
    """The teacher asks; every phone answers at a random moment of 5 s, one in ten again with another choice:
    the record's answers against each seat's last choice."""
    question = 0
    shows = lambda s: (s["activity"], s["question"], s["phase"]) == ("question", question, "open")  # noqa: E731
    await c.teacher.press("class_show_question", lambda t: t.question() == question)
    await asyncio.gather(*(reached(p, shows) for p in c.phones))
    choices = QUESTIONS[question].choices
    final: dict[str, str] = {}
    statuses: Counter = Counter()

    async def one(phone: Phone, again: bool) -> None:
        await asyncio.sleep(rng.uniform(0, ANSWER_WINDOW_S))
        for choice in [rng.choice(choices)] + ([None] if again else []):
            choice = choice or next(x for x in choices if x != final[phone.me])
            answer = await phone.answer(choice)
            statuses[answer.status] += 1
            if answer.status == 200 and answer.json()["counted"]:
                final[phone.me] = choice

    async def page(student: BrowserStudent) -> None:
        await asyncio.sleep(rng.uniform(0, ANSWER_WINDOW_S))
        choice = rng.choice(choices)
        counted = await student.answer(choice)
        statuses[200 if counted else "page refused"] += 1
        if counted:
            final[student.token] = choice

    await asyncio.gather(*(one(p, i % 10 == 9) for i, p in enumerate(c.phones)), *(page(s) for s in c.pages))
    return {"class": c.n, "sent": sum(statuses.values()), "statuses": dict(statuses), "final": final,
            "seats": len(c.phones) + len(c.pages)}


async def classes_run(browser, args, replicas: int, logs: Path) -> dict:
    """``--classes`` classes of ``--class-size`` on a cluster of ``replicas``, every limit its default."""
    rng = random.Random(args.seed)
    name = f"classes-{replicas}"
    out: dict = {"replicas": replicas, "classes": args.classes, "class_size": args.class_size,
                 "load_average_start": os.getloadavg()}
    with served.cluster(replicas, logs, name, settings={}) as running:
        port, meter = running.port, Meter(running)
        parts = [p for p, _ in running.replicas.values()]
        out["rss_empty_mb"] = rss(parts)
        t0 = time.monotonic()
        gate = asyncio.Semaphore(4)  # teachers starting at once
        classes = await asyncio.gather(*(start_class(n, port, replicas, gate) for n in range(args.classes)))
        out["teachers_started_s"] = time.monotonic() - t0
        out["quiet_after_teachers_s"] = await quiet(parts)
        out["rss_teachers_mb"], out["rss_teachers_own_mb"] = rss(parts), rss(parts, children=False)
        for c in classes:
            scripted = args.class_size - (1 if c.n < args.chromium else 0)
            c.phones = [Phone(port, c.code, school(c.n)) for _ in range(scripted)]
        t0 = time.monotonic()
        gate = asyncio.Semaphore(OPENING)
        failed = sum(await asyncio.gather(*(open_phones(c.phones, gate) for c in classes)))
        for c in classes[:args.chromium]:
            page = BrowserStudent(c.n, browser, running.base, c.code)
            try:
                if await page.open():
                    c.pages.append(page)
                else:
                    failed += 1
            except Exception as error:  # noqa: BLE001 - counted
                print(f"  a Chromium page did not open: {type(error).__name__}: {error}"[:300])
                failed += 1
        await asyncio.gather(*(reached(p, lambda s: True) for c in classes for p in c.phones))
        out |= {"joined_s": time.monotonic() - t0, "phones": sum(len(c.phones) + len(c.pages) for c in classes),
                "chromium": sum(len(c.pages) for c in classes), "not_joined": failed}
        print(f"  {replicas} replica(s): {args.classes} teachers in {out['teachers_started_s']:.0f} s, "
              f"{out['phones']} phones in {out['joined_s']:.0f} s ({failed} did not join)", flush=True)
        out["quiet_after_phones_s"] = await quiet(parts)
        out["rss_phones_mb"], out["rss_phones_own_mb"] = rss(parts), rss(parts, children=False)
        out["haproxy_rss_mb"] = h.rss_mb(running.haproxy_pid)
        out["redis_rss_mb"] = h.rss_mb(running.redis_pid)
        before = meter.read()
        await asyncio.sleep(args.idle_seconds)
        out["idle"] = Meter.rate(before, meter.read())
        lags: list[float] = []
        probe = asyncio.create_task(lateness(lags, 0.05))
        before = meter.read()
        await asyncio.gather(*(teach(c, args.steps, args.pause, random.Random(rng.random())) for c in classes))
        out["stepping"] = Meter.rate(before, meter.read())
        probe.cancel()
        out["loop_late_ms"] = {"p95": h.percentile(lags, 95) if lags else None, "max": max(lags, default=None)}
        out["steps"] = [x for c in classes for x in c.steps]
        out["load_average_steps"] = os.getloadavg()
        answered = await asyncio.gather(*(answer_all(c, random.Random(rng.random())) for c in classes))
        await asyncio.sleep(2)
        store = RedisStore(running.redis_url)
        out["answers"] = []
        for c, a in zip(classes, answered, strict=True):
            record = store.read(c.code)
            final = a.pop("final")
            a |= {"stored": len(record.answers), "seated": len(record.seats),
                  "matches": record.answers == final and len(final) == a["seats"]}
            out["answers"].append(a)
        out["errors"] = dict(sum((Counter(f"HTTP {s}" for s in p.statuses if s != 200) for c in classes
                                  for p in c.phones), Counter())
                             + Counter("stream ended" for c in classes for p in c.phones
                                       if p._stream is not None and p._stream.done())
                             + sum((c.teacher.problems() for c in classes), Counter())
                             + Counter(e[:60] for c in classes for s in c.pages for e in s.errors))
        for c in classes:
            for closing in (*c.phones, *c.pages, c.teacher):
                await closing.close()
        out["haproxy"] = {k: v for k, v in served.read_log(running.log()).items()
                          if k in ("requests", "http_errors", "error_lines", "marked_down")}
    out["replica_log_problems"] = served.replica_problems(logs, name)
    out["load_average_end"] = os.getloadavg()
    return out


def report_classes(r: dict, foreign: float) -> dict:
    steps = r["steps"]
    lasts = [x["last_ms"] for x in steps]
    every = [m for x in steps for m in x["ms"]]
    s, e = h.summary(known(lasts)), h.summary(known(every))
    missing = sum(m is None for m in every)
    idle, stepping = r["idle"], r["stepping"]
    phones = r["phones"]
    step_cpu_s = (stepping["replicas"] - idle["replicas"]) / 100 * stepping["seconds"] / max(1, len(steps))
    answers = r["answers"]
    counted = all(a["matches"] for a in answers)
    print(f"\n== {r['classes']} classes of {r['class_size']} on {r['replicas']} replica(s): {phones} phones "
          f"({r['chromium']} Chromium, {r['not_joined']} did not join); load average "
          f"{' '.join(f'{x:.2f}' for x in r['load_average_start'])} at the start, "
          f"{' '.join(f'{x:.2f}' for x in r['load_average_steps'])} after the steps; foreign CPU {foreign:.2f} "
          "cores ==")
    print(h.HEADER)
    print(h.fmt_row("each class's step: click -> its last phone", known(lasts)))
    print(h.fmt_row("    every phone", known(every)))
    print(h.fmt_row("    Chromium pages (title shown)", known(m for x in steps for m in x["chromium_ms"])))
    print(h.fmt_row("    the teacher's own run", known(x["teacher_ms"] for x in steps)))
    ok = missing == 0 and s["n"] > 0 and s["median"] <= 150 and s["p95"] <= 300
    print(f"   {len(steps)} steps, {missing} phone-steps not shown within {WAIT_S:.0f} s; target median <= 150 ms, "
          f"p95 <= 300 ms (each step's last phone): {h.verdict(ok)}")
    print(f"   this process's event loop late by p95 {r['loop_late_ms']['p95'] or 0:.0f} ms, max "
          f"{r['loop_late_ms']['max'] or 0:.0f} ms over the steps")
    for name, u in (("idle", idle), ("stepping", stepping)):
        print(f"   {name} ({u['seconds']:.0f} s): replicas {u['replicas']:.1f} %, HAProxy {u['haproxy']:.1f} %, Redis "
              f"{u['redis']:.1f} %, this process {u['benchmark']:.1f} %, Chromium {u['chromium']:.1f} % of a core")
    print(f"   replicas' CPU per idle phone {idle['replicas'] / phones * 1000:.2f} milli-% of a core; per step "
          f"(over idle) {step_cpu_s * 1000:.0f} ms")
    per_phone_kb = (r["rss_phones_own_mb"] - r["rss_teachers_own_mb"]) / max(1, phones) * 1024
    print(f"   replicas' RSS (their build workers included): {r['rss_empty_mb']:.0f} MB empty, "
          f"{r['rss_teachers_mb']:.0f} MB with the teachers, {r['rss_phones_mb']:.0f} MB with the phones; the replica "
          f"processes alone {r['rss_teachers_own_mb']:.0f} -> {r['rss_phones_own_mb']:.0f} MB: {per_phone_kb:.0f} KB a "
          "phone; HAProxy "
          f"{r['haproxy_rss_mb'] or 0:.0f} MB, Redis {r['redis_rss_mb'] or 0:.0f} MB")
    sent = sum(a["sent"] for a in answers)
    statuses = sum((Counter(a["statuses"]) for a in answers), Counter())
    print(f"   answers: {sent} sent ({dict(statuses)}), every class's record its seats' last choices, each once: "
          f"{h.verdict(counted)} ({sum(not a['matches'] for a in answers)} classes not)")
    print(f"   errors {r['errors'] or 'none'}; HAProxy {r['haproxy']['requests']} requests, "
          f"{r['haproxy']['http_errors']} HTTP errors {r['haproxy']['error_lines'][:2]}; replica logs "
          f"{r['replica_log_problems'][:3]}")
    return {"last_median_ms": s.get("median"), "last_p95_ms": s.get("p95"), "every_median_ms": e.get("median"),
            "every_p95_ms": e.get("p95"), "not_shown": missing, "met": ok, "answers_met": counted,
            "idle_cpu_percent": idle["replicas"], "idle_cpu_per_phone_percent": idle["replicas"] / phones,
            "step_cpu_s": step_cpu_s, "rss_per_phone_kb": per_phone_kb, "foreign_cpu_mean": foreign}


# --- a NAT class beside a flood ----------------------------------------------------------------------------------


def flood(port: int, code: str, stop, results) -> None:
    """(A process of its own.) :data:`FLOOD_CONNECTIONS` keep-alive connections from :data:`FLOODER`: joins to
    random codes and reads of ``code``'s state with random tokens, as fast as they are answered."""
    results.put(asyncio.run(flooding(port, code, stop)))


async def flooding(port: int, code: str, stop) -> dict:
    statuses, failures = Counter(), Counter()
    start = time.monotonic()

    async def one(n: int) -> None:
        connection = Connection(port, FLOODER, {})
        while not stop.is_set():
            try:
                if n % 2:
                    response = await connection.request("POST", f"/api/class/{new_code()}/join?lang=en", {})
                    statuses[f"wrong code {response.status}"] += 1
                else:
                    response = await connection.request("GET", f"/api/class/{code}/state?me={new_student()}")
                    statuses[f"state {response.status}"] += 1
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
                failures[type(error).__name__] += 1
                connection.close()
                await asyncio.sleep(0.01)
        connection.close()

    await asyncio.gather(*(one(n) for n in range(FLOOD_CONNECTIONS)))
    return {"seconds": time.monotonic() - start, "statuses": dict(statuses), "failures": dict(failures)}


async def nat_run(args, logs: Path) -> dict:
    rng = random.Random(args.seed)
    out: dict = {"class_size": args.nat_size, "load_average_start": os.getloadavg()}
    with served.cluster(2, logs, "nat", settings={}) as running:
        port, meter = running.port, Meter(running)
        teacher = Teacher(port, headers={"Cookie": f"{COOKIE}=r1"}, source=NAT_TEACHER)
        c = Class(0, teacher, await teacher.start())
        c.phones = [Phone(port, c.code, NAT_SCHOOL) for _ in range(args.nat_size)]
        out["not_joined"] = await open_phones(c.phones, asyncio.Semaphore(OPENING))
        await asyncio.gather(*(reached(p, lambda s: True) for p in c.phones))
        out["quiet_after_phones_s"] = await quiet([p for p, _ in running.replicas.values()])
        before = meter.read()
        await teach(c, args.nat_steps, (1.0, 2.0), rng)
        out["quiet"], out["quiet_cpu"] = c.steps, Meter.rate(before, meter.read())
        c.steps = []
        spawn = multiprocessing.get_context("spawn")
        stop, results = spawn.Event(), spawn.Queue()
        process = spawn.Process(target=flood, args=(port, c.code, stop, results), daemon=True)
        process.start()
        try:
            await asyncio.sleep(3)
            before = meter.read()
            await teach(c, args.nat_steps, (1.0, 2.0), rng)
            out["flooded_cpu"] = Meter.rate(before, meter.read())
        finally:
            stop.set()
            out["flood"] = await asyncio.to_thread(results.get, True, 60)
            process.join(timeout=10)
        out["flooded"] = c.steps
        out["errors"] = dict(Counter(f"HTTP {s}" for p in c.phones for s in p.statuses if s != 200)
                             + Counter("stream ended" for p in c.phones if p._stream.done()) + teacher.problems())
        for closing in (*c.phones, teacher):
            await closing.close()
        log = served.read_log(running.log())
        out["haproxy"] = {k: log[k] for k in ("requests", "http_errors", "states")}
    out["load_average_end"] = os.getloadavg()
    return out


def report_nat(r: dict, foreign: float) -> dict:
    quiet, flooded = ([m for x in r[k] for m in x["ms"]] for k in ("quiet", "flooded"))
    q, f = h.summary(known(quiet)), h.summary(known(flooded))
    lq, lf = (h.summary(known(x["last_ms"] for x in r[k])) for k in ("quiet", "flooded"))
    ratio = f.get("p95", float("nan")) / q.get("p95", float("nan"))
    missing = sum(m is None for m in quiet + flooded)
    fl = r["flood"]
    sent = sum(fl["statuses"].values())
    refused = sum(v for k, v in fl["statuses"].items() if k.endswith(" 429"))
    print(f"\n== a class of {r['class_size']} behind {NAT_SCHOOL} ({r['not_joined']} did not join), {FLOODER} flooding "
          f"wrong codes and reads on {FLOOD_CONNECTIONS} connections; load average "
          f"{' '.join(f'{x:.2f}' for x in r['load_average_start'])}; foreign CPU {foreign:.2f} cores ==")
    print(h.HEADER)
    print(h.fmt_row("quiet: every phone", known(quiet)))
    print(h.fmt_row("flooded: every phone", known(flooded)))
    print(h.fmt_row("quiet: each step's last phone", known(x["last_ms"] for x in r["quiet"])))
    print(h.fmt_row("flooded: each step's last phone", known(x["last_ms"] for x in r["flooded"])))
    ok = missing == 0 and ratio <= 1.5
    print(f"   flooded / quiet p95 (every phone): {ratio:.2f}x; target <= 1.5x: {h.verdict(ok)} ({missing} not shown)")
    print(f"   the flood: {sent} answers in {fl['seconds']:.0f} s, {refused} of them 429: {fl['statuses']}; failures "
          f"{fl['failures']}; replicas' CPU {r['quiet_cpu']['replicas']:.0f} % quiet, "
          f"{r['flooded_cpu']['replicas']:.0f} % flooded; HAProxy {r['flooded_cpu']['haproxy']:.0f} % flooded")
    print(f"   errors of the class {r['errors'] or 'none'}; HAProxy {r['haproxy']}")
    return {"quiet_p95_ms": q.get("p95"), "flooded_p95_ms": f.get("p95"), "ratio": ratio, "met": ok,
            "quiet_last_p95_ms": lq.get("p95"), "flooded_last_p95_ms": lf.get("p95"), "flood_answers": sent,
            "flood_429": refused, "flood_failures": sum(fl["failures"].values()), "foreign_cpu_mean": foreign}


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright  # noqa: PLC0415 - only a run needs it

    asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(64))  # the teachers' polls
    logs = Path(tempfile.mkdtemp(prefix="blockstab-classes-"))
    print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}; logs in {logs}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    record: dict = {"app": f"{h.APP_ROOT} at {h.git_state(h.APP_ROOT)}", "logs": str(logs), "runs": {}}
    with h.ForeignLoad() as foreign:
        if args.nat:
            sampled = len(foreign.samples)
            record["nat"] = await nat_run(args, logs)
            record["nat"]["summary"] = report_nat(record["nat"], statistics.fmean(foreign.samples[sampled:] or [0]))
        else:
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=h.CHROMIUM, args=[*h.CHROMIUM_ARGS, LOCAL_ONLY])
                for replicas in args.replicas:
                    sampled = len(foreign.samples)
                    run = await classes_run(browser, args, replicas, logs)
                    run["summary"] = report_classes(run, statistics.fmean(foreign.samples[sampled:] or [0]))
                    record["runs"][str(replicas)] = run
                    await asyncio.sleep(5)
                await browser.close()
    record |= {"foreign": foreign.summary(), "load_average_end": os.getloadavg()}
    print(f"\n{foreign.summary()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--class-size", type=int, default=40, help="phones a class (its Chromium page included)")
    parser.add_argument("--replicas", type=int, nargs="+", default=[2, 1], help="one run on each cluster size")
    parser.add_argument("--chromium", type=int, default=4, help="phones, in all, that are headless Chromium pages")
    parser.add_argument("--steps", type=int, default=6, help="tour steps each teacher leads")
    parser.add_argument("--pause", type=float, nargs=2, default=[5.0, 15.0], help="seconds before each step (drawn)")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--nat", action="store_true", help="instead: a class behind one address beside a flood")
    parser.add_argument("--nat-size", type=int, default=200)
    parser.add_argument("--nat-steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args()
    args.chromium = max(0, min(args.chromium, args.classes))
    if not args.nat:
        h.check_chromium()
    record = asyncio.run(main_async(args))
    h.write_record(args.json, args, record)


if __name__ == "__main__":
    main()
