"""A live class on one server (issue #36): a teacher and N students following it, on the embedded store
and on Redis, in one run.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.live_class --store both --idle-seconds 300 --json /tmp/live.json
    .venv/bin/python -m benchmarks.live_class --store memory --students 10 --idle-seconds 30   # a quick look

For each store it starts the app (``python -m server``; for Redis with a fresh ``redis-server`` of its
own, scripts/redis.sh) with BLOCKSTAB_ANSWERS_PER_ADDRESS=1000 and BLOCKSTAB_JOINS_PER_MINUTE=1000, as
every session here comes from 127.0.0.1. The teacher is a protocol session on /class (protocol_client.py)
that starts a class; the students join it: ``--browser-students`` (4) are headless Chromium pages (a
phone's size and user agent), the rest speak Streamlit's WebSocket protocol and, as a student's page
does (``ui/follow.js``), read the class's version over HTTP about every second and ask for a run when it
moved. Then:

1. **steps**: the teacher presses Next (Previous from the tour's last step) ``--steps`` times, 2-4 s
   apart; for every student, the time from the teacher's run finishing (and from the click) to the
   student's page showing the step's title: the end of a protocol student's run that has it, the moment
   a Chromium page's <h3> holds it (a MutationObserver in the page). Target: p95 <= 2 s, median <= 1 s.
   (A student may show it a little before the teacher's run ends: the class changes as that run starts.)
2. **answers**: the teacher asks a question; every student answers at a random moment of a 5 s window;
   the time from the last answer's run finishing to the teacher's status showing "N of N answered"
   (target <= 2 s), and the revealed counts checked against what was sent (for Redis also the record
   as stored).
3. **idle**: the class follows a tour step for ``--idle-seconds``: the server's CPU (% of one core,
   /proc utime+stime of it and its children), its RSS growth and errors (exception elements, failed
   runs, closed sockets, page errors). Targets: <= 15 %, <= 50 MB, 0. Then as many sessions idle on
   /teach, which does not poll, for ``--baseline-seconds``: the cost of polling beside it.
4. **vote stuffing**: a server with the default answer limit (joins still raised, so that all join) and
   one with the default environment: 50 sessions from 127.0.0.1 join with tokens of their own and
   answer. How many answers were counted (target <= 2), and the teacher's notice of the refused ones.

5. **the Explorer** (``--explorer-n``, 0 to skip): while the class still follows, a Chromium tab of its
   own times the Explorer's switches, depth and block (browser_latency.py's widget part: the input event
   to every chart drawn); then the same once the class has left the server. Target: the bar of #16's
   benchmark held while the class follows (every chart's p95 <= 100 ms); the ratios to the same server
   alone are reported beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks import browser_latency, local_server
from benchmarks import harness as h
from benchmarks.classroom_load import LOCAL_ONLY, slope_mb_per_min
from benchmarks.protocol_client import FINISHED_OK, ProtocolSession, widget_key
from server.class_store import RedisStore
from ui.class_views import answers_description
from ui.examples import plain_text
from ui.lessons import QUESTIONS, TOUR
from ui.live_class import Answer, LiveClass, counts, new_student
from ui.text import Text

T = Text("en")
RAISED = {"BLOCKSTAB_ANSWERS_PER_ADDRESS": "1000", "BLOCKSTAB_JOINS_PER_MINUTE": "1000"}
WAIT_S = 20.0  # the longest any one thing is waited for
ANSWER_WINDOW_S = 5.0
# Between two steps: a random pause. A step makes every page run at once, and a page's poll timer restarts
# with its run, so the class polls in step; a fixed pause of whole poll intervals would press just after a poll.
STEP_PAUSE_S = (2.0, 4.0)
SETTLE_S = 5.0
EXPLORER_KINDS = ["residual", "norm", "depth_alt", "block_alt"]  # the Explorer's interactions timed (phase 5)
STUFFERS = 50
# Vote stuffing's servers: (name, log name, BLOCKSTAB_ variables); the first lets all 50 join.
STUFFING = (("default answer limit", "answers", {"BLOCKSTAB_JOINS_PER_MINUTE": "1000"}),
            ("default environment", "defaults", {}))

# In a Chromium page: every change of the app's script state, with its Date.now().
STATES_LOG = """(() => {
  const log = window.__states = [];
  const watch = () => {
    const app = document.querySelector('[data-testid=stApp]');
    if (!app) return setTimeout(watch, 50);
    new MutationObserver(() => log.push([Date.now(), app.getAttribute('data-test-script-state')]))
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  };
  watch();
})();"""
# A promise, kept in the page, of the Date.now() at which an element matching a selector holds a text.
WATCH = """([selector, text]) => {
  const W = window.__watch = window.__watch || {n: 0, done: {}};
  const key = ++W.n;
  const shown = () => [...document.querySelectorAll(selector)].some(e => e.textContent.includes(text));
  W.done[key] = new Promise(resolve => {
    if (shown()) return resolve(Date.now());
    const observer = new MutationObserver(() => { if (shown()) { observer.disconnect(); resolve(Date.now()); } });
    observer.observe(document.body, {childList: true, subtree: true, characterData: true});
  });
  return key;
}"""
SEEN = "key => window.__watch.done[key]"
# The end of the first script run that started at or after ``since`` (Date.now() ms), if it has ended.
RUN_AFTER = """since => {
  const log = window.__states || [];
  const i = log.findIndex(([t, s]) => t >= since && s !== 'notRunning');
  const done = i < 0 ? undefined : log.slice(i + 1).find(([, s]) => s === 'notRunning');
  return done ? done[0] : null;
}"""
# A deep link's first requests: the frontend looks for the server under the page's path, then at the root.
PROBE = re.compile(r"^/[^/]+/_stcore/(health|host-config)$")


def status_line(students: int, answered: int | None = None) -> str:
    """The teacher's status, as the page words it."""
    line = T("class.one_student") if students == 1 else T("class.students", count=students)
    return line if answered is None else line + " · " + T("class.answered", answered=answered, students=students)


def template(key: str, *fields: str) -> re.Pattern:
    """A catalog string as a pattern, each of ``fields`` a number."""
    text = re.escape(T(key, **{f: f"\0{f}\0" for f in fields}))
    for f in fields:
        text = text.replace(re.escape(f"\0{f}\0"), r"(\d+)")
    return re.compile(text)


ANSWERED = template("class.answered", "answered", "students")
REFUSED = template("class.refused", "count")


class Page(ProtocolSession):
    """A protocol session that polls as the browser does and tells when a run that shows something ends."""

    def __init__(self, port: int, query: str, page_name: str):
        super().__init__(port, query, page_name, follows=True)
        self.watches: list[tuple[Callable[[Page], bool], asyncio.Future]] = []
        self.runs: Counter = Counter()  # finished runs by status
        self.last_status: int | None = None

    def _take(self, msg: ForwardMsg) -> None:
        super()._take(msg)
        if msg.WhichOneof("type") != "script_finished":
            return
        self.runs[msg.script_finished] += 1
        self.last_status = msg.script_finished
        if msg.script_finished in FINISHED_OK:
            now = time.time()
            for shown, done in self.watches:
                if not done.done() and shown(self):
                    done.set_result(now)
            self.watches = [w for w in self.watches if not w[1].done()]

    def watch(self, shown: Callable[[Page], bool]) -> asyncio.Future:
        """The time.time() at which the first run from now that ``shown`` holds for finished."""
        done = asyncio.get_running_loop().create_future()
        self.watches.append((shown, done))
        return done

    def texts(self, kind: str) -> list[str]:
        """The bodies of the ``kind`` elements (heading, markdown, alert) of the last finished run."""
        return [getattr(e, kind).body for e in self.finished_elements if e.WhichOneof("type") == kind]

    def widget(self, kind: str, key_prefix: str):
        """The last finished run's ``kind`` widget whose key starts with ``key_prefix``, if any."""
        return next((getattr(e, kind) for e in self.finished_elements if e.WhichOneof("type") == kind
                     and widget_key(getattr(e, kind).id).startswith(key_prefix)), None)

    def polls(self) -> int:
        """Polls so far: the page's reads of what it shows of the class."""
        return self.version_reads

    def problems(self) -> Counter:
        """Exception elements, failed runs and a closed socket, so far."""
        closed = self.ws.close_code is not None
        return Counter({"exception elements": self.exceptions, "closed sockets": int(closed),
                        "failed runs": self.runs[ForwardMsg.FINISHED_WITH_COMPILE_ERROR]})


def says(kind: str, text: str) -> Callable[[Page], bool]:
    """Whether a page's last finished run has a ``kind`` element that is ``text``."""
    return lambda page: text in page.texts(kind)


def mentions(kind: str, text: str) -> Callable[[Page], bool]:
    """Whether a page's last finished run has a ``kind`` element that contains ``text``."""
    return lambda page: any(text in body for body in page.texts(kind))


def title(step: int) -> str:
    return T(f"tour.{TOUR[step].id}.title")


class Teacher(Page):
    def __init__(self, port: int):
        super().__init__(port, "lang=en", "class")

    async def start(self) -> str:
        """Open /class and start a class: its code."""
        await self.connect(timeout=60)
        await self.rerun(extra=(self.trigger("class_start"),), timeout=60)
        return dict(parse_qsl(self.query))["class"]

    def trigger(self, key: str) -> WidgetState:
        """A press of the button ``key``, as the browser reports it."""
        button = self.widget("button", key)
        if button is None or widget_key(button.id) != key:
            raise LookupError(f"no button {key!r} on the teacher's page")
        return WidgetState(id=button.id, trigger_value=True)

    async def press(self, key: str, shown: Callable[[Page], bool]) -> tuple[float, float]:
        """Press ``key``: (when it was sent, when the teacher's first run showing ``shown`` finished)."""
        done = self.watch(shown)
        sent = time.time()
        await self.send_rerun(extra=(self.trigger(key),))
        return sent, await asyncio.wait_for(done, WAIT_S)

    def step(self) -> int:
        return next(i for i in range(len(TOUR)) if says("heading", title(i))(self))

    def question(self) -> int:
        return next(i for i, q in enumerate(QUESTIONS) if mentions("markdown", T(f"ex.{q.id}.prompt"))(self))

    def status(self) -> tuple[int, int] | None:
        """(answered, refused) as the status says them during a question."""
        answered = next((m for b in self.texts("heading") if (m := ANSWERED.search(b))), None)
        refused = next((m for b in self.texts("alert") if (m := REFUSED.search(b))), None)
        return None if answered is None else (int(answered.group(1)), int(refused.group(1)) if refused else 0)


class ProtocolStudent:
    """A student's phone as a protocol session on /join, with a token of its own."""

    kind = "protocol"

    def __init__(self, port: int, code: str):
        self.token = new_student()
        self.page = Page(port, f"class={code}&lang=en&me={self.token}", "join")

    async def open(self) -> None:
        await self.page.connect(timeout=60)

    def joined(self) -> bool:
        """In the class (it starts on the tour's first step), not refused at the door."""
        return says("heading", title(0))(self.page) and not says("alert", T("class.too_many_tries"))(self.page)

    async def expect(self, step: int | None) -> Awaitable[float]:
        """When the page first shows tour step ``step`` (``None``: the question's choices)."""
        if step is None:
            return self.page.watch(lambda page: page.widget("radio", "class_answer_") is not None)
        return self.page.watch(says("heading", title(step)))

    async def answer(self, label: str) -> tuple[float, float | None]:
        """Choose ``label``: (when it was sent, when its run finished)."""
        radio = self.page.widget("radio", "class_answer_")
        if label not in radio.options:
            raise ValueError(f"{label!r} is not one of {list(radio.options)}")
        state = WidgetState(id=radio.id, string_value=label)
        self.page.remembered[widget_key(radio.id)] = state  # as in a browser, later runs report the choice
        done = self.page.watch(lambda page: page.last_status == ForwardMsg.FINISHED_SUCCESSFULLY)
        sent = time.time()
        await self.page.send_rerun(extra=(state,))
        return sent, await asyncio.wait_for(done, WAIT_S)

    def told_refused(self) -> bool:
        return says("alert", T("class.answer_refused"))(self.page)

    async def polls(self) -> int:
        return self.page.polls()

    async def problems(self) -> Counter:
        return self.page.problems()

    async def close(self) -> None:
        await self.page.close()


class BrowserPage:
    """A headless Chromium page (a phone's size and user agent) in a context of its own."""

    kind = "browser"

    def __init__(self, browser, url: str, ready: str):
        self.browser, self.url, self.ready = browser, url, ready  # ready: a text the opened page shows
        self.errors: list[str] = []
        self.probes = 0  # the frontend's 404s on a deep link: it looks for the server under the page's path first
        self.version_reads = 0  # a student's page's polls (ui/follow.js)

    async def open(self) -> None:
        self.context = await self.browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US",
                                                      user_agent=local_server.PHONE_USER_AGENT)
        await self.context.add_init_script(STATES_LOG)
        self.page = await self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"[:200]))
        self.page.on("console", self._console)
        self.page.on("response", self._response)
        await self.page.goto(self.url, wait_until="commit", timeout=60_000)
        # (the visible one: a phone's closed sidebar holds the page's name too, hidden)
        await self.page.get_by_text(self.ready).filter(visible=True).first.wait_for(timeout=60_000)
        await self.page.wait_for_selector(h.IDLE, state="attached", timeout=60_000)

    def _console(self, message) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):  # (see _response)
            self.errors.append(f"console: {message.text}"[:200])

    def _response(self, response) -> None:
        if response.status < 400:
            self.version_reads += urlsplit(response.url).path.startswith("/api/class/")
            return
        if PROBE.match(urlsplit(response.url).path):
            self.probes += 1
        else:
            self.errors.append(f"HTTP {response.status}: {response.url}"[:200])

    async def polls(self) -> int:
        """Reads of the class's version so far (the page's polls)."""
        return self.version_reads

    async def problems(self) -> Counter:
        shown = await self.page.locator(h.EXCEPTION).count()
        return Counter({"page/console errors": len(self.errors), "exceptions shown": shown})

    async def close(self) -> None:
        with contextlib.suppress(Exception):  # a context already gone
            await self.context.close()


class BrowserStudent(BrowserPage):
    """A student's phone as a Chromium page on /join, with a token of its own."""

    def __init__(self, browser, base: str, code: str):
        self.token = new_student()
        super().__init__(browser, f"{base}/join?class={code}&lang=en&me={self.token}", T("join.in_class", code=code))

    def joined(self) -> bool:
        return True  # a page that does not show the class fails to open

    async def expect(self, step: int | None) -> Awaitable[float]:
        """When the page first shows tour step ``step`` (``None``: the question's choices), seen in the page."""
        watched = ["h3", title(step)] if step is not None else ["[data-testid=stRadio]", T("join.your_answer")]
        key = await self.page.evaluate(WATCH, watched)
        return asyncio.ensure_future(self._seen(key))

    async def _seen(self, key: int) -> float:
        return await self.page.evaluate(SEEN, key) / 1000

    async def answer(self, label: str) -> tuple[float, float | None]:
        """Click ``label``: (when, the end of the first run that started after it; ``None`` if none was seen)."""
        sent = time.time()
        await self.page.get_by_text(label, exact=True).click()
        try:
            done = await self.page.wait_for_function(RUN_AFTER, arg=sent * 1000, timeout=WAIT_S * 1000, polling=50)
        except Exception:  # noqa: BLE001 - a run too quick to show its state; the teacher still times the answer
            return sent, None
        return sent, await done.json_value() / 1000

    def told_refused(self) -> bool:
        return False  # (vote stuffing uses protocol sessions only)


# --- servers and /proc ----------------------------------------------------------------------------


@contextlib.contextmanager
def app_server(store: str, settings: dict[str, str], logs: Path, name: str):
    """The app with ``settings`` its only BLOCKSTAB_ variables (for Redis, with a fresh redis-server of its
    own: no other server start filled its rate-limit windows): ``(base, pid, redis_url)``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOCKSTAB_")} | settings
    with contextlib.ExitStack() as stack:
        url = None
        if store == "redis":
            url = stack.enter_context(local_server.redis_server(logs / f"{name}-redis.log", h.APP_ROOT))
            env["BLOCKSTAB_CLASS_STORE"] = url
        base, server = stack.enter_context(local_server.streamlit_server("app.py", logs / f"{name}.log", h.APP_ROOT,
                                                                         env=env))
        yield base, server.pid, url


def cpu_split(server_pid: int) -> dict[str, float]:
    """CPU seconds so far: the server (and its children, ended ones included), of which its worker
    processes (bundles built ahead), redis-server, Chromium (every other process below this one) and this
    process (the protocol sessions)."""
    server = {server_pid, *h.descendants(server_pid)}
    others = [p for p in h.descendants(os.getpid()) if p not in server]
    redis = [p for p in others if Path(f"/proc/{p}/comm").exists()
             and Path(f"/proc/{p}/comm").read_text().strip() == "redis-server"]
    seconds = {p: h.cpu_seconds(p) or 0.0 for p in (*others, os.getpid())}
    tree = h.tree_cpu_seconds(server_pid)
    return {"server": tree, "workers": tree - (h.cpu_seconds(server_pid) or 0.0),
            "redis": sum(seconds[p] for p in redis), "browser": sum(seconds[p] for p in others if p not in redis),
            "benchmark": seconds[os.getpid()]}


async def usage(server_pid: int, seconds: float, every: float = 5.0) -> dict:
    """Over ``seconds``: CPU (% of one core) of the server and beside it, and the server's RSS."""
    t, rss, cpu, machine = [], [], [], []
    end = time.monotonic() + seconds
    for _ in range(100_000):
        t.append(time.monotonic())
        rss.append(h.rss_mb(server_pid) or 0.0)
        cpu.append(cpu_split(server_pid))
        machine.append(h.machine_cpu())
        if t[-1] >= end:
            break
        await asyncio.sleep(min(every, end - t[-1]))
    elapsed = t[-1] - t[0]
    busy = 100 * (machine[-1][0] - machine[0][0]) / max(1, machine[-1][1] - machine[0][1])
    return {"seconds": elapsed, "cpu_percent": {k: 100 * (cpu[-1][k] - cpu[0][k]) / elapsed for k in cpu[0]},
            "machine_busy_percent": busy, "rss_start_mb": rss[0], "rss_end_mb": rss[-1], "rss_peak_mb": max(rss),
            "rss_growth_mb": rss[-1] - rss[0], "rss_mb_per_min": slope_mb_per_min(t, rss)}


def log_problems(path: Path) -> list[str]:
    """The server log's lines that speak of a problem."""
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    return [x[:200] for x in lines if re.search(r"Traceback|Error|Exception|WARNING|CRITICAL", x)]


async def bounded(done: Awaitable[float]) -> float | None:
    """``done``'s time, or ``None`` after :data:`WAIT_S`."""
    try:
        return await asyncio.wait_for(done, WAIT_S)
    except TimeoutError:
        return None


async def problems(sessions: list) -> Counter:
    return sum([await s.problems() for s in sessions], Counter())


async def polls(sessions: list) -> Counter:
    """Polls so far, by kind of session."""
    return sum([Counter({s.kind: await s.polls()}) for s in sessions], Counter())


# --- the class ------------------------------------------------------------------------------------


async def join(browser, base: str, code: str, args) -> list:
    """The students, Chromium pages first, one every ``--join-every`` s (those that could not open left out)."""
    port = int(base.rsplit(":", 1)[1])
    students: list = [BrowserStudent(browser, base, code) for _ in range(args.browser_students)]
    students += [ProtocolStudent(port, code) for _ in range(args.students - args.browser_students)]

    async def one(student, delay: float):
        await asyncio.sleep(delay)
        try:
            await student.open()
            return student
        except Exception as error:  # noqa: BLE001 - counted, never fatal
            print(f"  a {student.kind} student could not open the class: {type(error).__name__}: {error}"[:300])
            await student.close()
            return None

    opened = await asyncio.gather(*(one(s, n * args.join_every) for n, s in enumerate(students)))
    return [s for s in opened if s is not None and s.joined()]


async def follow(teacher: Teacher, students: list, key: str, step: int | None) -> dict:
    """Press ``key``; each student's time to show tour step ``step`` (``None``: the question's choices)."""
    shown = [await s.expect(step) for s in students]
    ready = says("heading", title(step)) if step is not None else (
        lambda page: page.widget("selectbox", "class_question_") is not None)
    sent, applied = await teacher.press(key, ready)
    times = await asyncio.gather(*(bounded(d) for d in shown))
    return {"step": step, "sent": sent, "applied": applied, "teacher_ms": 1000 * (applied - sent),
            "shown": [{"kind": s.kind, "after_applied_ms": None if x is None else 1000 * (x - applied),
                       "after_click_ms": None if x is None else 1000 * (x - sent)}
                      for s, x in zip(students, times, strict=True)]}


async def steps(teacher: Teacher, students: list, count: int, rng: random.Random) -> list[dict]:
    """Next, Next... (Previous from the last step), ``count`` times, timed at every student."""
    out = []
    for _ in range(count):
        step = teacher.step()
        forward = step < len(TOUR) - 1
        out.append(await follow(teacher, students, "class_next" if forward else "class_previous",
                                step + 1 if forward else step - 1))
        await asyncio.sleep(rng.uniform(*STEP_PAUSE_S))
    return out


async def answer_all(students: list, question: int, rng: random.Random) -> tuple[dict[str, str], list[dict]]:
    """Every student answers a random choice at a random moment of the answer window: what was sent, and when."""
    choices = {s.token: rng.choice(QUESTIONS[question].choices) for s in students}

    async def one(student, delay: float) -> dict:
        await asyncio.sleep(delay)
        try:
            sent, done = await student.answer(T(QUESTIONS[question].choice_key(choices[student.token])))
        except Exception as error:  # noqa: BLE001 - counted
            return {"kind": student.kind, "sent": time.time(), "done": None, "error": f"{type(error).__name__}"}
        return {"kind": student.kind, "sent": sent, "done": done, "error": None}

    return choices, list(await asyncio.gather(*(one(s, rng.uniform(0, ANSWER_WINDOW_S)) for s in students)))


def expected(question: int, choices: dict[str, str], students: list) -> LiveClass:
    """The class once every answer in ``choices`` is counted."""
    return LiveClass(code="", teacher="", lang="en", question=question, students=frozenset(s.token for s in students),
                     answers={token: Answer(choice, "") for token, choice in choices.items()})


async def answers(teacher: Teacher, students: list, rng: random.Random, redis_url: str | None, code: str) -> dict:
    """Ask; everyone answers within the window; the teacher's count; the counts revealed (and stored)."""
    asked = await follow(teacher, students, "class_show_question", None)
    question, n = teacher.question(), len(students)
    counted = teacher.watch(says("heading", status_line(n, n)))
    choices, timing = await answer_all(students, question, rng)
    last_sent = max(x["sent"] for x in timing)
    last_done = max((x["done"] for x in timing if x["done"] is not None), default=None)
    at = await bounded(counted)
    status = teacher.status()
    record = expected(question, choices, students)
    description = answers_description(record, T)
    with contextlib.suppress(TimeoutError):  # nothing revealed: no description to compare
        await teacher.press("class_reveal", mentions("markdown", "answered"))
    shown = [plain_text(b) for b in teacher.texts("markdown") if "answered" in b]
    stored = RedisStore(redis_url).read(code) if redis_url else None
    return {"question_shown": asked, "students": n, "answers_sent": len(choices),
            "answer_errors": [x["error"] for x in timing if x["error"]],
            "answer_runs": [{"kind": x["kind"], "ms": 1000 * (x["done"] - x["sent"])} for x in timing
                            if x["done"] is not None],
            "browser_answers_untimed": sum(1 for x in timing if x["done"] is None and not x["error"]),
            "status_after_last_done_ms": None if at is None or last_done is None else 1000 * (at - last_done),
            "status_after_last_sent_ms": None if at is None else 1000 * (at - last_sent),
            "status_seen": status, "sent_counts": counts(record), "revealed": shown,
            "revealed_counts_match": description in shown,
            "stored_counts": counts(stored) if stored else None,
            "stored_counts_match": None if stored is None else counts(stored) == counts(record)
            and set(stored.answers) == set(choices)}


async def idle(teacher: Teacher, students: list, server_pid: int, step: int, seconds: float) -> dict:
    """The class back on tour step ``step``, then ``seconds`` of following it: CPU, RSS, polls, errors;
    then one more step, to see that everyone still follows."""
    back = await follow(teacher, students, "class_show_tour", step)
    await asyncio.sleep(SETTLE_S)
    polls_before, teacher_polls, errors_before = await polls(students), teacher.polls(), await problems(students)
    used = await usage(server_pid, seconds)
    student_polls = await polls(students) - polls_before
    errors = await problems(students) - errors_before
    forward = step < len(TOUR) - 1
    after = await follow(teacher, students, "class_next" if forward else "class_previous",
                         step + 1 if forward else step - 1)
    return {"back_on_tour": back, **used, "polls_per_s": {k: n / used["seconds"] for k, n in student_polls.items()},
            "teacher_polls_per_s": (teacher.polls() - teacher_polls) / used["seconds"], "errors": dict(errors),
            "following_after": after}


async def idle_elsewhere(browser, base: str, server_pid: int, args) -> dict:
    """The baseline: as many sessions (browser pages as many) idle on /teach, which does not poll."""
    port = int(base.rsplit(":", 1)[1])
    sessions: list = [BrowserPage(browser, f"{base}/teach?lang=en", T("teach.title"))
                      for _ in range(args.browser_students)]
    sessions += [Page(port, "lang=en", "teach") for _ in range(args.students - args.browser_students + 1)]
    for session in sessions:
        await (session.open() if isinstance(session, BrowserPage) else session.connect(timeout=60))
        await asyncio.sleep(args.join_every)
    await asyncio.sleep(SETTLE_S)
    used = await usage(server_pid, args.baseline_seconds)
    errors = sum([s.problems() if isinstance(s, Page) else await s.problems() for s in sessions], Counter())
    for session in sessions:
        await session.close()
    return {"sessions": len(sessions), **used, "errors": dict(errors)}


def explorer_latency(base: str, n: int) -> dict:
    """The Explorer's own interactions (browser_latency's widget part: input event to every chart drawn) on
    the server at ``base``, in a Chromium of their own, on a thread of their own (the class goes on)."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only a run needs it

    en = h.app_catalog()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=h.CHROMIUM, args=[*h.CHROMIUM_ARGS, LOCAL_ONLY])
        app = browser_latency.App("ours", base, browser_latency.ours_labels(en), browser)
        try:
            return browser_latency.widgets([app], n, 3, EXPLORER_KINDS)["ours"]
        finally:
            browser.close()


async def live_class(browser, store: str, args, logs: Path) -> dict:
    """Steps, answers and idle following on one server with raised limits, then the /teach baseline."""
    rng = random.Random(args.seed)
    with app_server(store, RAISED, logs, f"{store}-class") as (base, pid, redis_url):
        teacher = Teacher(int(base.rsplit(":", 1)[1]))
        code = await teacher.start()
        students = await join(browser, base, code, args)
        in_class = await bounded(teacher.watch(says("heading", status_line(len(students)))))
        result = {"students": len(students), "browser_students": sum(s.kind == "browser" for s in students),
                  "teacher_counted_all": in_class is not None}
        result["steps"] = await steps(teacher, students, args.steps, rng)
        result["answers"] = await answers(teacher, students, rng, redis_url, code)
        step = result["steps"][-1]["step"] if result["steps"] else 0  # the class's tour step
        result["idle"] = await idle(teacher, students, pid, step, args.idle_seconds)
        if args.explorer_n:  # the class still following
            result["explorer_in_class"] = await asyncio.to_thread(explorer_latency, base, args.explorer_n)
        result["errors"] = dict(await problems(students) + teacher.problems())
        result["browser_messages"] = [e for s in students if s.kind == "browser" for e in s.errors][:10]
        result["deep_link_404s"] = sum(s.probes for s in students if s.kind == "browser")
        for session in (*students, teacher):
            await session.close()
        await asyncio.sleep(SETTLE_S)
        if args.explorer_n:  # the same server, the class gone
            result["explorer_alone"] = await asyncio.to_thread(explorer_latency, base, args.explorer_n)
        result["baseline"] = await idle_elsewhere(browser, base, pid, args)
        result["server_log"] = log_problems(logs / f"{store}-class.log")
    return result


async def stuffing(store: str, settings: dict[str, str], logs: Path, name: str, rng: random.Random) -> dict:
    """50 sessions of one address join (each a token of its own) and answer: what is counted, what is said."""
    with app_server(store, settings, logs, name) as (base, _pid, _url):
        port = int(base.rsplit(":", 1)[1])
        teacher = Teacher(port)
        code = await teacher.start()
        sessions = [ProtocolStudent(port, code) for _ in range(STUFFERS)]
        for session in sessions:
            await session.open()
        joined = [s for s in sessions if s.joined()]
        await bounded(teacher.watch(says("heading", status_line(len(joined)))))
        await follow(teacher, joined, "class_show_question", None)
        _, timing = await answer_all(joined, teacher.question(), rng)
        settled = await bounded(teacher.watch(lambda page: sum(page.status() or (0, 0)) >= len(joined)))
        counted, refused = teacher.status() or (None, None)
        result = {"settings": settings, "sessions": STUFFERS, "joined": len(joined),
                  "answers_sent": sum(1 for x in timing if not x["error"]), "counted": counted,
                  "refused_shown": refused, "status_settled": settled is not None,
                  "teacher_notice": [a for a in teacher.texts("alert") if REFUSED.search(a)],
                  "students_told_refused": sum(s.told_refused() for s in joined),
                  "errors": dict(await problems(sessions) + teacher.problems())}
        for session in (*sessions, teacher):
            await session.close()
        result["server_log"] = log_problems(logs / f"{name}.log")
    return result


# --- report ---------------------------------------------------------------------------------------


def known(values) -> list[float]:
    return [v for v in values if v is not None]


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def report_steps(r: dict) -> dict:
    shown = [x for step in r["steps"] for x in step["shown"]]
    applied = known(x["after_applied_ms"] for x in shown)
    missing = len(shown) - len(applied)
    late = sorted({f"{x['kind']} student {i}" for step in r["steps"] for i, x in enumerate(step["shown"])
                   if x["after_applied_ms"] is None})
    print(f"1. the teacher's step -> each student's page shows it: {len(r['steps'])} steps x {r['students']} students "
          f"({missing} not shown within {WAIT_S:.0f} s{': ' + ', '.join(late) if late else ''})")
    print(h.HEADER)
    print(h.fmt_row("after the teacher's run finished, all", applied))
    for kind, name in (("protocol", "protocol students (their run ended)"), ("browser", "Chromium students (in DOM)")):
        print(h.fmt_row(f"    {name}", known(x["after_applied_ms"] for x in shown if x["kind"] == kind)))
    print(h.fmt_row("after the teacher's click, all", known(x["after_click_ms"] for x in shown)))
    print(h.fmt_row("the teacher's own run (click -> finished)", [step["teacher_ms"] for step in r["steps"]]))
    each = [h.summary(known(x["after_click_ms"] for x in step["shown"] if x["kind"] == "protocol"))
            for step in r["steps"]]
    print("   each step, protocol students after the click, first / median / last (ms): "
          + ", ".join(f"{s.get('min', 0):.0f} / {s.get('median', 0):.0f} / {s.get('max', 0):.0f}" for s in each))
    out = {"not_shown": missing}
    for name, field in (("from the teacher's run finished", "after_applied_ms"), ("from the click", "after_click_ms")):
        summary = h.summary(known(x[field] for x in shown))
        ok = summary["n"] > 0 and missing == 0 and summary["p95"] <= 2000 and summary["median"] <= 1000
        print(f"   target p95 <= 2 s and median <= 1 s, every student, {name}: {verdict(ok)}")
        out[field] = {"median_ms": summary.get("median"), "p95_ms": summary.get("p95"), "met": ok}
    return out


def report_answers(a: dict) -> dict:
    delay = a["status_after_last_done_ms"]
    print(f"2. answers: {a['answers_sent']} sent at random moments of {ANSWER_WINDOW_S:.0f} s "
          f"({len(a['answer_errors'])} failed: {a['answer_errors'][:3]}; {a['browser_answers_untimed']} Chromium "
          "answers whose run was not seen)")
    print(h.HEADER)
    for kind, name in (("protocol", "protocol (run finished)"), ("browser", "Chromium (page idle again)")):
        print(h.fmt_row(f"answer's run, {name}", [x["ms"] for x in a["answer_runs"] if x["kind"] == kind]))
    shown = a["question_shown"]["shown"]
    print(h.fmt_row("question asked -> choices shown (after run)", known(x["after_applied_ms"] for x in shown)))
    n, sent = a["students"], a["status_after_last_sent_ms"]
    if sent is None:
        late = f"not within {WAIT_S:.0f} s"
    elif delay is None or delay >= 0:
        late = f"{'?' if delay is None else f'{delay:.0f}'} ms after the last answer's run finished"
    else:
        late = f"before the last answer's run finished (by {-delay:.0f} ms)"
    late += "" if sent is None else f", {sent:.0f} ms after the last answer was sent"
    ok = delay is not None and delay <= 2000
    print(f"   the teacher's status showed \"{status_line(n, n)}\" {late}; target <= 2 s: {verdict(ok)}")
    print(f"   counts sent {a['sent_counts']}; the revealed description says the same: "
          f"{'yes' if a['revealed_counts_match'] else 'NO: ' + str(a['revealed'])}"
          + ("" if a["stored_counts"] is None else
             f"; the record in Redis: {a['stored_counts']} ({'same' if a['stored_counts_match'] else 'DIFFERENT'})"))
    return {"status_after_last_answer_ms": delay, "met": ok and a["revealed_counts_match"]
            and a["stored_counts_match"] is not False}


def usage_line(u: dict) -> str:
    cpu = u["cpu_percent"]
    return (f"server CPU {cpu['server']:.1f} % of one core, {cpu['workers']:.1f} % of it in worker processes "
            f"(redis-server {cpu['redis']:.1f} %, Chromium "
            f"{cpu['browser']:.1f} %, this process {cpu['benchmark']:.1f} %; machine {u['machine_busy_percent']:.0f} % "
            f"of {os.cpu_count()} cores); RSS {u['rss_start_mb']:.0f} -> {u['rss_end_mb']:.0f} MB "
            f"({u['rss_growth_mb']:+.1f} MB, peak {u['rss_peak_mb']:.0f}, fit {u['rss_mb_per_min']:+.2f} MB/min)")


def report_idle(r: dict) -> dict:
    i, b = r["idle"], r["baseline"]
    print(f"3. idle: {r['students']} students and the teacher following a tour step for {i['seconds']:.0f} s")
    print(f"   {usage_line(i)}")
    kinds = Counter(x["kind"] for x in i["back_on_tour"]["shown"])
    print(f"   version reads: {i['polls_per_s'].get('protocol', 0):.1f}/s from {kinds['protocol']} protocol students, "
          f"{i['polls_per_s'].get('browser', 0):.1f}/s from {kinds['browser']} Chromium pages; "
          f"{i['teacher_polls_per_s']:.1f}/s from the teacher; errors while idle: {i['errors'] or 'none'}")
    after = h.summary(known(x["after_applied_ms"] for x in i["following_after"]["shown"]))
    print(f"   then one more step: {after['n']} of {r['students']} followed (median "
          f"{after.get('median', float('nan')):.0f} ms, p95 {after.get('p95', float('nan')):.0f} ms)")
    errors = sum(i["errors"].values())
    ok = i["cpu_percent"]["server"] <= 15 and i["rss_growth_mb"] <= 50 and errors == 0
    print(f"   targets CPU <= 15 %, RSS growth <= 50 MB, 0 errors: {verdict(ok)}")
    print(f"   baseline: {b['sessions']} sessions idle on /teach (no polling) for {b['seconds']:.0f} s: "
          f"{usage_line(b)}; errors: {b['errors'] or 'none'}")
    return {"cpu_percent": i["cpu_percent"]["server"], "baseline_cpu_percent": b["cpu_percent"]["server"],
            "rss_growth_mb": i["rss_growth_mb"], "errors": errors, "met": ok}


def report_stuffing(results: list[dict]) -> dict:
    print(f"4. vote stuffing: {STUFFERS} sessions from 127.0.0.1, each with a token of its own, join and answer")
    met = True
    for (name, _, _), s in zip(STUFFING, results, strict=True):
        ok = s["counted"] is not None and s["counted"] <= 2 and (s["refused_shown"] or 0) == s["answers_sent"] - s[
            "counted"] and bool(s["teacher_notice"]) == (s["answers_sent"] > s["counted"])
        met = met and ok
        print(f"   {name} ({s['settings'] or 'no BLOCKSTAB_ variable'}): {s['joined']} joined, {s['answers_sent']} "
              f"answered, {s['counted']} counted, {s['refused_shown']} refused as the teacher's page says "
              f"{s['teacher_notice'][:1]}; {s['students_told_refused']} students told theirs was not counted; "
              f"errors {s['errors']}; target <= 2 counted and the refused reported: {verdict(ok)}")
    return {"met": met}


def report_explorer(in_class: dict, alone: dict) -> dict:
    """The Explorer's p95 (input to every chart drawn) while the class follows, and the same server alone."""
    print(f"5. the Explorer in another tab (Chromium, {EXPLORER_KINDS}), while the class follows and once it left")
    print(h.HEADER)
    p95s, ratios = {}, {}
    for kind in EXPLORER_KINDS:
        both = [browser_latency.values(run.get(kind, []), "last") for run in (in_class, alone)]
        for name, samples in zip(("while the class follows", "alone"), both, strict=True):
            print(h.fmt_row(f"{kind}, {name}", samples))
        if all(both):
            p95s[kind] = h.percentile(both[0], 95)
            ratios[kind] = p95s[kind] / h.percentile(both[1], 95)
    errors = sum(1 for run in (in_class, alone) for kind in EXPLORER_KINDS for x in run.get(kind, []) if x.get("error"))
    ok = errors == 0 and len(p95s) == len(EXPLORER_KINDS) and max(p95s.values()) <= 100
    print(f"   p95 with the class / alone: {', '.join(f'{k} {v:.2f}' for k, v in ratios.items())}; {errors} timed out;"
          f" target, #16's bar while the class follows (every chart p95 <= 100 ms): {verdict(ok)}")
    return {"p95_ms": p95s, "p95_ratios": ratios, "errors": errors, "met": ok}


def report_log(name: str, lines: list[str]) -> None:
    print(f"   server log ({name}): {len(lines)} lines of warnings/errors" + "".join(f"\n     {x}" for x in lines[:5]))


def report(store: str, r: dict) -> dict:
    print(f"\n== {store} store: a teacher and {r['students']} students ({r['browser_students']} Chromium pages), "
          f"{' '.join(f'{k}={v}' for k, v in RAISED.items())} ==")
    if not r["teacher_counted_all"]:
        print(f"   the teacher's status never said \"{status_line(r['students'])}\"")
    summary = {"steps": report_steps(r), "answers": report_answers(r["answers"]), "idle": report_idle(r)}
    print(f"   errors over the whole class: {r['errors'] or 'none'}; Chromium messages: {r['browser_messages'][:3]} "
          f"(and {r['deep_link_404s']} 404s of the frontend looking for the server under /join/ first: Streamlit's "
          "own probe on a deep link, not counted)")
    report_log("class", r["server_log"])
    if "explorer_in_class" in r:
        summary["explorer"] = report_explorer(r["explorer_in_class"], r["explorer_alone"])
    summary["stuffing"] = report_stuffing(r["stuffing"])
    for (_, name, _), s in zip(STUFFING, r["stuffing"], strict=True):
        report_log(name, s["server_log"])
    return summary


async def measure(browser, store: str, args, logs: Path) -> dict:
    """Every part on ``store``, reported as soon as measured."""
    result = await live_class(browser, store, args, logs)
    rng = random.Random(args.seed)
    result["stuffing"] = [await stuffing(store, settings, logs, f"{store}-{name}", rng)
                          for _, name, settings in STUFFING]
    result["summary"] = report(store, result)
    return result


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright  # noqa: PLC0415 - only a run needs it

    logs = Path(tempfile.mkdtemp(prefix="blockstab-live-class-"))
    print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}; server logs in {logs}", flush=True)
    results: dict = {}
    with h.ForeignLoad() as foreign:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=h.CHROMIUM, args=[*h.CHROMIUM_ARGS, LOCAL_ONLY])
            for store in ("memory", "redis") if args.store == "both" else (args.store,):
                try:
                    results[store] = await measure(browser, store, args, logs)
                except Exception as error:  # noqa: BLE001 - the other store is still measured
                    print(f"\n== {store} store: FAILED: {type(error).__name__}: {error}", flush=True)
                    traceback.print_exc()
                    results[store] = {"failed": f"{type(error).__name__}: {error}"}
            await browser.close()
    print(f"\n{foreign.summary()}")
    return {"app": f"{h.APP_ROOT} at {h.git_state(h.APP_ROOT)}", "logs": str(logs), "results": results,
            "foreign_cpu_mean": sum(foreign.samples) / max(1, len(foreign.samples))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("memory", "redis", "both"), default="both")
    parser.add_argument("--students", type=int, default=40, help="students in all (Chromium pages included)")
    parser.add_argument("--browser-students", type=int, default=4, help="how many are headless Chromium pages")
    parser.add_argument("--steps", type=int, default=8, help="tour steps the teacher leads the class through")
    parser.add_argument("--idle-seconds", type=float, default=300.0)
    parser.add_argument("--baseline-seconds", type=float, default=60.0, help="sessions idle on /teach")
    parser.add_argument("--join-every", type=float, default=0.25, help="seconds between two students joining")
    parser.add_argument("--explorer-n", type=int, default=20,
                        help="timed Explorer interactions of each kind, with the class and alone (0: not measured)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--app-root", type=Path, help="measure the app in this checkout / snapshot")
    args = parser.parse_args()
    h.use_app_root(args.app_root)
    args.students = max(1, min(args.students, 200))
    args.browser_students = max(0, min(args.browser_students, args.students))
    h.check_chromium()
    record = asyncio.run(main_async(args))
    h.write_record(args.json, args, record)


if __name__ == "__main__":
    main()
