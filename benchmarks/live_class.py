"""A live class of 200 on its light student page (issue #48): a teacher on /class and the students' pages of
/join, on the embedded store and on Redis, and once (``--cluster``) on two replicas behind HAProxy with one
killed under the class.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.live_class --json /tmp/live.json                    # both stores, ~25 min
    .venv/bin/python -m benchmarks.live_class --store none --cluster                   # the cluster, once
    .venv/bin/python -m benchmarks.live_class --store none --cluster --tls --join-every 0.3  # and through HTTPS
    .venv/bin/python -m benchmarks.live_class --store memory --students 20 --idle-seconds 20 --explorer-n 0

For each store it starts the app (``python -m server``; for Redis with a ``redis-server`` of its own,
scripts/redis.sh) with every limit at its default (server/policy.py: sized so that a class behind one address meets
none, so the Chromium pages sharing 127.0.0.1 need nothing raised). The teacher is a Streamlit protocol session on
/class (testbed/protocol_client.py) whose page polls the class's version as ``widgets/follow.js`` does. The
students: ``--browser-students`` (4) headless Chromium pages of /join (a phone's size and user agent, from
127.0.0.1) and the rest scripted, each from a loopback address of its own (127.0.1.1, 127.0.1.2, ...: the server
sees the socket's peer) and doing what ui/student/page.js does: load the page (/join, its style and script), join
(``POST .../join``), follow the class's event stream (opened again after its ``retry`` if it breaks; polled every
second if a reconnection is refused, as the page falls back), and read what each state shows: a tour step's file
(and Plotly.js once), the questions' file, the reveal, the Explorer's file and bundle (the index read afresh, the
figures, the block range in view).

The class starts; ``--settle-seconds`` (60) after it (its Explorer parts built ahead meanwhile,
server.class_files.build_ahead_for) the teacher leads ``--small-class`` (40) students, then all of them:

1. **step**: the teacher presses Next (Previous from the tour's last step) ``--steps`` times, 2-4 s apart.
   Timed from the click, the moment the teacher's session sends the button's rerun (``time.time()``), to
   each student showing the step: a scripted student's stream delivering the state with it (the moment this
   process read it), a Chromium page's ``#activity h2`` holding its title (a MutationObserver in the page,
   ``performance.timeOrigin + performance.now()``). Target, every student: median <= 150 ms, p95 <= 300 ms.
   A Chromium page is timed to its step's title painted too (the first animation frame after it was placed: where
   a page draws its figure in the same task, that is once the figure is drawn) and to its figure drawn (its
   ``.plot`` marked ``data-drawn`` once Plotly.js drew it), each phone's apart. Target (issue #61, 12 Chromium
   phones): the figure drawn, p95 <= 700 ms.
2. **"show me"**: the teacher asks a question, the class answers (5.), the teacher reveals, then presses
   "Show me": timed from that click to a scripted student having its state and the files its page reads for
   the view (``explorer-en-follow.json``, the bundle's ``index.js``, ``figures.js`` and the block range in
   view, ``blocks-1.js``, of a phone's bundle), a Chromium page's ``.instant-explorer`` having
   ``data-drawn`` equal to the view. Target p95 <= 1 s.
3. **idle**: back on a tour step, ``--idle-seconds`` (300) of following it: the server's CPU (% of one core,
   it and its children), its RSS growth, and errors (a stream that ended or broke, an HTTP error, a page
   error). Targets <= 3 %, <= 20 MB, 0.
4. **a step's cost**: the server process's CPU seconds from the click until every student has drawn the step
   (a scripted student: its state and the step's file; a Chromium page: its title), per step, at 0 students
   (the teacher's own run), at ``--small-class`` (twice ``--steps``: a step's first visit on a server makes its
   files, and is reported apart) and at the whole class: it should hardly grow with the class.
5. **answers**: every student answers at a random moment of a 5 s window; the counts revealed (each scripted
   student's GET of the reveal) against what was sent, and for Redis the record as stored. (Vote stuffing is a
   class's seats now, issue #59: tests/server/test_class_routes.py and tests/app/test_live_class_pages.py check
   the seat count, the lock and "remove the last minute's joins"; nothing here times it.)
6. **a flood** (the embedded store): one computer (127.0.0.9) reads ``/api/class/CODE/state`` as fast as it
   can on 50 keep-alive connections (a process of its own) while the teacher leads ``--steps`` steps: the
   step's p95 against the quiet class's (target <= 1.5x), and the flooder's answers by status.
7. The Explorer (``--explorer-n``, 0 to skip): a Chromium tab of its own times the Explorer's switches, depth
   and block (browser_latency.py's widget part) while the class follows, and again once it has left.

``--cluster``: ``scripts/serve_cluster.sh --replicas 2`` (benchmarks/cluster.py starts it, with HAProxy's
per-address limits raised for the Chromium pages and the teacher on 127.0.0.1). The teacher comes through
HAProxy pinned to replica 2 by its affinity cookie, as its browser would be once placed there; the students
come through HAProxy, each from its own address, keeping the cookie HAProxy sets as a browser does, so that
a student's stream is on the replica its cookie names (checked: the streams that break at the kill are
those). The class goes along the live script to its first question; every student answers, those of replica 1
last, just before replica 1 is SIGKILLed; the record is read from Redis at once; the teacher presses "Next in
script" (the next question): every student shows it within 3 s (target); every student answers it (those of
replica 1 twice, half of them changing their choice): each answer counted once, as stored. Before the script, the
teacher leads ``--steps`` tour steps (1.), and HAProxy's CPU seconds (/proc) are read while the class joins.

``--tls`` (with ``--cluster``): then the same cluster's class again, right after, through HTTPS (issue #58): HAProxy
with ``--tls`` and a self-signed certificate made by ``openssl`` (testbed.local_server.self_signed_pem), the scripted
students and the teacher speaking HTTPS to it (HTTP/1.1, trusting that certificate), the Chromium pages too (HTTP/2,
certificate errors ignored). Compared before the kill: every lead's time from the click to each student (median, p95;
target: HTTPS <= 1.2x plain) and HAProxy's CPU seconds while the class joined (``--join-every 0.3``: in a minute);
``--pairs N`` repeats the two. ``--tls-split``: one class, every other scripted student through the HTTPS HAProxy
and the rest through a plain one before the same replicas, each lead compared at both kinds at once (run to run,
the back-to-back pairs differed more than TLS could add; docs/benchmarks-rounds.md, round 40b).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import html
import json
import multiprocessing
import os
import random
import re
import signal
import ssl
import statistics
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks import browser_latency
from benchmarks import harness as h
from benchmarks.classroom_load import LOCAL_ONLY, slope_mb_per_min
from server.class_store import RedisStore
from testbed import local_server
from testbed.protocol_client import FINISHED_OK, ProtocolSession, widget_key
from ui.bundle import range_first, range_part
from ui.class_views import answers_description
from ui.lessons import LIVE_SCRIPT, QUESTIONS, TOUR
from ui.live_class import LiveClass, ask, counts, join, reveal, show_me, start, student_state
from ui.student_page import questions_file
from ui.text import Text

T = Text("en")
WAIT_S = 20.0  # the longest any one thing is waited for
ANSWER_WINDOW_S = 5.0
STEP_PAUSE_S = (2.0, 4.0)  # between two clicks of the teacher
SETTLE_S = 5.0  # a pause after students joined, or left, before the next measure
CLUSTER_STEP_S = 3.0  # the cluster's target: every student shows the step within this long of the click
EXPLORER_KINDS = ["residual", "norm", "depth_alt", "block_alt"]  # the Explorer's interactions timed (7.)
FLOODER, FLOOD_CONNECTIONS = "127.0.0.9", 50
COOKIE = "BLOCKSTAB_REPLICA"  # HAProxy's affinity cookie (deploy/haproxy.cfg)
ServerCpu = Callable[[], tuple[float, float]]  # the server's CPU seconds so far: its process(es), their workers


def address(n: int) -> str:
    """Scripted student ``n``'s loopback address: a computer of its own (127.0.1.1, 127.0.1.2, ...)."""
    return f"127.0.{1 + n // 200}.{1 + n % 200}"


def plain(text: str) -> str:
    """Text as a page's ``textContent`` holds it, whitespace collapsed (HTML's tags dropped, entities read)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


# --- HTTP/1.1 on asyncio streams: a phone's browser, without a client library ----------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, list[str]]
    body: bytes

    def header(self, name: str) -> str:
        return ", ".join(self.headers.get(name, []))

    def json(self):
        raw = gzip.decompress(self.body) if self.header("content-encoding") == "gzip" else self.body
        return json.loads(raw)


def request_bytes(method: str, target: str, port: int, jar: dict[str, str], body: dict | None = None,
                  accept: str = "*/*") -> bytes:
    """A request as a phone's Chromium sends it (gzip accepted), with the cookies of ``jar``."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: localhost:{port}", f"User-Agent: {local_server.PHONE_USER_AGENT}",
             f"Accept: {accept}", "Accept-Encoding: gzip, deflate", "Accept-Language: en-US,en;q=0.9",
             "Connection: keep-alive"]
    if jar:
        lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in jar.items()))
    payload = b"" if body is None else json.dumps(body).encode()
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


async def read_head(reader: asyncio.StreamReader, jar: dict[str, str]) -> tuple[int, dict[str, list[str]]]:
    """A response's status and headers; the cookies it sets go into ``jar``."""
    line = await reader.readline()
    if not line:
        raise ConnectionResetError("closed before answering")
    status, headers = int(line.split()[1]), {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    for cookie in headers.get("set-cookie", []):
        name, _, value = cookie.split(";", 1)[0].partition("=")
        jar[name.strip()] = value.strip()
    return status, headers


async def chunks(reader: asyncio.StreamReader):
    """A chunked body's chunks, each as it comes."""
    while True:
        size = (await reader.readline()).split(b";")[0].strip()
        if not size:
            raise ConnectionResetError("closed in a chunked body")
        if int(size, 16) == 0:
            await reader.readline()
            return
        chunk = await reader.readexactly(int(size, 16))
        await reader.readexactly(2)
        yield chunk


async def read_response(reader: asyncio.StreamReader, jar: dict[str, str]) -> Response:
    status, headers = await read_head(reader, jar)
    if "chunked" in ",".join(headers.get("transfer-encoding", [])):
        body = b"".join([chunk async for chunk in chunks(reader)])
    elif headers.get("content-length"):
        body = await reader.readexactly(int(headers["content-length"][0]))
    else:
        body = await reader.read()
    return Response(status, headers, body)


async def open_from(port: int, source: str, tls: ssl.SSLContext | None = None
                    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection from ``source`` (with ``tls``: HTTPS, HTTP/1.1 as no protocol is offered by ALPN)."""
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0), limit=2 ** 22, ssl=tls,
                                         server_hostname="localhost" if tls else None)


class Connection:
    """One keep-alive connection from ``source``, opened again when the server closed it meanwhile (a request
    on a kept connection that gets no answer is sent once more on a new one, as a browser does)."""

    def __init__(self, port: int, source: str, jar: dict[str, str], tls: ssl.SSLContext | None = None):
        self.port, self.source, self.jar, self.tls = port, source, jar, tls
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, target: str, body: dict | None = None) -> Response:
        for _ in range(2):
            kept = self.writer is not None and not self.reader.at_eof()
            if not kept:
                self.close()
                self.reader, self.writer = await open_from(self.port, self.source, self.tls)
            try:
                self.writer.write(request_bytes(method, target, self.port, self.jar, body))
                response = await asyncio.wait_for(read_response(self.reader, self.jar), WAIT_S)
            except ConnectionResetError:
                self.close()
                if kept:
                    continue
                raise
            except (OSError, asyncio.IncompleteReadError, TimeoutError):
                self.close()
                raise
            if response.header("connection").lower() == "close":
                self.close()
            return response
        raise ConnectionResetError("closed before answering, twice")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def sse_events(reader: asyncio.StreamReader):
    """A stream's events as ``(when read, event, data, retry ms or None)``."""
    buffer, event, data, retry = b"", "", [], None
    async for chunk in chunks(reader):
        when = time.time()
        *lines, buffer = (buffer + chunk).split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r").decode()
            if not line:
                if data:
                    yield when, event or "message", "\n".join(data), retry
                event, data, retry = "", [], None
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
                elif name == "retry" and value.isdigit():
                    retry = int(value)


# --- the students -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """What a student's page shows once it followed a click: in its state (``state``, a predicate), on a
    Chromium page (the field of SHOWN_LOG and what it holds: a text, a view, or ``True`` for anything), and on
    the teacher's page once its own run is done (``teacher``); ``drawn``: what SHOWN_LOG's fields DRAWN and
    PAINTED hold once a Chromium page drew its figure and painted its title (``None``: neither timed)."""

    name: str
    state: Callable[[dict], bool]
    field: int
    want: object
    teacher: Callable[[Teacher], bool]
    drawn: object = None


def title(step: int) -> str:
    return T(f"tour.{TOUR[step].id}.title")


def tour_step(step: int) -> Shown:
    return Shown(f"tour step {step + 1}", lambda s: s["activity"] == "tour" and s["step"] == step and s["following"],
                 0, plain(title(step)), lambda teacher: teacher.leads("tour") and teacher.step() == step,
                 plain(title(step)))


def question_open(question: int) -> Shown:
    """The question asked (on a Chromium page: its prompt, as questions of one exercise share a title)."""
    prompt = questions_file(T)[question]["prompt"]
    return Shown(f"question {question + 1}", lambda s: (s["activity"], s["question"], s["phase"]) == (
        "question", question, "open"), 1, plain(prompt),
                 lambda teacher: teacher.leads("question") and teacher.question() == question)


def revealed(question: int) -> Shown:
    return Shown("reveal", lambda s: (s["activity"], s["question"], s["phase"]) == ("question", question, "revealed"),
                 3, True, lambda teacher: teacher.widget("button", "class_show_me") is not None
                 and not teacher.widget("button", "class_show_me").disabled)


def explorer_view(question: int) -> dict:
    """The view a student's state holds after the question's "show me" (ui.live_class, on a class of one)."""
    c = join(start("AAAAAAAA", "k" * 32, "en"), "me" * 8, 0.0, 1)
    return student_state(show_me(reveal(ask(c, question))), "me" * 8)["view"]


def explorer_on(question: int) -> Shown:
    view = explorer_view(question)
    return Shown("show me", lambda s: s["activity"] == "explorer" and s["following"] and s["view"] == view, 2, view,
                 lambda teacher: teacher.leads("explorer"))


def showing(state: dict) -> tuple:
    """What a page draws for ``state`` (ui/student/machine.js ``showing``): the same tuple, the same drawing."""
    if not state["following"]:
        return ("explorer", True, state["scenario"])
    if state["activity"] == "tour":
        return ("tour", state["step"])
    if state["activity"] == "explorer":
        return ("explorer", False, state["scenario"], json.dumps(state["view"]))
    return (state["phase"], state["question"], state["asked"], state["version"])


class ScriptedStudent:
    """A phone's student page (ui/student/page.js) without a browser, from a loopback address of its own."""

    kind = "scripted"

    def __init__(self, number: int, port: int, code: str, source: str, tls: ssl.SSLContext | None = None):
        self.number, self.port, self.code, self.source, self.tls = number, port, code, source, tls
        self.jar: dict[str, str] = {}  # the cookies its browser would keep (HAProxy's affinity)
        self.connection = Connection(port, source, self.jar, tls)
        self.token: str | None = None
        self.state: dict | None = None
        self.api = f"/api/class/{code}/"
        self.data: dict = {}  # the page's own data (its files' prefix, its look), once it loaded the page
        self.fetched: set[str] = set()  # files a browser would hold (their URLs never change)
        self.waits: list[tuple[str, Callable[[dict], bool], asyncio.Future]] = []
        self.problems: Counter = Counter()
        self.reveals: list[dict] = []  # each reveal read
        self.stream_breaks: list[float] = []  # when its stream ended or broke
        self.stream_opens: list[tuple[float, float]] = []  # (asked for, answered) of each stream it opened
        self.replicas: list[str] = []  # the affinity cookie of each stream it opened (a cluster's)
        self.drawn: tuple | None = None
        self.drawing: asyncio.Task | None = None
        self.follower: asyncio.Task | None = None

    async def get(self, path: str) -> Response | None:
        """``GET path``; an answer other than 200 is counted as a problem."""
        try:
            response = await self.connection.request("GET", path)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
            self.problems[f"GET failed: {type(error).__name__}"] += 1
            return None
        if response.status != 200:
            self.problems[f"HTTP {response.status}"] += 1
        return response

    async def post(self, route: str, body: dict) -> Response | None:
        try:
            return await self.connection.request("POST", f"{self.api}{route}?lang=en", body)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
            self.problems[f"POST failed: {type(error).__name__}"] += 1
            return None

    async def open(self) -> bool:
        """Load the page as a phone does (its HTML, style and script), join, and follow the class."""
        page = await self.get(f"/join?class={self.code}&lang=en")
        if page is None or page.status != 200:
            return False
        found = re.search(r'id="student-data">(.*?)</script>', gzip.decompress(page.body).decode()
                          if page.header("content-encoding") == "gzip" else page.body.decode())
        self.data = json.loads(found[1])
        for name in ("student.css", "student.js"):
            await self.file(name)
        if not await self.join():
            return False
        self.follower = asyncio.create_task(self.follow())
        return True

    async def join(self) -> bool:
        """``POST join``: in the class, with a token of its own (a script's join, without the page, draws nothing)."""
        response = await self.post("join", {"me": self.token} if self.token else {})
        if response is None or response.status != 200:
            self.problems[f"join answered {response.status if response else 'nothing'}"] += 1
            return False
        answer = response.json()
        self.token = answer["me"]
        self.took(answer["state"], time.time())
        return True

    async def file(self, name: str) -> Response | None:
        """One of the page's files, fetched once (its URL names the code's version: a browser keeps it)."""
        if name in self.fetched:
            return None
        self.fetched.add(name)
        return await self.get(f"{self.data['files']}{name}")

    async def follow(self) -> None:
        """The class's event stream, as EventSource keeps it: each ``state`` taken; when it ends or breaks, opened
        again after its ``retry``; a reconnection answered with other than a stream makes the page poll."""
        retry = 1.0
        path = f"{self.api}events?me={self.token}"
        while True:
            writer, asked = None, time.time()
            try:
                reader, writer = await open_from(self.port, self.source, self.tls)
                writer.write(request_bytes("GET", path, self.port, self.jar, accept="text/event-stream"))
                status, headers = await read_head(reader, self.jar)
                if status != 200 or "text/event-stream" not in ",".join(headers.get("content-type", [])):
                    self.problems[f"stream answered {status}"] += 1
                    return await self.poll()
                self.replicas.append(self.jar.get(COOKIE, ""))
                self.stream_opens.append((asked, time.time()))
                async for when, event, data, retry_ms in sse_events(reader):
                    retry = retry_ms / 1000 if retry_ms is not None else retry
                    if event == "state":
                        self.took(json.loads(data), when)
                self.problems["stream ended"] += 1
            except (OSError, asyncio.IncompleteReadError, ValueError) as error:
                self.problems[f"stream broke: {type(error).__name__}"] += 1
            finally:
                if writer is not None:
                    writer.close()
            self.stream_breaks.append(time.time())
            await asyncio.sleep(retry)

    async def poll(self) -> None:
        """No stream: the state every second (ui/student/page.js ``poll``)."""
        while True:
            response = await self.get(f"{self.api}state?me={self.token}&lang=en")
            if response is not None and response.status == 200:
                self.took(response.json()["state"], time.time())
            await asyncio.sleep(1.0)

    def took(self, state: dict | None, when: float) -> None:
        """A state from the class: the waits it meets, then what the page draws of it."""
        if state is None:
            self.problems["not in the class"] += 1
            return
        self.state = state
        self.met("state", state, when)
        if self.data and showing(state) != self.drawn:
            in_place = self.drawn is not None and self.drawn[:3] == showing(state)[:3]  # the same Explorer mounted
            self.drawn = showing(state)
            self.drawing = asyncio.create_task(self.draw(state, self.drawing, in_place))

    def met(self, stage: str, state: dict, when: float) -> None:
        for waited, shown, done in self.waits:
            if waited == stage and not done.done() and shown(state):
                done.set_result(when)
        self.waits = [w for w in self.waits if not w[2].done()]

    def expect(self, stage: str, shown: Callable[[dict], bool]) -> asyncio.Future:
        """When the student next has a state that ``shown`` holds for (``stage`` "state": it arrived; "drawn":
        the page's files for it fetched too)."""
        done = asyncio.get_running_loop().create_future()
        self.waits.append((stage, shown, done))
        return done

    async def draw(self, state: dict, previous: asyncio.Task | None, in_place: bool) -> None:
        """What the page fetches to draw ``state``, after its previous drawing (page.js draws one at a time); the
        Explorer mounted again ``in_place`` reads no index or figures again."""
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        look, kind = self.data["look"], showing(state)[0]
        if kind == "tour":
            await self.file(f"tour-{state['step']}-en-{look}.json")
            self.met("drawn", state, time.time())
            await self.file("plotly-basic.min.js")
        elif kind == "explorer":
            await self.file(f"explorer-en-{'free' if not state['following'] else 'follow'}.json")
            bundle = f"bundle/{look}-{state['scenario']}-en/"
            if not in_place:
                await self.get(f"{self.data['files']}{bundle}index.js?read={int(time.time() * 1000)}")
                await self.file(f"{bundle}figures.js")
            block = min(state["view"]["block"], state["view"]["depth"])
            await self.file(f"{bundle}{range_part(range_first(block))}.js")
            self.met("drawn", state, time.time())
        else:
            await self.file("questions-en.json")
            if kind == "revealed":
                response = await self.get(f"{self.api}reveal?me={self.token}&lang=en")
                if response is not None and response.status == 200:
                    self.reveals.append(response.json())
            self.met("drawn", state, time.time())

    async def answer(self, choice: str) -> bool | None:
        """The choice sent for the question its state asks: whether it was counted (``None``: refused)."""
        response = await self.post("answer", {"me": self.token, "asked": self.state["asked"], "choice": choice})
        if response is None or response.status != 200:
            self.problems[f"answer answered {response.status if response else 'nothing'}"] += 1
            return None
        return response.json()["counted"]

    def replica(self) -> str:
        return self.jar.get(COOKIE, "")

    async def close(self) -> None:
        for task in (self.follower, self.drawing):
            if task is not None:
                task.cancel()
        self.connection.close()


# In a Chromium page: each change of what its activity shows, with performance.timeOrigin + performance.now():
# [when, the activity's title (h2), its text, the Explorer's data-drawn, the reveal's verdict, its first note,
# the title again once the activity's figure is drawn (its .plot data-drawn), the title once in an animation frame
# (the first after it was placed: the browser paints that frame next; a page busy drawing delays it)].
SHOWN_LOG = """(() => {
  const log = window.__shown = [];
  const text = (selector) => { const e = document.querySelector(selector);
    return e ? e.textContent.replace(/\\s+/g, ' ').trim() : null; };
  let last = '', placed = null, painted = null;
  const look = () => {
    const title = text('#activity h2');
    if (title !== placed) {
      placed = title;
      requestAnimationFrame(() => { painted = title; look(); });
    }
    const explorer = document.querySelector('.instant-explorer');
    const now = [text('#activity h2'), text('#activity .text'), explorer ? explorer.dataset.drawn || null : null,
                 text('#activity .verdict'), text('#activity .note'),
                 document.querySelector('#activity .plot[data-drawn]') ? text('#activity h2') : null, painted];
    const key = JSON.stringify(now);
    if (key !== last) { last = key; log.push([performance.timeOrigin + performance.now(), ...now]); }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true,
                                                attributes: true, attributeFilter: ['data-drawn']});
})();"""
DRAWN, PAINTED = 5, 6  # SHOWN_LOG's fields of a drawn figure and a painted title (after its ``when``)
# The first time at or after ``since`` (ms) that field ``field`` of the log held ``want`` (``true``: anything; a
# view: the same values), else false.
SHOWN_AT = """([since, field, want]) => {
  const same = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
  const hit = window.__shown.find(([t, ...now]) => t >= since && now[field] !== null && (want === true
    || (typeof want === 'object' ? same(JSON.parse(now[field]), want) : now[field] === want)));
  return hit ? hit[0] : false;
}"""


class BrowserStudent:
    """A student's phone as a headless Chromium page of /join (a phone's size and user agent)."""

    kind = "chromium"

    def __init__(self, number: int, browser, base: str, code: str):
        self.number, self.browser, self.url = number, browser, f"{base}/join?class={code}&lang=en"
        self.errors: list[str] = []
        self.token: str | None = None

    async def open(self) -> bool:
        self.context = await self.browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US",
                                                      user_agent=local_server.PHONE_USER_AGENT,
                                                      ignore_https_errors=True)  # a cluster's own certificate
        await self.context.add_init_script(SHOWN_LOG)
        self.page = await self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"[:200]))
        self.page.on("console", lambda m: m.type == "error" and not m.text.startswith("Failed to load resource")
                     and self.errors.append(f"console: {m.text}"[:200]))
        self.page.on("response", lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status}: {r.url}"[:200]))
        await self.page.goto(self.url, wait_until="commit", timeout=60_000)
        await self.page.wait_for_selector("#activity h2", timeout=60_000)
        self.token = dict(parse_qsl(urlsplit(self.page.url).query)).get("me")
        return self.token is not None

    async def shown_at(self, since: float, shown: Shown) -> float | None:
        """When the page first showed ``shown`` at or after ``since`` (time.time()), within :data:`WAIT_S`."""
        try:
            found = await self.page.wait_for_function(SHOWN_AT, arg=[since * 1000, shown.field, shown.want],
                                                      timeout=WAIT_S * 1000, polling=100)
        except Exception:  # noqa: BLE001 - not shown in time (counted), or the page is gone
            return None
        return await found.json_value() / 1000

    async def answer(self, choice: str) -> bool | None:
        """Check the choice's radio, as a student taps it: whether the answer was counted (``None``: refused)."""
        try:
            async with self.page.expect_response(lambda r: "/answer" in r.url, timeout=WAIT_S * 1000) as sent:
                await self.page.locator(f"#activity input[type=radio][value='{choice}']").check()
            response = await sent.value
            return (await response.json())["counted"] if response.ok else None
        except Exception as error:  # noqa: BLE001 - counted
            self.errors.append(f"answer: {type(error).__name__}: {error}"[:200])
            return None

    async def replica(self) -> str:
        return next((c["value"] for c in await self.context.cookies() if c["name"] == COOKIE), "")

    @property
    def problems(self) -> Counter:
        return Counter({"page errors": len(self.errors)}) if self.errors else Counter()

    async def close(self) -> None:
        with contextlib.suppress(Exception):  # a context already gone
            await self.context.close()


# --- the teacher ------------------------------------------------------------------------------------------------


def template(key: str, *fields: str) -> re.Pattern:
    """A catalog string as a pattern, each of ``fields`` a number."""
    text = re.escape(T(key, **{f: f"\0{f}\0" for f in fields}))
    for f in fields:
        text = text.replace(re.escape(f"\0{f}\0"), r"(\d+)")
    return re.compile(text)




def status_line(students: int, answered: int | None = None) -> str:
    """The teacher's status, as the page words it."""
    line = T("class.one_student") if students == 1 else T("class.students", count=students)
    return line if answered is None else line + " · " + T("class.answered", answered=answered, students=students)


class Teacher(ProtocolSession):
    """The teacher's /class page as a protocol session whose page polls the class (widgets/follow.js)."""

    def __init__(self, port: int, headers: dict[str, str] | None = None, tls: ssl.SSLContext | None = None,
                 source: str = ""):
        super().__init__(port, "lang=en", "class", follows=True, headers=headers, tls=tls, source=source)
        self.watches: list[tuple[Callable[[Teacher], bool], asyncio.Future]] = []
        self.forward = True  # the way the teacher goes along the tour
        self.visited: set[int] = set()  # tour steps whose files students asked for (made on this server)

    def _take(self, msg: ForwardMsg) -> None:
        super()._take(msg)
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished in FINISHED_OK:
            now = time.time()
            for shown, done in self.watches:
                if not done.done() and shown(self):
                    done.set_result(now)
            self.watches = [w for w in self.watches if not w[1].done()]

    def watch(self, shown: Callable[[Teacher], bool]) -> asyncio.Future:
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

    async def press(self, key: str, shown: Callable[[Teacher], bool]) -> tuple[float, float | None]:
        """Press ``key``: (when its rerun was sent, when the teacher's first run showing ``shown`` finished)."""
        done = self.watch(shown)
        sent = time.time()
        await self.send_rerun(extra=(self.trigger(key),))
        return sent, await bounded(done)

    def leads(self, activity: str) -> bool:
        """Whether the page shows the class on ``activity`` (its button disabled, as the current one)."""
        button = self.widget("button", f"class_show_{activity}")
        return button is not None and button.disabled

    def step(self) -> int | None:
        return next((i for i in range(len(TOUR)) if title(i) in self.texts("heading")), None)

    def question(self) -> int | None:
        """The question the teacher's page shows (its choice of question), if it shows one."""
        box = self.widget("selectbox", "class_question_")
        return box.default if box is not None and box.HasField("default") else None

    def problems(self) -> Counter:
        closed = self.ws.close_code is not None
        return Counter({"teacher: exception elements": self.exceptions, "teacher: socket closed": int(closed)})


# --- servers and /proc ------------------------------------------------------------------------------------------


@contextlib.contextmanager
def app_server(store: str, settings: dict[str, str], logs: Path, name: str):
    """The app with ``settings`` its only BLOCKSTAB_ variables (for Redis, with a fresh redis-server of its
    own: no other server start filled its rate-limit windows): ``(base, pid, redis_url)``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOCKSTAB_")} | settings
    with contextlib.ExitStack() as stack:
        url = None
        if store == "redis":
            url = stack.enter_context(local_server.redis_server(logs / f"{name}-redis.log", h.APP_ROOT))
            env |= {"BLOCKSTAB_CLASS_STORE": url, "BLOCKSTAB_ADDRESS_KEY": "benchmark" * 4}
        base, server = stack.enter_context(local_server.streamlit_server("app.py", logs / f"{name}.log", h.APP_ROOT,
                                                                         env=env))
        yield base, server.pid, url


def cpu_split(server_pid: int) -> dict[str, float]:
    """CPU seconds so far: the server (and its children, ended ones included), of which its worker
    processes (bundles built), redis-server, Chromium and the flooder (every other process below this one)
    and this process (the teacher's session and the scripted students)."""
    server = {server_pid, *h.descendants(server_pid)}
    others = [p for p in h.descendants(os.getpid()) if p not in server]
    redis = [p for p in others if Path(f"/proc/{p}/comm").exists()
             and Path(f"/proc/{p}/comm").read_text().strip() == "redis-server"]
    seconds = {p: h.cpu_seconds(p) or 0.0 for p in (*others, os.getpid())}
    tree = h.tree_cpu_seconds(server_pid)
    return {"server": tree, "workers": tree - (h.cpu_seconds(server_pid) or 0.0),
            "redis": sum(seconds[p] for p in redis), "chromium": sum(seconds[p] for p in others if p not in redis),
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


async def bounded(done) -> float | None:
    """``done``'s time, or ``None`` after :data:`WAIT_S`."""
    try:
        return await asyncio.wait_for(done, WAIT_S)
    except TimeoutError:
        return None


def problems(students: list) -> Counter:
    return sum((s.problems for s in students), Counter())


# --- the class --------------------------------------------------------------------------------------------------


async def join_students(browser, base: str, port: int, code: str, numbers: range, chromium: int,
                        every: float, tls: ssl.SSLContext | None = None, plain_port: int | None = None) -> list:
    """Students ``numbers`` join, one every ``every`` s, the first ``chromium`` of the class as Chromium pages
    (those that could not open left out, and said); ``tls``: the scripted ones by HTTPS with it (with
    ``plain_port``: every other one by plain HTTP on that port instead)."""
    def scripted(n: int) -> ScriptedStudent:
        plain = plain_port is not None and n % 2
        return ScriptedStudent(n, plain_port if plain else port, code, address(n - chromium), None if plain else tls)

    students = [BrowserStudent(n, browser, base, code) if n < chromium else scripted(n) for n in numbers]

    async def one(student, delay: float):
        await asyncio.sleep(delay)
        try:
            if await student.open():
                return student
            print(f"  {student.kind} student {student.number} did not join: {dict(student.problems)}")
        except Exception as error:  # noqa: BLE001 - counted, never fatal
            print(f"  {student.kind} student {student.number} could not open the class: {type(error).__name__}: "
                  f"{error}"[:300])
        await student.close()
        return None

    opened = await asyncio.gather(*(one(s, n * every) for n, s in enumerate(students)))
    return [s for s in opened if s is not None]


async def lead(teacher: Teacher, students: list, key: str, shown: Shown, cpu: ServerCpu) -> dict:
    """The teacher presses ``key``: each student's time from the click to showing ``shown`` (a scripted student:
    its state arrived, and its files fetched); the server's CPU seconds (its process, its worker processes) until
    every one had drawn it, and how late this process's own event loop ran meanwhile (its readings are as late)."""
    scripted = [s for s in students if s.kind == "scripted"]
    arrived = [s.expect("state", shown.state) for s in scripted]
    drawn = [s.expect("drawn", shown.state) for s in scripted]
    lags: list[float] = []
    probe = asyncio.create_task(lateness(lags))
    before = cpu()
    sent, ran = await teacher.press(key, shown.teacher)
    pages = [s.shown_at(sent, shown) for s in students if s.kind == "chromium"]
    chromium = [s for s in students if s.kind == "chromium" and shown.drawn is not None]
    painted = [s.shown_at(sent, replace(shown, field=PAINTED, want=shown.drawn)) for s in chromium]
    figures = [s.shown_at(sent, replace(shown, field=DRAWN, want=shown.drawn)) for s in chromium]
    arrived, drawn, pages, painted, figures = (await asyncio.gather(*(bounded(x) for x in arrived)),
                                               await asyncio.gather(*(bounded(x) for x in drawn)),
                                               await asyncio.gather(*pages), await asyncio.gather(*painted),
                                               await asyncio.gather(*figures))
    after = cpu()
    probe.cancel()

    def ms(x: float | None) -> float | None:
        return None if x is None else 1000 * (x - sent)

    return {"shown": shown.name, "sent": sent, "teacher_ms": ms(ran), "cpu_s": after[0] - before[0],
            "workers_cpu_s": after[1] - before[1], "loop_late_ms": max(lags, default=0.0),
            "scripted_ms": [ms(x) for x in arrived], "scripted_drawn_ms": [ms(x) for x in drawn],
            "scripted_tls": [s.tls is not None for s in scripted], "chromium_ms": [ms(x) for x in pages],
            "chromium_painted_ms": [ms(x) for x in painted], "chromium_drawn_ms": [ms(x) for x in figures]}


async def lateness(lags: list[float], every: float = 0.005) -> None:
    """How late each short sleep of this event loop wakes (ms), until cancelled."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(every)
        lags.append(1000 * (time.perf_counter() - start - every))


def server_cpu(pids: Callable[[], list[int]]) -> ServerCpu:
    """CPU seconds so far of the server processes ``pids()`` names, and of their worker processes."""

    def used() -> tuple[float, float]:
        alive = [p for p in pids() if Path(f"/proc/{p}").exists()]
        process = sum(h.cpu_seconds(p) or 0.0 for p in alive)
        return process, sum(h.tree_cpu_seconds(p) for p in alive) - process

    return used


def shown_ms(r: dict, drawn: bool = False) -> list[float | None]:
    """Every student's time to show it (a scripted one's: its state arrived; ``drawn``: its files fetched too)."""
    return r["scripted_drawn_ms" if drawn else "scripted_ms"] + r["chromium_ms"]


async def steps(teacher: Teacher, students: list, count: int, rng: random.Random, cpu: ServerCpu) -> list:
    """Next to the tour's last step, then Previous to its first, and so on, ``count`` times, each timed at every
    student; marked ``first_visit`` when the step's file had not been asked for on this server yet (made then)."""
    out = []
    for _ in range(count):
        step = teacher.step()
        teacher.forward = step < len(TOUR) - 1 and (teacher.forward or step == 0)
        to = step + 1 if teacher.forward else step - 1
        led = await lead(teacher, students, "class_next" if teacher.forward else "class_previous", tour_step(to), cpu)
        out.append(led | {"step": to, "first_visit": bool(students) and to not in teacher.visited})
        if students:
            teacher.visited.add(to)
        await asyncio.sleep(rng.uniform(*STEP_PAUSE_S))
    return out


def expected(question: int, choices: dict[str, str], tokens: list[str]) -> LiveClass:
    """The class once every answer in ``choices`` (by token) is counted."""
    return LiveClass(code="", teacher="", lang="en", question=question, seats=dict.fromkeys(tokens, 0.0),
                     answers=dict(choices))


async def answer_all(students: list, question: int, rng: random.Random, window: tuple[float, float]) -> list[dict]:
    """Every student answers a random choice at a random moment of ``window`` (s from now): what was sent."""

    async def one(student, delay: float) -> dict:
        choice = rng.choice(QUESTIONS[question].choices)
        await asyncio.sleep(delay)
        sent = time.time()
        counted = await student.answer(choice)
        return {"token": student.token, "kind": student.kind, "choice": choice, "counted": counted,
                "ms": 1000 * (time.time() - sent), "sent": sent}

    return list(await asyncio.gather(*(one(s, rng.uniform(*window)) for s in students)))


async def answers(teacher: Teacher, students: list, rng: random.Random, redis_url: str | None, code: str,
                  cpu: ServerCpu) -> dict:
    """Ask; everyone answers within the window; the teacher's count; the reveal each student reads against what
    was sent (and for Redis the record as stored)."""
    question = 0  # the one the "Question" button asks: the class's last, its first at first
    asked = await lead(teacher, students, "class_show_question", question_open(question), cpu)
    n = len(students)
    counted_all = teacher.watch(lambda page: status_line(n, n) in page.texts("heading"))
    sent = await answer_all(students, question, rng, (0, ANSWER_WINDOW_S))
    last_done = max(x["sent"] + x["ms"] / 1000 for x in sent)
    at = await bounded(counted_all)
    final = {x["token"]: x["choice"] for x in sent if x["counted"]}
    record = expected(question, final, [s.token for s in students])
    shown = await lead(teacher, students, "class_reveal", revealed(question), cpu)
    description = answers_description(record, T)
    read = [r for s in students if s.kind == "scripted" for r in s.reveals[-1:]]
    verdicts = Counter(r["verdict"]["kind"] for r in read)
    stored = RedisStore(redis_url).read(code) if redis_url else None
    return {"question": question, "asked": asked, "revealed": shown, "students": n, "sent": len(sent),
            "counted": sum(1 for x in sent if x["counted"]), "not_counted": sum(1 for x in sent if not x["counted"]),
            "answer_ms": {kind: [x["ms"] for x in sent if x["kind"] == kind] for kind in ("scripted", "chromium")},
            "status_after_last_answer_ms": None if at is None else 1000 * (at - last_done),
            "sent_counts": counts(record), "reveals_read": len(read),
            "reveals_matching": sum(r["description"] == description for r in read),
            "verdicts": dict(verdicts),
            "stored_counts": counts(stored) if stored else None,
            "stored_matches": None if stored is None else counts(stored) == counts(record) and stored.answers == final}


async def idle(teacher: Teacher, students: list, server_pid: int, step: int, seconds: float,
               cpu: ServerCpu) -> dict:
    """The class back on tour step ``step`` (the one it left), then ``seconds`` of following it: CPU, RSS,
    errors; then one more step, to see that every student still follows."""
    back = await lead(teacher, students, "class_show_tour", tour_step(step), cpu)
    waited = await quiet(server_pid)
    before = problems(students)
    used = await usage(server_pid, seconds)
    errors = problems(students) - before
    step = teacher.step()
    forward = step < len(TOUR) - 1
    after = await lead(teacher, students, "class_next" if forward else "class_previous",
                       tour_step(step + 1 if forward else step - 1), cpu)
    return {"back_on_tour": back, "quiet_after_s": waited, **used, "errors": dict(errors), "following_after": after}


async def quiet(server_pid: int, below: float = 0.05, every: float = 5.0, most: float = 120.0) -> float:
    """Wait until the server (its worker processes too: the Explorer's parts built after "show me") used less than
    ``below`` of a core over ``every`` s, at most ``most`` s: the seconds waited."""
    start = time.monotonic()
    before = h.tree_cpu_seconds(server_pid)
    while time.monotonic() - start < most:
        await asyncio.sleep(every)
        after = h.tree_cpu_seconds(server_pid)
        if after - before < below * every:
            break
        before = after
    return time.monotonic() - start


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


# --- the flood: one computer's script, in a process of its own ------------------------------------------------


def flood(port: int, path: str, stop, results) -> None:
    """(A process of its own.) :data:`FLOOD_CONNECTIONS` keep-alive connections from :data:`FLOODER` read ``path``
    as fast as they can until ``stop`` is set; its answers by status and its CPU go to ``results``."""
    results.put(asyncio.run(flooding(port, path, stop)))


async def flooding(port: int, path: str, stop) -> dict:
    statuses, failures = Counter(), Counter()
    start = time.monotonic()

    async def one() -> None:
        connection = Connection(port, FLOODER, {})
        while not stop.is_set():
            try:
                statuses[(await connection.request("GET", path)).status] += 1
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
                failures[type(error).__name__] += 1
                await asyncio.sleep(0.01)
        connection.close()

    await asyncio.gather(*(one() for _ in range(FLOOD_CONNECTIONS)))
    return {"seconds": time.monotonic() - start, "statuses": dict(statuses), "failures": dict(failures),
            "cpu_s": h.cpu_seconds(os.getpid()) or 0.0}


async def flooded(teacher: Teacher, students: list, server_pid: int, port: int, code: str, args,
                  rng: random.Random, cpu: ServerCpu) -> dict:
    """``--steps`` steps while one computer floods the class's state route (with a token of the class: one of its
    students' computers; the class is full)."""
    path = f"/api/class/{code}/state?me={students[-1].token}"
    spawn = multiprocessing.get_context("spawn")
    stop, results = spawn.Event(), spawn.Queue()
    process = spawn.Process(target=flood, args=(port, path, stop, results), daemon=True)
    before = cpu_split(server_pid)
    process.start()
    try:
        await asyncio.sleep(3)  # under way
        led = await steps(teacher, students, args.steps, rng, cpu)
    finally:
        stop.set()
        answered = await asyncio.to_thread(results.get, True, 60)
        process.join(timeout=10)
    after = cpu_split(server_pid)
    return {"steps": led, "flooder": answered,
            "cpu_s": {k: after[k] - before[k] for k in ("server", "chromium", "benchmark")}}


# --- one store ---------------------------------------------------------------------------------------------------


async def live_class(browser, store: str, args, logs: Path) -> dict:
    """Every part of a class of ``--students`` on one server of ``store``."""
    rng = random.Random(args.seed)
    with app_server(store, {}, logs, f"{store}-class") as (base, pid, redis_url):
        port = int(base.rsplit(":", 1)[1])

        cpu = server_cpu(lambda: [pid])
        teacher = Teacher(port)
        code = await teacher.start()
        started = time.monotonic()
        result: dict = {"load_average_start": os.getloadavg(), "settle_seconds": args.settle_seconds}
        await asyncio.sleep(max(0.0, started + args.settle_seconds - time.monotonic()))
        result["settle_cpu_percent_last_10_s"] = await settle_cpu(pid)
        result["cost_0"] = await steps(teacher, [], args.steps, rng, cpu)
        small = min(args.small_class, args.students)
        students = await join_students(browser, base, port, code, range(small), args.browser_students, args.join_every)
        teacher.visited.add(teacher.step())
        await asyncio.sleep(SETTLE_S)
        led = await steps(teacher, students, 2 * args.steps, rng, cpu)  # twice: its first visits make the steps' files
        result["small"] = {"students": len(students), "steps": led}
        students += await join_students(browser, base, port, code, range(small, args.students), args.browser_students,
                                        args.join_every)
        in_class = await bounded(teacher.watch(lambda page: status_line(len(students)) in page.texts("heading")))
        result |= {"students": len(students), "chromium_students": sum(s.kind == "chromium" for s in students),
                   "teacher_counted_all": in_class is not None}
        await asyncio.sleep(SETTLE_S)
        result["steps"] = await steps(teacher, students, args.steps, rng, cpu)
        tour_at = teacher.step()
        result["answers"] = await answers(teacher, students, rng, redis_url, code, cpu)
        result["show_me"] = await lead(teacher, students, "class_show_me", explorer_on(result["answers"]["question"]),
                                       cpu)
        result["idle"] = await idle(teacher, students, pid, tour_at, args.idle_seconds, cpu)
        if args.explorer_n:  # the class still following
            result["explorer_in_class"] = await asyncio.to_thread(explorer_latency, base, args.explorer_n)
        if store in args.flood:
            result["flood"] = await flooded(teacher, students, pid, port, code, args, rng, cpu)
        result["errors"] = dict(problems(students) + teacher.problems())
        result["chromium_messages"] = [e for s in students if s.kind == "chromium" for e in s.errors][:10]
        for session in (*students, teacher):
            await session.close()
        await asyncio.sleep(SETTLE_S)
        if args.explorer_n:  # the same server, the class gone
            result["explorer_alone"] = await asyncio.to_thread(explorer_latency, base, args.explorer_n)
        result["server_log"] = log_problems(logs / f"{store}-class.log")
        result["load_average_end"] = os.getloadavg()
    return result


async def settle_cpu(pid: int) -> float:
    """The server's CPU over 10 s (% of one core), at the end of the settle time: whether its builds ahead
    were done."""
    before = h.tree_cpu_seconds(pid)
    await asyncio.sleep(10)
    return 10 * (h.tree_cpu_seconds(pid) - before)


# --- the cluster ---------------------------------------------------------------------------------------------------


async def cluster_class(browser, args, logs: Path, tls: bool = False, split: bool = False) -> dict:
    """The class on two replicas behind HAProxy (``tls``: HTTPS, every page through it; ``split``: every other
    scripted student by plain HTTP through a second HAProxy before the same replicas); before the kill,
    HAProxy's CPU seconds while the class joins and ``--steps`` tour steps; the replica of half the students'
    streams SIGKILLed."""
    from benchmarks import cluster as served  # noqa: PLC0415 - it imports this module

    rng = random.Random(args.seed)
    killed, live = 1, 2
    name = "live-class-cluster-split" if split else "live-class-cluster-tls" if tls else "live-class-cluster"
    with served.cluster(2, logs, name, tls, plain_beside=split) as running:
        port = running.port

        cpu = server_cpu(lambda: [p for p, _ in running.replicas.values()])
        haproxy = {"start": h.cpu_seconds(running.haproxy_pid) or 0.0}
        teacher = Teacher(port, headers={"Cookie": f"{COOKIE}=r{live}"}, tls=running.tls)
        code = await teacher.start()
        started = time.monotonic()
        haproxy["before_joins"] = h.cpu_seconds(running.haproxy_pid) or 0.0
        students = await join_students(browser, running.base, port, code, range(args.students),
                                       args.browser_students, args.join_every, running.tls, running.plain_port)
        joins_s = time.monotonic() - started
        haproxy["after_joins"] = h.cpu_seconds(running.haproxy_pid) or 0.0
        await asyncio.sleep(max(0.0, started + args.settle_seconds - time.monotonic()))
        result: dict = {"students": len(students), "tls": tls, "joins_s": joins_s,
                        "load_average_start": os.getloadavg()}
        haproxy["before_steps"] = h.cpu_seconds(running.haproxy_pid) or 0.0
        result["steps"] = await steps(teacher, students, args.steps, rng, cpu)
        result["script"] = []
        while teacher.question() is None:  # along the live script, to its first question
            position = script_position_of(teacher)
            activity, n = LIVE_SCRIPT[position + 1]
            shown = tour_step(n) if activity == "tour" else question_open(n)
            result["script"].append(await lead(teacher, students, "class_script_next", shown, cpu))
            await asyncio.sleep(1)
        haproxy["after_steps"] = h.cpu_seconds(running.haproxy_pid) or 0.0
        result["haproxy_cpu_s"] = haproxy
        result["errors_before_kill"] = dict(problems(students) + teacher.problems())
        first = teacher.question()
        placed = {s.number: (s.replica() if s.kind == "scripted" else await s.replica()) for s in students}
        result["streams_by_replica"] = dict(Counter(placed.values()))
        doomed = [s for s in students if placed[s.number] == f"r{killed}"]
        last = [s for s in doomed if s.kind == "scripted"][:20]
        before = await answer_all([s for s in students if s not in last], first, rng, (0, ANSWER_WINDOW_S - 1))
        before += await answer_all(last, first, rng, (0, 0.5))  # just before the kill
        acknowledged = time.time()
        doomed_pids = {running.replicas[killed][0], *h.descendants(running.replicas[killed][0])}
        killed_at = time.time()
        os.kill(running.replicas[killed][0], signal.SIGKILL)
        stored = RedisStore(running.redis_url).read(code)
        sent_first = {x["token"]: x["choice"] for x in before}
        result["before_kill"] = {
            "question": first, "sent": len(before), "counted": sum(x["counted"] is True for x in before),
            "last_answers": len(last), "last_ack_to_kill_ms": 1000 * (killed_at - acknowledged),
            "stored": len(stored.answers), "stored_matches": stored.answers == sent_first}
        second = LIVE_SCRIPT[LIVE_SCRIPT.index(("question", first)) + 1][1]
        result["step_after_kill"] = await lead(teacher, students, "class_script_next", question_open(second), cpu)
        result["step_after_kill"]["click_after_kill_ms"] = 1000 * (result["step_after_kill"]["sent"] - killed_at)
        after = await answer_all(students, second, rng, (0, ANSWER_WINDOW_S))
        final = {x["token"]: x["choice"] for x in after}
        again = [s for s in doomed if s.kind == "scripted"]
        for i, student in enumerate(again):  # those of the killed replica answer again: half change it
            choices = QUESTIONS[second].choices
            choice = final[student.token] if i % 2 == 0 else next(c for c in choices if c != final[student.token])
            final[student.token] = choice
            after.append({"token": student.token, "choice": choice, "counted": await student.answer(choice)})
        await asyncio.sleep(1)
        stored = RedisStore(running.redis_url).read(code)
        result["after_kill"] = {
            "question": second, "sent": len(after), "counted": sum(x["counted"] is True for x in after),
            "students_answered": len(final), "stored": len(stored.answers), "stored_matches": stored.answers == final}
        broke = {s.number for s in students if s.kind == "scripted" and any(t >= killed_at for t in s.stream_breaks)}
        reopened = [(min(t for t in s.stream_breaks if t >= killed_at), *next(o for o in s.stream_opens
                                                                            if o[0] >= killed_at))
                    for s in students if s.number in broke and any(o[0] >= killed_at for o in s.stream_opens)]
        result["streams"] = {
            "scripted_on_killed": sum(1 for s in doomed if s.kind == "scripted"), "broke_at_kill": len(broke),
            "broke_and_on_killed": len(broke & {s.number for s in doomed}),
            "broke_elsewhere": len(broke - {s.number for s in doomed}),
            "reopened_on": dict(Counter(s.replicas[-1] for s in students if s.number in broke)),
            "kill_to_break_ms": [1000 * (b - killed_at) for b, _, _ in reopened],
            "break_to_asked_again_ms": [1000 * (a - b) for b, a, _ in reopened],
            "asked_to_answered_ms": [1000 * (o - a) for _, a, o in reopened]}
        result["errors"] = dict(problems(students) + teacher.problems())
        result["chromium_messages"] = [e for s in students if s.kind == "chromium" for e in s.errors][:10]
        for session in (*students, teacher):
            await session.close()
        await asyncio.sleep(2)
        result["haproxy"] = {k: v for k, v in served.read_log(running.log(), killed=killed).items()
                             if k in ("requests", "http_errors", "error_lines", "marked_down", "redispatched")}
        for pid in doomed_pids:  # the killed replica's worker processes, if any outlived it
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    result["replica_log_problems"] = served.replica_problems(logs, name)
    return result


def script_position_of(teacher: Teacher) -> int:
    """Where the teacher's page is on the live script (-1: not on it)."""
    here = ("tour", teacher.step()) if teacher.question() is None else ("question", teacher.question())
    return LIVE_SCRIPT.index(here) if here in LIVE_SCRIPT else -1


# --- report ----------------------------------------------------------------------------------------------------


def known(values) -> list[float]:
    return [v for v in values if v is not None]


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def every(led: list[dict], field: Callable[[dict], list]) -> list:
    return [x for r in led for x in field(r)]


def print_led(led: list[dict], drawn_name: str) -> None:
    """The rows of a list of clicks: every student from the click, by kind, and the teacher's own run."""
    print(h.HEADER)
    print(h.fmt_row("every student, from the click", known(every(led, shown_ms))))
    print(h.fmt_row("    scripted: its state arrived", known(every(led, lambda r: r["scripted_ms"]))))
    print(h.fmt_row(f"    scripted: {drawn_name}", known(every(led, lambda r: r["scripted_drawn_ms"]))))
    print(h.fmt_row("    Chromium: the page shows it", known(every(led, lambda r: r["chromium_ms"]))))
    if any(r.get("chromium_drawn_ms") for r in led):
        print(h.fmt_row("    Chromium: its title painted", known(every(led, lambda r: r["chromium_painted_ms"]))))
        print(h.fmt_row("    Chromium: its figure drawn", known(every(led, lambda r: r["chromium_drawn_ms"]))))
    print(h.fmt_row("the teacher's own run (click -> done)", known(r["teacher_ms"] for r in led)))
    print(h.fmt_row("this process's event loop, late by (max)", [r["loop_late_ms"] for r in led]))


def missing(led: list[dict]) -> int:
    return sum(1 for x in every(led, shown_ms) if x is None)


def warm(led: list[dict]) -> list[dict]:
    """The steps whose files had been made before (a step's first visit on a server makes them)."""
    return [x for x in led if not x.get("first_visit")]


def report_steps(r: dict) -> dict:
    led, small = r["steps"], r["small"]["steps"]
    first = [x["step"] + 1 for x in led if x["first_visit"]]
    print(f"1. step: the teacher's click (its session sends the button's rerun) -> each student shows the step; "
          f"{len(led)} steps x {r['students']} students ({missing(led)} not shown within {WAIT_S:.0f} s; "
          f"first visits, whose files were made then: steps {first or 'none'})")
    print_led(led, "its tour file fetched too")
    lasts = [max(known(shown_ms(x)), default=float("nan")) for x in led]
    print("   each step's last student (ms): " + ", ".join(f"{x:.0f}" for x in lasts))
    print(h.fmt_row("   steps visited before: every student", known(every(warm(led), shown_ms))))
    s = h.summary(known(every(led, shown_ms)))
    ok = s["n"] > 0 and missing(led) == 0 and s["median"] <= 150 and s["p95"] <= 300
    print(f"   target median <= 150 ms and p95 <= 300 ms, every student, every step: {verdict(ok)}")
    drawn = report_drawn(led)
    print(f"   the same with {r['small']['students']} students (first visits: steps "
          f"{[x['step'] + 1 for x in small if x['first_visit']] or 'none'}):")
    print_led(small, "its tour file fetched too")
    return {"median_ms": s.get("median"), "p95_ms": s.get("p95"), "max_ms": s.get("max"), "not_shown": missing(led),
            "warm_p95_ms": h.summary(known(every(warm(led), shown_ms))).get("p95"), "met": ok, "drawn": drawn}


def report_drawn(led: list[dict]) -> dict:
    """Each Chromium phone's steps, from the click to its title placed, painted, and its figure drawn (issue #61)."""
    shown, painted, drawn = (list(zip(*(r[key] for r in led), strict=True))
                             for key in ("chromium_ms", "chromium_painted_ms", "chromium_drawn_ms"))
    for n, phone in enumerate(zip(shown, painted, drawn, strict=True)):
        for name, times in zip(("shown", "painted", "drawn"), phone, strict=True):
            print(h.fmt_row(f"   phone {n + 1}: {name}", known(times)))
    every_drawn = [x for phone in drawn for x in phone]
    s = h.summary(known(every_drawn))
    ok = s["n"] > 0 and None not in every_drawn and s["p95"] <= 700
    print(f"   target (issue #61): every Chromium phone's figure drawn, p95 <= 700 ms: {verdict(ok)}")
    return {"median_ms": s.get("median"), "p95_ms": s.get("p95"), "max_ms": s.get("max"),
            "not_drawn": every_drawn.count(None), "met": ok,
            "painted_p95_ms": h.summary(known(x for phone in painted for x in phone)).get("p95"),
            "per_phone": [{"shown_ms": list(a), "painted_ms": list(b), "drawn_ms": list(c)}
                          for a, b, c in zip(shown, painted, drawn, strict=True)]}


def report_cost(r: dict) -> dict:
    print("4. a step's cost: the server process's CPU seconds (its worker processes, which build the Explorer's parts "
          "ahead, apart) from the click until every student had drawn the step (scripted: state and tour file; "
          "Chromium: title), per step visited before (first visits apart)")
    out = {}
    for name, led in (("0 students (the teacher's run)", r["cost_0"]),
                      (f"{r['small']['students']} students", r["small"]["steps"]),
                      (f"{r['students']} students", r["steps"])):
        cost = [x["cpu_s"] for x in warm(led)]
        s = h.summary(cost)
        firsts = [f"{x['cpu_s']:.2f}" for x in led if x.get("first_visit")]
        print(f"   {name:<32} median {s.get('median', float('nan')):.3f} s, mean "
              f"{sum(cost) / max(1, len(cost)):.3f} s, max {s.get('max', float('nan')):.3f} s over {len(cost)} steps"
              + (f"; first visits {', '.join(firsts)} s" if firsts else ""))
        out[name] = {"median_s": s.get("median"), "mean_s": sum(cost) / max(1, len(cost))}
    return out


def report_answers(a: dict) -> dict:
    print(f"5. answers: {a['sent']} sent at random moments of {ANSWER_WINDOW_S:.0f} s, {a['counted']} told counted, "
          f"{a['not_counted']} not")
    print(h.HEADER)
    for kind in ("scripted", "chromium"):
        print(h.fmt_row(f"an answer's POST, {kind}", a["answer_ms"][kind]))
    delay = a["status_after_last_answer_ms"]
    print(f"   the teacher's status said all answered {'not within 20 s' if delay is None else f'{delay:.0f} ms'} "
          "after the last answer's response")
    match = a["reveals_matching"] == a["reveals_read"] > 0
    same = "same, each answer its sender's" if a["stored_matches"] else "DIFFERENT"
    stored = "" if a["stored_counts"] is None else f"; the record in Redis: {a['stored_counts']} ({same})"
    print(f"   counts sent {a['sent_counts']}; the reveal read by {a['reveals_read']} scripted students says them in "
          f"{a['reveals_matching']} ({'yes' if match else 'NO'}), verdicts {a['verdicts']}{stored}")
    ok = match and a["counted"] == a["sent"] and a["stored_matches"] is not False
    print(f"   every answer counted and the revealed counts as sent: {verdict(ok)}")
    return {"met": ok}


def report_show_me(r: dict) -> dict:
    led = [r]
    print(f"2. \"show me\": the teacher's click -> every student's Explorer on the view ({missing([r])} not within "
          f"{WAIT_S:.0f} s)")
    print(h.HEADER)
    print(h.fmt_row("every student (scripted: files; Chromium: drawn)", known(shown_ms(r, drawn=True))))
    print(h.fmt_row("    scripted: its state arrived", known(r["scripted_ms"])))
    print(h.fmt_row("    scripted: and its page's files fetched", known(r["scripted_drawn_ms"])))
    print(h.fmt_row("    Chromium: data-drawn is the view", known(r["chromium_ms"])))
    print(h.fmt_row("the teacher's own run (click -> done)", known(x["teacher_ms"] for x in led)))
    print(h.fmt_row("this process's event loop, late by (max)", [r["loop_late_ms"]]))
    s = h.summary(known(shown_ms(r, drawn=True)))
    ok = s["n"] > 0 and None not in shown_ms(r, drawn=True) and s["p95"] <= 1000
    print(f"   server CPU until the last: {r['cpu_s']:.2f} s in its process, {r['workers_cpu_s']:.2f} s in its worker "
          f"processes; target p95 <= 1 s: {verdict(ok)}")
    return {"p95_ms": s.get("p95"), "max_ms": s.get("max"), "cpu_s": r["cpu_s"], "met": ok}


def usage_line(u: dict) -> str:
    cpu = u["cpu_percent"]
    return (f"server CPU {cpu['server']:.2f} % of one core, {cpu['workers']:.2f} % of it in worker processes "
            f"(redis-server {cpu['redis']:.2f} %, Chromium {cpu['chromium']:.1f} %, this process "
            f"{cpu['benchmark']:.1f} %; machine {u['machine_busy_percent']:.0f} % of {os.cpu_count()} cores); RSS "
            f"{u['rss_start_mb']:.0f} -> {u['rss_end_mb']:.0f} MB ({u['rss_growth_mb']:+.1f} MB, peak "
            f"{u['rss_peak_mb']:.0f}, fit {u['rss_mb_per_min']:+.2f} MB/min)")


def report_idle(r: dict) -> dict:
    i = r["idle"]
    print(f"3. idle: {r['students']} students and the teacher's page following a tour step for {i['seconds']:.0f} s, "
          f"from when the server was quiet ({i['quiet_after_s']:.0f} s after the class came back to the tour)")
    print(f"   {usage_line(i)}")
    after = h.summary(known(shown_ms(i["following_after"])))
    print(f"   errors while idle: {i['errors'] or 'none'}; then one more step: {after['n']} of {r['students']} "
          f"showed it (median {after.get('median', float('nan')):.0f} ms, p95 {after.get('p95', float('nan')):.0f} ms)")
    errors = sum(i["errors"].values())
    ok = i["cpu_percent"]["server"] <= 3 and i["rss_growth_mb"] <= 20 and errors == 0
    print(f"   targets CPU <= 3 %, RSS growth <= 20 MB, 0 errors: {verdict(ok)}")
    return {"cpu_percent": i["cpu_percent"]["server"], "rss_growth_mb": i["rss_growth_mb"], "errors": errors,
            "met": ok}


def report_flood(r: dict) -> dict:
    f, quiet = r["flood"], h.summary(known(every(warm(r["steps"]), shown_ms)))
    led = f["steps"]
    flood = f["flooder"]
    answered = sum(flood["statuses"].values())
    print(f"6. a flood: {FLOOD_CONNECTIONS} keep-alive connections from {FLOODER} read the class's state as fast as "
          f"they can (a process of its own), {len(led)} steps meanwhile ({missing(led)} not shown)")
    print_led(led, "its tour file fetched too")
    s = h.summary(known(every(warm(led), shown_ms)))
    ratio = s.get("p95", float("nan")) / quiet.get("p95", float("nan"))
    print(f"   the flooder: {answered} answers in {flood['seconds']:.0f} s ({answered / flood['seconds']:.0f}/s): "
          f"{flood['statuses']} by status, failures {flood['failures']}; its CPU {flood['cpu_s']:.1f} s; server CPU "
          f"{f['cpu_s']['server']:.1f} s meanwhile")
    ok = missing(led) == 0 and ratio <= 1.5
    print(f"   step p95 {s.get('p95', float('nan')):.0f} ms against {quiet.get('p95', float('nan')):.0f} ms quiet "
          "(steps visited before, both): "
          f"{ratio:.2f}x; target <= 1.5x: {verdict(ok)}")
    return {"p95_ms": s.get("p95"), "quiet_p95_ms": quiet.get("p95"), "ratio": ratio,
            "refused": flood["statuses"].get(429, 0), "answered_200": flood["statuses"].get(200, 0), "met": ok}


def report_explorer(in_class: dict, alone: dict) -> dict:
    """The Explorer's p95 (input to every chart drawn) while the class follows, and the same server alone."""
    print(f"7. the Explorer in another tab (Chromium, {EXPLORER_KINDS}), while the class follows and once it left")
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
          f" every chart p95 <= 100 ms while the class follows: {verdict(ok)}")
    return {"p95_ms": p95s, "p95_ratios": ratios, "errors": errors, "met": ok}


def report_log(name: str, lines: list[str]) -> None:
    print(f"   server log ({name}): {len(lines)} lines of warnings/errors" + "".join(f"\n     {x}" for x in lines[:5]))


def report(store: str, r: dict) -> dict:
    print(f"\n== {store} store: a teacher and {r['students']} students ({r['chromium_students']} Chromium pages), "
          f"every limit its default; load average "
          f"{' '.join(f'{x:.2f}' for x in r['load_average_start'])} at the start, "
          f"{' '.join(f'{x:.2f}' for x in r['load_average_end'])} at the end ==")
    print(f"   settle: {r['settle_seconds']:.0f} s after the class started; then the server used "
          f"{r['settle_cpu_percent_last_10_s']:.1f} % of a core over 10 s")
    if not r["teacher_counted_all"]:
        print(f"   the teacher's status never said \"{status_line(r['students'])}\"")
    summary = {"steps": report_steps(r), "show_me": report_show_me(r["show_me"]), "idle": report_idle(r),
               "cost": report_cost(r), "answers": report_answers(r["answers"])}
    if "flood" in r:
        summary["flood"] = report_flood(r)
    if "explorer_in_class" in r:
        summary["explorer"] = report_explorer(r["explorer_in_class"], r["explorer_alone"])
    print(f"   errors over the whole class: {r['errors'] or 'none'}; Chromium messages: {r['chromium_messages'][:3]}")
    report_log("class", r["server_log"])
    return summary


def report_cluster(c: dict) -> dict:
    step, before, after, streams = c["step_after_kill"], c["before_kill"], c["after_kill"], c["streams"]
    print(f"\n== the cluster: 2 replicas behind HAProxy{' (HTTPS)' if c.get('tls') else ''}, {c['students']} "
          f"students; streams by replica (affinity "
          f"cookie) {c['streams_by_replica']}; replica 1 SIGKILLed ==")
    print(f"   streams: {streams['scripted_on_killed']} scripted students' streams on replica 1, "
          f"{streams['broke_at_kill']} broke at the kill ({streams['broke_and_on_killed']} of them on replica 1, "
          f"{streams['broke_elsewhere']} elsewhere), opened again on {streams['reopened_on']}:")
    print(h.HEADER)
    print(h.fmt_row("the kill -> its stream broke", streams["kill_to_break_ms"]))
    print(h.fmt_row("broke -> asked again (its retry)", streams["break_to_asked_again_ms"]))
    print(h.fmt_row("asked again -> answered through HAProxy", streams["asked_to_answered_ms"]))
    print(f"   before the kill: question {before['question'] + 1}, {before['sent']} answers sent "
          f"({before['last_answers']} of replica 1's students last, the last answered "
          f"{before['last_ack_to_kill_ms']:.0f} ms before the kill), {before['counted']} told counted; in Redis right "
          f"after the kill: {before['stored']} answers, "
          f"{'each its sender' if before['stored_matches'] else 'NOT as sent'}")
    print(f"   the teacher's \"Next in script\" {step['click_after_kill_ms']:.0f} ms after the kill -> every student "
          f"shows question {after['question'] + 1} ({missing([step])} not within {WAIT_S:.0f} s):")
    print_led([step], "its questions file")
    print(f"   after the kill: {after['sent']} answers sent ({after['students_answered']} students, replica 1's "
          f"scripted ones twice), {after['counted']} told counted; in Redis: {after['stored']} answers, "
          f"{'each the last its sender sent' if after['stored_matches'] else 'NOT as sent'}")
    shown = known(shown_ms(step))
    ok_step = missing([step]) == 0 and max(shown, default=float("inf")) <= 1000 * CLUSTER_STEP_S
    ok_answers = before["stored_matches"] and after["stored_matches"] and after["stored"] == after["students_answered"]
    print(f"   every student within {CLUSTER_STEP_S:.0f} s (max {max(shown, default=float('nan')):.0f} ms): "
          f"{verdict(ok_step)}; each answer counted once: {verdict(ok_answers)}")
    print(f"   HAProxy: {c['haproxy']['requests']} requests logged, {c['haproxy']['http_errors']} HTTP errors "
          f"{c['haproxy']['error_lines'][:2]}, marked down {c['haproxy']['marked_down'][:2]}; errors {c['errors']}; "
          f"Chromium messages {c['chromium_messages'][:3]}; replica logs {c['replica_log_problems'][:3]}")
    return {"max_ms": max(shown, default=None), "step_met": ok_step, "answers_met": bool(ok_answers)}


def report_tls(plain: dict, secure: dict) -> dict:
    """The cluster's class by plain HTTP and through HTTPS, back to back, before the kill: HAProxy's CPU while the
    class joined, and every lead (the tour steps, then the live script to its first question) at every student."""
    out: dict = {}
    print(f"\n== HTTPS against plain HTTP: the cluster's class before the kill ({plain['students']} and "
          f"{secure['students']} students) ==")
    print(h.HEADER)
    for name, c in (("plain", plain), ("https", secure)):
        led, cpu = c["steps"] + c["script"], c["haproxy_cpu_s"]
        print(h.fmt_row(f"{name}: every student, from the click", known(every(led, shown_ms))))
        lasts = [max(known(shown_ms(x)), default=float("nan")) for x in led]
        print(h.fmt_row(f"{name}: each lead's last student", lasts))
        s, last = h.summary(known(every(led, shown_ms))), h.summary(lasts)
        out[name] = {"median_ms": s.get("median"), "p95_ms": s.get("p95"), "last_median_ms": last.get("median"),
                     "last_p95_ms": last.get("p95"), "not_shown": missing(led), "leads": len(led),
                     "joins_s": c["joins_s"], "haproxy_joins_cpu_s": cpu["after_joins"] - cpu["before_joins"],
                     "haproxy_steps_cpu_s": cpu["after_steps"] - cpu["before_steps"],
                     "errors_before_kill": c["errors_before_kill"], "foreign_cpu_mean": c.get("foreign_cpu_mean")}
    for name, o in out.items():
        print(f"   {name}: {o['leads']} leads, {o['not_shown']} not shown; HAProxy CPU "
              f"{o['haproxy_joins_cpu_s']:.2f} s while the class joined ({o['joins_s']:.0f} s), "
              f"{o['haproxy_steps_cpu_s']:.2f} s over the leads; errors {o['errors_before_kill'] or 'none'}; "
              f"foreign CPU mean {o['foreign_cpu_mean'] or 0:.2f} cores")
    for field in ("median_ms", "p95_ms", "last_median_ms", "last_p95_ms"):
        out[f"{field}_ratio"] = (out["https"][field] or float("nan")) / (out["plain"][field] or float("nan"))
    out["met"] = out["https"]["not_shown"] == 0 and max(out["median_ms_ratio"], out["p95_ms_ratio"]) <= 1.2
    print(f"   HTTPS / plain: median {out['median_ms_ratio']:.2f}x, p95 {out['p95_ms_ratio']:.2f}x (each lead's last "
          f"student: {out['last_median_ms_ratio']:.2f}x, {out['last_p95_ms_ratio']:.2f}x); target <= 1.2x: "
          f"{verdict(out['met'])}")
    return out


def report_pairs(pairs: list[dict]) -> dict:
    """Several plain-then-HTTPS pairs: each pair's ratios, and the ratios of all their leads pooled."""
    pooled = {name: h.summary(known([x for p in pairs for x in every(p[key]["steps"] + p[key]["script"], shown_ms)]))
              for name, key in (("plain", "cluster"), ("https", "cluster_tls"))}
    out = {"pairs": [{k: p["tls"][k] for k in ("median_ms_ratio", "p95_ms_ratio")} for p in pairs],
           "pooled": {name: {"median_ms": s.get("median"), "p95_ms": s.get("p95")} for name, s in pooled.items()}}
    for field in ("median_ms", "p95_ms"):
        out[f"pooled_{field}_ratio"] = out["pooled"]["https"][field] / out["pooled"]["plain"][field]
    out["met"] = all(p["tls"]["https"]["not_shown"] == 0 for p in pairs) and max(
        out["pooled_median_ms_ratio"], out["pooled_p95_ms_ratio"]) <= 1.2
    print(f"\n== {len(pairs)} pairs, HTTPS / plain: " + "; ".join(
        f"{x['median_ms_ratio']:.2f}x / {x['p95_ms_ratio']:.2f}x" for x in out["pairs"]))
    print(f"   pooled: plain {out['pooled']['plain']['median_ms']:.1f} / {out['pooled']['plain']['p95_ms']:.1f} ms, "
          f"HTTPS {out['pooled']['https']['median_ms']:.1f} / {out['pooled']['https']['p95_ms']:.1f} ms: "
          f"{out['pooled_median_ms_ratio']:.2f}x / {out['pooled_p95_ms_ratio']:.2f}x; target <= 1.2x: "
          f"{verdict(out['met'])}")
    return out


def report_split(c: dict) -> dict:
    """One class, every other scripted student by HTTPS and the rest by plain HTTP, through two HAProxys before
    the same replicas: each lead met by both kinds at once (the machine's noise and the lead's own cost are the
    same for both), before the kill."""
    led = c["steps"] + c["script"]
    by_kind = {kind: known([x for r in led for x, secure in zip(r["scripted_ms"], r["scripted_tls"], strict=True)
                            if secure == (kind == "https")]) for kind in ("plain", "https")}
    out = {kind: h.summary(values) | {"n": len(values)} for kind, values in by_kind.items()}
    per_lead = []
    for r in led:
        medians = {kind: statistics.median(known([x for x, secure in zip(r["scripted_ms"], r["scripted_tls"],
                                                                         strict=True) if secure == (kind == "https")]))
                   for kind in ("plain", "https")}
        per_lead.append(medians["https"] / medians["plain"])
    out |= {"median_ratio": out["https"]["median"] / out["plain"]["median"],
            "p95_ratio": out["https"]["p95"] / out["plain"]["p95"], "per_lead_median_ratios": per_lead,
            "not_shown": missing(led), "errors_before_kill": c["errors_before_kill"]}
    out["met"] = out["not_shown"] == 0 and max(out["median_ratio"], out["p95_ratio"]) <= 1.2
    print(f"\n== one class split between HTTPS and plain HTTP ({out['https']['n']} and {out['plain']['n']} "
          "readings of the scripted students, the same leads) ==")
    print(h.HEADER)
    for kind, values in by_kind.items():
        print(h.fmt_row(f"{kind}: every scripted student, from the click", values))
    print(f"   each lead's HTTPS / plain median: {', '.join(f'{x:.2f}' for x in per_lead)}")
    print(f"   HTTPS / plain: median {out['median_ratio']:.2f}x, p95 {out['p95_ratio']:.2f}x; target <= 1.2x: "
          f"{verdict(out['met'])}; errors {out['errors_before_kill'] or 'none'}")
    return out


def print_summary(record: dict) -> None:
    """Every target, each store a column."""
    stores = [s for s in ("memory", "redis") if "summary" in record["results"].get(s, {})]
    rows = [("1. step median (ms) <= 150", "steps", "median_ms"), ("1. step p95 (ms) <= 300", "steps", "p95_ms"),
            ("1. step max (ms)", "steps", "max_ms"), ("2. show me p95 (ms) <= 1000", "show_me", "p95_ms"),
            ("2. show me max (ms)", "show_me", "max_ms"), ("3. idle CPU (%) <= 3", "idle", "cpu_percent"),
            ("3. idle RSS growth (MB) <= 20", "idle", "rss_growth_mb"), ("3. idle errors = 0", "idle", "errors"),
            ("6. flood step p95 (ms)", "flood", "p95_ms"), ("6. flood / quiet p95 <= 1.5", "flood", "ratio"),
            ("6. flooder answered 200", "flood", "answered_200"), ("6. flooder refused 429", "flood", "refused")]
    print("\n== summary ==")
    print(f"{'':<34}" + "".join(f"{s:>12}" for s in stores))
    for name, part, field in rows:
        values = [record["results"][s]["summary"].get(part, {}).get(field) for s in stores]
        print(f"{name:<34}" + "".join(f"{'-' if v is None else f'{v:.1f}':>12}" for v in values))
    for s in stores:
        cost = record["results"][s]["summary"]["cost"]
        print(f"4. {s}: a step's server CPU, median per step: "
              + ", ".join(f"{k}: " + ("- (first visits only)" if v["median_s"] is None else f"{v['median_s']:.3f} s")
                          for k, v in cost.items()))
        parts = record["results"][s]["summary"]
        print(f"   {s}: answers {verdict(parts['answers']['met'])}")
    if "cluster" in record and "summary" in record["cluster"]:
        c = record["cluster"]["summary"]
        print(f"7. cluster: every student within {CLUSTER_STEP_S:.0f} s of the click after the kill: max "
              f"{c['max_ms']:.0f} ms ({verdict(c['step_met'])}); answers counted once: {verdict(c['answers_met'])}")
    if "tls" in record:
        t = record["tls"]
        print(f"8. HTTPS / plain before the kill: step median {t['median_ms_ratio']:.2f}x, p95 "
              f"{t['p95_ms_ratio']:.2f}x (<= 1.2x: {verdict(t['met'])}); HAProxy CPU while the class joined "
              f"{t['plain']['haproxy_joins_cpu_s']:.2f} -> {t['https']['haproxy_joins_cpu_s']:.2f} s")


async def measure(browser, store: str, args, logs: Path) -> dict:
    """Every part on ``store``, reported as soon as measured."""
    result = await live_class(browser, store, args, logs)
    result["summary"] = report(store, result)
    return result


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright  # noqa: PLC0415 - only a run needs it

    logs = Path(tempfile.mkdtemp(prefix="blockstab-live-class-"))
    print(f"measuring {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}; server logs in {logs}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    record: dict = {"app": f"{h.APP_ROOT} at {h.git_state(h.APP_ROOT)}", "logs": str(logs), "results": {},
                    "load_average_start": os.getloadavg()}
    with h.ForeignLoad() as foreign:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=h.CHROMIUM, args=[*h.CHROMIUM_ARGS, LOCAL_ONLY])
            for store in {"both": ("memory", "redis"), "none": ()}.get(args.store, (args.store,)):
                try:
                    record["results"][store] = await measure(browser, store, args, logs)
                except Exception as error:  # noqa: BLE001 - the other store is still measured
                    print(f"\n== {store} store: FAILED: {type(error).__name__}: {error}", flush=True)
                    traceback.print_exc()
                    record["results"][store] = {"failed": f"{type(error).__name__}: {error}"}
            for pair in range(args.pairs if args.tls else 1):
                runs: dict = {}
                for key, tls in (("cluster", False), ("cluster_tls", True)):
                    if not (args.cluster if key == "cluster" else args.tls):
                        continue
                    sampled = len(foreign.samples)
                    try:
                        runs[key] = await cluster_class(browser, args, logs, tls)
                        runs[key]["summary"] = report_cluster(runs[key])
                    except Exception as error:  # noqa: BLE001 - reported
                        print(f"\n== the cluster: FAILED: {type(error).__name__}: {error}", flush=True)
                        traceback.print_exc()
                        runs[key] = {"failed": f"{type(error).__name__}: {error}"}
                    runs[key]["foreign_cpu_mean"] = statistics.fmean(foreign.samples[sampled:] or [0.0])
                if args.tls and all("summary" in runs.get(key, {}) for key in ("cluster", "cluster_tls")):
                    runs["tls"] = report_tls(runs["cluster"], runs["cluster_tls"])
                record |= runs if pair == 0 else {}
                record.setdefault("pairs", []).append(runs)
            if args.pairs > 1 and all("tls" in runs for runs in record["pairs"]):
                record["tls_pairs"] = report_pairs(record["pairs"])
            if args.tls_split:
                try:
                    record["cluster_split"] = await cluster_class(browser, args, logs, tls=True, split=True)
                    record["tls_split"] = report_split(record["cluster_split"])
                except Exception as error:  # noqa: BLE001 - reported
                    print(f"\n== the split class: FAILED: {type(error).__name__}: {error}", flush=True)
                    traceback.print_exc()
            await browser.close()
    record |= {"foreign": foreign.summary(), "foreign_cpu_mean": sum(foreign.samples) / max(1, len(foreign.samples)),
               "load_average_end": os.getloadavg()}
    print_summary(record)
    print(f"{foreign.summary()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("memory", "redis", "both", "none"), default="both")
    parser.add_argument("--cluster", action="store_true", help="also the class on 2 replicas, one killed")
    parser.add_argument("--tls", action="store_true", help="with --cluster: then the same class through HTTPS "
                        "(HAProxy with a certificate of its own), compared before the kill")
    parser.add_argument("--tls-split", action="store_true", help="one class of the cluster, every other scripted "
                        "student through HTTPS and the rest plain HTTP, compared lead by lead")
    parser.add_argument("--pairs", type=int, default=1, help="with --tls: plain then HTTPS this many times, "
                        "each pair's ratios and all pooled")
    parser.add_argument("--students", type=int, default=200, help="students in all (Chromium pages included)")
    parser.add_argument("--browser-students", type=int, default=4, help="how many are headless Chromium pages")
    parser.add_argument("--small-class", type=int, default=40, help="the students of a step's cost at a smaller class")
    parser.add_argument("--steps", type=int, default=8, help="tour steps the teacher leads each time")
    parser.add_argument("--settle-seconds", type=float, default=60.0, help="from the class's start to its first step")
    parser.add_argument("--idle-seconds", type=float, default=300.0)
    parser.add_argument("--join-every", type=float, default=0.1, help="seconds between two students joining")
    parser.add_argument("--flood", choices=("memory", "redis", "both", "none"), default="memory",
                        help="the stores on which a flood is measured")
    parser.add_argument("--explorer-n", type=int, default=20,
                        help="timed Explorer interactions of each kind, with the class and alone (0: not measured)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--app-root", type=Path, help="measure the app in this checkout / snapshot")
    args = parser.parse_args()
    h.use_app_root(args.app_root)
    args.students = max(1, min(args.students, 200))
    args.browser_students = max(0, min(args.browser_students, args.students))
    args.flood = {"both": ("memory", "redis"), "none": ()}.get(args.flood, (args.flood,))
    h.check_chromium()
    record = asyncio.run(main_async(args))
    h.write_record(args.json, args, record)


if __name__ == "__main__":
    main()
