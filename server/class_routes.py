"""A live class's student side, served by the app's own routes (no Streamlit session per student): the page
(``GET /join``), its files (``server.class_files``), and the class's small messages: join, the student's
state (read, or pushed as Server-Sent Events whenever the class moves on, ``server.class_events``), an
answer, the reveal. Every input is checked here, a body is at most :data:`MOST_BYTES`, and a refusal is a
JSON ``{"error": key, "message": the catalog's words}`` in the page's language; the teacher's key is never
read or sent by any of these routes."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from urllib.parse import urlencode

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ui.controls import BY_KEY
from ui.live_class import Refused, answer, join, new_student, student_state
from ui.student_page import page, phone_look, reveal_file, verdict
from ui.text import Text

from . import class_events
from .address_limits import language
from .bundles import code_version
from .class_files import ROUTE as FILES_ROUTE
from .class_files import class_file, prefix
from .class_store import class_store
from .client_address import client, trusted
from .policy import POLICY

API = "/api/class/{code}/"
GUESS_SECONDS = 60  # the window of the wrong codes' bounds
SERVER_WRONG = "wrong:server"  # the key of the server's (the cluster's) wrong codes
PING_SECONDS = 15  # an idle stream says it is alive this often (HAProxy ends one silent for 60 s)
RECHECK_SECONDS = 30  # a stream reads its class this often with no move heard (a move missed is seen then)
RETRY_MS = 1000  # a browser whose stream broke connects again after this long (a replica died: another answers)
REVEALS_KEPT = 32


class HttpRefusal(Exception):
    """A request a route refuses: ``key`` the catalog's message, ``status`` the HTTP status it answers with."""

    def __init__(self, key: str, status: int):
        super().__init__(key)
        self.key, self.status = key, status


def text_for(request: Request) -> Text:
    """The page's language: its ``lang`` parameter, else the browser's first language we have."""
    return Text(language(request.scope["query_string"], request.headers.get("accept-language", "")))


def refused(request: Request, key: str, status: int) -> JSONResponse:
    waits = {"Retry-After": str(GUESS_SECONDS)} if status == 429 else {}
    return JSONResponse({"error": key, "message": text_for(request)(key)}, status,
                        headers={"Cache-Control": "no-store", **waits})


class Misses:
    """The computers past their wrong tries a minute (``WRONG_CODES_PER_MINUTE``, counted across the cluster),
    until that minute is out, and the seats this process has seen in the classes it read: a blocked computer's
    request naming a seat it has not seen is refused at once, without reading the store, while its seated
    phones (a school's, behind the same address) go on. A request that names no live class, or a seat the class
    does not have, is such a try too (a script reading random seats, say), so that one computer's flood costs
    the class a dictionary look-up a request. At most ``most`` computers and classes are kept (the oldest go
    first)."""

    def __init__(self, most: int = 10_000, clock=time.monotonic):
        self.most, self.clock = most, clock
        self.until: OrderedDict[str, float] = OrderedDict()
        self.seats: OrderedDict[str, frozenset[str]] = OrderedDict()  # code -> its seats, as last read here

    def seen(self, record) -> None:
        """``record``'s seats, as just read."""
        if record is not None:
            self.seats.pop(record.code, None)
            self.seats[record.code] = frozenset(record.seats)
            while len(self.seats) > self.most:
                self.seats.popitem(last=False)

    def refuses(self, who: str, code: str, me: str) -> bool:
        """Whether this process refuses ``who``'s request for seat ``me`` of class ``code`` unread."""
        return self.refused(who) and me not in self.seats.get(code, ())

    def refused(self, who: str) -> bool:
        until = self.until.get(who)
        if until is not None and until <= self.clock():
            del self.until[who]
            return False
        return until is not None

    def block(self, who: str) -> None:
        self.until.pop(who, None)
        self.until[who] = self.clock() + GUESS_SECONDS
        while len(self.until) > self.most:
            self.until.popitem(last=False)


MISSES = Misses()


async def read(code: str):
    """The class as the store has it, its seats noted as seen in this process (:class:`Misses`)."""
    record = await run_in_threadpool(class_store().read, code)
    MISSES.seen(record)
    return record


def guard(request: Request, code: str, me: str) -> None:
    """Refuse at once (429) a computer past its wrong tries, unless it names a seat this process has seen."""
    if MISSES.refuses(client_of(request), code, me):
        raise HttpRefusal("class.too_many_tries", 429)


async def missed(request: Request) -> None:
    """Count a request that named no live class or no seat against its computer's wrong codes a minute;
    past them, this process refuses the computer's class requests until the minute is out."""
    who = client_of(request)
    if not await run_in_threadpool(class_store().allow, f"wrong:{who}", POLICY["WRONG_CODES_PER_MINUTE"],
                                   GUESS_SECONDS):
        MISSES.block(who)


def answered(value) -> JSONResponse:
    return JSONResponse(value, headers={"Cache-Control": "no-store"})


def client_of(request: Request) -> str:
    return client(request.client.host if request.client else None, request.headers.getlist, trusted())


def the_code(request: Request) -> str:
    code = BY_KEY["class"].parse(request.path_params["code"])
    if code is None:
        raise HttpRefusal("class.bad_code", 400)
    return code


def the_student(raw) -> str:
    me = BY_KEY["me"].parse(raw) if isinstance(raw, str) else None
    if me is None:
        raise HttpRefusal("class.bad_link", 400)
    return me


async def body_of(request: Request) -> dict:
    """The request's JSON object, read no further than the policy's ``BODY_BYTES``."""
    if not request.headers.get("content-type", "").startswith("application/json"):
        raise HttpRefusal("class.bad_request", 415)
    read = b""
    async for chunk in request.stream():
        read += chunk
        if len(read) > POLICY["BODY_BYTES"]:
            raise HttpRefusal("class.bad_request", 413)
    try:
        value = json.loads(read)
    except ValueError:
        raise HttpRefusal("class.bad_request", 400) from None
    if not isinstance(value, dict):
        raise HttpRefusal("class.bad_request", 400)
    return value


def refusals(route):
    """``route`` whose :class:`HttpRefusal` (or a class's ``Refused``) is the JSON error it answers."""
    statuses = {"class.ended": 404, "class.not_seated": 404, "class.full": 409, "class.locked": 409,
                "class.paused": 409, "class.question_closed": 409, "class.bad_choice": 400, "class.bad_link": 400,
                "class.not_revealed": 409, "class.time_up": 409, "class.bad_number": 400}

    async def checked(request: Request) -> Response:
        try:
            return await route(request)
        except HttpRefusal as refusal:
            return refused(request, refusal.key, refusal.status)
        except Refused as change:
            return refused(request, change.key, statuses.get(change.key, 409))
    return checked


async def student_page(request: Request) -> HTMLResponse:
    """The page a class's join link and QR code open; ``/join`` with no code, or a bad one, asks for it."""
    t, raw = text_for(request), request.query_params.get("class", "")
    code = BY_KEY["class"].parse("".join(raw.split()).upper())  # as typed into its form: spaces, lower case
    if code is not None and code != raw:
        query = urlencode({**request.query_params, "class": code})
        return Response(status_code=303, headers={"Location": f"/join?{query}"})
    problem = "class.bad_code" if raw and code is None else None
    html = page(t, code, phone_look(request.headers.get("user-agent", "")), prefix(),
                 API.format(code=code) if code else "", problem)
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


@refusals
async def join_class(request: Request) -> JSONResponse:
    """A seat in the class (its token ``me``, which the page keeps: a reload keeps the seat and its answers):
    ``{"me", "state"}``. A try for a new seat is a guess of the code: past the computer's wrong codes a minute,
    or the server's (the cluster's), the code is not even looked up (``ClassStore.guess``)."""
    code, asked = the_code(request), await body_of(request)
    me = the_student(asked["me"]) if "me" in asked else new_student()
    guard(request, code, me)
    store = class_store()
    record = await read(code)
    if record is None or me not in record.seats:
        bounds = [(f"wrong:{client_of(request)}", POLICY["WRONG_CODES_PER_MINUTE"]),
                  (SERVER_WRONG, POLICY["SERVER_WRONG_CODES_PER_MINUTE"])]
        over = await run_in_threadpool(store.guess, code, bounds, GUESS_SECONDS)
        if over is not None and over != SERVER_WRONG:
            MISSES.block(bounds[0][0].removeprefix("wrong:"))
        if over is not None:
            raise HttpRefusal("class.server_too_many_tries" if over == SERVER_WRONG else "class.too_many_tries", 429)
        record = await run_in_threadpool(
            store.update, code, lambda c: join(c, me, time.time(), POLICY["STUDENTS_PER_CLASS"]))
        MISSES.seen(record)
    return answered({"me": me, "state": student_state(record, me, time.time())})


@refusals
async def class_state(request: Request) -> JSONResponse:
    """``{"state": ...}``: what the student's page shows (``null``: ended, never was, or not in it: all alike)."""
    code, me = the_code(request), the_student(request.query_params.get("me"))
    guard(request, code, me)
    record = await read(code)
    if no_seat(record, me):
        await missed(request)
    return answered({"state": student_state(record, me, time.time()) if record else None})


def no_seat(record, me: str) -> bool:
    """Whether a request names no live class, or a seat a class still running does not have (an ended
    class's phones asking again are not counted)."""
    return record is None or not record.ended and me not in record.seats


@refusals
async def class_events_stream(request: Request) -> EventSourceResponse:
    """The student's state at once, then again each time it changes (or its question's timer runs out), as
    ``state`` events; ``null`` (and the stream's end) once the class has ended or the student is not in it."""
    code, me = the_code(request), the_student(request.query_params.get("me"))
    guard(request, code, me)

    async def states():
        seen = ()
        while True:
            moves, heard = class_events.watch(code)
            record = await class_events.read(code, heard)
            MISSES.seen(record)
            if seen == () and no_seat(record, me):
                await missed(request)  # (named at the stream's start; a seat removed later is not)
            now = time.time()
            state = student_state(record, me, now) if record else None
            if state != seen:
                yield ServerSentEvent(json.dumps(state), event="state", retry=RETRY_MS)
                seen = state
            if state is None:
                return
            timed = state["closes_in"] is not None
            await class_events.until(moves, min(RECHECK_SECONDS, record.closes_at - now) if timed else RECHECK_SECONDS)

    return EventSourceResponse(states(), ping=PING_SECONDS, headers={"Cache-Control": "no-store"})


@refusals
async def class_answer(request: Request) -> JSONResponse:
    """The seat's answer to the question the class asked at ``asked`` (a new choice replaces its own; the
    same one again changes nothing): ``{"counted": true}``. A token without a seat, and a class that has
    ended, are refused alike (a code is not told apart from a wrong one)."""
    code, asked = the_code(request), await body_of(request)
    me, choice, at = the_student(asked.get("me")), asked.get("choice"), asked.get("asked")
    if not isinstance(choice, str) or type(at) is not int:
        raise HttpRefusal("class.bad_request", 400)
    guard(request, code, me)

    def answered_now(c):
        if me not in c.seats:
            raise Refused("class.not_seated")
        if c.asked != at:
            raise Refused("class.question_closed")
        return answer(c, me, choice, time.time())

    try:
        changed = await run_in_threadpool(class_store().update, code, answered_now)
    except Refused as refused:
        if refused.key in ("class.not_seated", "class.ended"):
            await missed(request)
        raise Refused("class.not_seated") if refused.key == "class.ended" else refused from None

    return answered({"counted": me in changed.answers})


_reveals: OrderedDict[tuple, dict] = OrderedDict()  # (code, version, lang) -> what every student is shown


@refusals
async def class_reveal(request: Request) -> JSONResponse:
    """The revealed question: the class's answers (a chart and the chart in words), the right answer and
    why, and this student's own outcome. Made once per class, version and language."""
    code, me, t = the_code(request), the_student(request.query_params.get("me")), text_for(request)
    guard(request, code, me)
    record = await read(code)
    if record is None or me not in record.seats:
        if no_seat(record, me):
            await missed(request)
        raise Refused("class.not_seated")
    if record.activity != "question" or record.phase != "revealed":
        raise Refused("class.not_revealed")
    key = code, record.version, t.lang
    if key not in _reveals:
        _reveals[key] = await run_in_threadpool(reveal_file, record, t)
        while len(_reveals) > REVEALS_KEPT:
            _reveals.popitem(last=False)
    return answered({**_reveals[key], "verdict": verdict(record, me, t)})


async def files(request: Request) -> Response:
    """A file of the student's page, for good under its name (its path names the code's version)."""
    name = request.path_params["name"]
    made = await run_in_threadpool(class_file, name) if request.path_params["version"] == code_version() else None
    if made is None:
        return Response("not found", 404, media_type="text/plain")
    body, media = made
    return Response(body, media_type=media, headers={"Cache-Control": "public, max-age=31536000, immutable"})


ROUTES = [
    Route("/join", student_page, methods=["GET"]),
    Route(FILES_ROUTE + "{version}/{name:path}", files, methods=["GET"]),
    Route(API + "join", join_class, methods=["POST"]),
    Route(API + "state", class_state, methods=["GET"]),
    Route(API + "events", class_events_stream, methods=["GET"]),
    Route(API + "answer", class_answer, methods=["POST"]),
    Route(API + "reveal", class_reveal, methods=["GET"]),
]
