"""A live class's student side on real servers (``server.class_routes``): two app processes started as
``scripts/start.sh`` starts one, sharing a real Redis (``scripts/redis.sh``), as a cluster's replicas do. A
change of the class reaches a student's event stream on either process within a second, pushed; every
bad input is a translated JSON error and changes nothing; an answer sent twice counts once; the page's
files are compressed, kept for good and nothing beside them is reachable; the teacher's key is in nothing
a student is sent."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import http.client
import itertools
import json
import os
import re
import socket
import threading
import time
from urllib.parse import urlencode

import pytest

from server.class_store import RedisStore
from server.policy import POLICY
from support import ROOT, in_own_loop
from testbed.local_server import ServerFailed, redis_server, streamlit_server
from testbed.phones import Phone, request
from ui.controls import CODE_ALPHABET
from ui.lessons import QUESTIONS
from ui.live_class import ask, close, key_hash, new_code, new_key, new_student, reveal, show_step, start
from ui.student_page import PLOTLY_BASIC
from ui.text import Text

EN, ZH = Text("en"), Text("zh")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``(store, ports)``: Redis and two app processes that keep their classes in it."""
    logs = tmp_path_factory.mktemp("class_routes")
    try:
        with redis_server(logs / "redis.log", ROOT) as url, contextlib.ExitStack() as servers:
            env = {**os.environ, "BLOCKSTAB_CLASS_STORE": url, "BLOCKSTAB_ADDRESS_KEY": "k" * 32}
            bases = [servers.enter_context(streamlit_server("app.py", logs / f"server{n}.log", ROOT, env=env))[0]
                     for n in range(2)]
            yield RedisStore(url), [int(base.rsplit(":", 1)[1]) for base in bases]
    except ServerFailed as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture
def a_class(cluster):
    """``(code, key)``: a class started in the shared store, ended afterwards."""
    store, _ = cluster
    code, key = new_code(), new_key()
    assert store.create(start(code, key, "en"))
    yield code, key
    store.end(code)


_ADDRESSES = (f"127.0.{n // 250}.{n % 250 + 2}" for n in itertools.count())
_computer = ["127.0.0.1"]  # the address this test's requests come from


@pytest.fixture(autouse=True)
def another_computer():
    """Each test's requests come from an address of its own (127.0.x.y), as a class's phones each have one:
    the servers' per-address limits (``server.address_limits``) count every test apart (the module's tests
    together sent them more than a computer's burst)."""
    _computer[0] = next(_ADDRESSES)


def connect(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(_computer[0], 0))


def call(port: int, method: str, path: str, body: bytes | dict | None = None, headers: dict | None = None):
    """``(status, headers, body)`` of one request (its headers looked up as HTTP does, in any case)."""
    connection = connect(port)
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    sent = {"Content-Type": "application/json"} if isinstance(body, dict) else {}
    connection.request(method, path, body=data, headers={**sent, **(headers or {})})
    response = connection.getresponse()
    answer = response.status, response.headers, response.read()
    connection.close()
    return answer


def joined(port: int, code: str, me: str | None = None) -> tuple[str, dict]:
    status, _, body = call(port, "POST", f"/api/class/{code}/join?lang=en", {"me": me} if me else {})
    assert status == 200, body
    answer = json.loads(body)
    return answer["me"], answer["state"]


class Stream:
    """A student's event stream, read on a thread of its own: each ``state`` event and when it came."""

    def __init__(self, port: int, code: str, me: str):
        self.connection = connect(port)
        self.connection.request("GET", f"/api/class/{code}/events?me={me}")
        self.response = self.connection.getresponse()
        self.states: list[tuple[float, dict | None]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):  # (closed while it read)
            for line in self.response:
                if line.startswith(b"data:"):
                    self.states.append((time.monotonic(), json.loads(line[5:])))

    def wait(self, count: int, seconds: float = 30) -> list[tuple[float, dict | None]]:
        deadline = time.monotonic() + seconds
        while len(self.states) < count and time.monotonic() < deadline and self.thread.is_alive():
            time.sleep(0.01)
        return self.states

    def wait_until(self, shows, seconds: float = 30) -> None:
        """Until the last state ``shows`` (a stream sends the state it reads: a move made as it opened may be in
        its first)."""
        deadline = time.monotonic() + seconds
        while not (self.states and shows(self.states[-1][1])) and time.monotonic() < deadline:
            time.sleep(0.01)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # (the reading thread's read returns now, not at the next ping)
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()


def test_a_change_is_pushed_to_a_students_stream_on_either_process_within_a_second(cluster, a_class):
    store, ports = cluster
    code, _ = a_class
    students = [joined(port, code) for port in ports]
    streams = [Stream(port, code, me) for port, (me, _) in zip(ports, students, strict=True)]
    try:
        assert all(s.response.status == 200 and s.response.getheader("Content-Type").startswith("text/event-stream")
                   for s in streams)
        assert [s.wait(1)[0][1]["step"] for s in streams] == [0, 0]  # the state at once
        for step in (3, 5):
            before = [len(s.states) for s in streams]  # (counted first: a stream may have its state by the next wait)
            changed = time.monotonic()
            store.update(code, lambda c, step=step: show_step(c, step))  # (as the teacher's page does, anywhere)
            for stream, count in zip(streams, before, strict=True):
                at, state = stream.wait(count + 1)[-1]
                assert state["step"] == step and at - changed < 1.0
        store.update(code, lambda c: ask(c, 0))
        assert all(s.wait(4)[-1][1]["activity"] == "question" for s in streams)
        before = [len(s.states) for s in streams]
        answer = {"me": students[0][0], "asked": store.read(code).asked, "choice": QUESTIONS[0].answer}
        assert call(ports[0], "POST", f"/api/class/{code}/answer", answer)[0] == 200
        store.end(code)
        ended = [s.wait(count + 1)[-1][1] for s, count in zip(streams, before, strict=True)]
        assert ended == [None, None]  # an answer moves no one's page on; the end does, and the stream ends
        for stream in streams:
            stream.thread.join(10)
            assert not stream.thread.is_alive()
    finally:
        for stream in streams:
            stream.close()


def test_a_student_answers_once_however_often_it_is_sent_and_a_reload_keeps_it(cluster, a_class):
    store, (port, other) = cluster
    code, _ = a_class
    me, _ = joined(port, code)
    asked = store.update(code, lambda c: ask(c, 1)).asked
    choice = QUESTIONS[1].answer
    for where in (port, other, port):  # sent again, and by another process
        status, _, body = call(where, "POST", f"/api/class/{code}/answer", {"me": me, "asked": asked, "choice": choice})
        assert (status, json.loads(body)) == (200, {"counted": True})
    record = store.read(code)
    assert record.answers == {me: choice}
    again, state = joined(other, code, me)  # the page reloaded with its link
    assert again == me and state["mine"] == choice and len(store.read(code).seats) == 1


def test_a_timed_question_closes_on_every_stream_by_itself_and_a_late_answer_is_refused_in_words(cluster, a_class):
    """No one touches the class: at the timer's zero, each process's stream pushes the question closed; an
    answer after it is refused, in the page's language."""
    store, ports = cluster
    code, _ = a_class
    students = [joined(port, code) for port in ports]
    streams = [Stream(port, code, me) for port, (me, _) in zip(ports, students, strict=True)]
    try:
        for stream in streams:
            stream.wait(1)
        asked = store.update(code, lambda c: ask(c, 1, timer=5, now=time.time() - 3.5))  # 1.5 s left
        for stream in streams:
            stream.wait_until(lambda s: s["asked"] == asked.asked and s["closes_in"] is not None)
            assert 0 < stream.states[-1][1]["closes_in"] <= 1.5
        for stream in streams:
            stream.wait_until(lambda s: s["asked"] == asked.asked and s["phase"] == "closed", seconds=10)
            closed = stream.states[-1][1]
            assert (closed["phase"], closed["closes_in"], closed["time_up"]) == ("closed", None, True)
        assert time.time() >= asked.closes_at
        body = {"me": students[0][0], "asked": asked.asked, "choice": QUESTIONS[1].answer}
        status, _, said = call(ports[1], "POST", f"/api/class/{code}/answer?lang=zh", body)
        assert (status, json.loads(said)) == (409, {"error": "class.time_up", "message": ZH("class.time_up")})
        assert store.read(code).answers == {}
    finally:
        for stream in streams:
            stream.close()


BAD = [  # (method, path, body, status, the catalog's key)
    ("POST", "/api/class/0OI1L0/join", {}, 400, "class.bad_code"),
    ("POST", "/api/class/{code}/join", {"me": "<script>"}, 400, "class.bad_link"),
    ("POST", "/api/class/{code}/join", {"me": 12}, 400, "class.bad_link"),
    ("POST", "/api/class/{code}/join", (b"{}", "text/plain"), 415, "class.bad_request"),
    ("POST", "/api/class/{code}/join", (b"not json", "application/json"), 400, "class.bad_request"),
    ("POST", "/api/class/{code}/join", (b"[1, 2]", "application/json"), 400, "class.bad_request"),
    ("POST", "/api/class/ACDEFGHJ/join", {}, 404, "class.ended"),
    ("GET", "/api/class/{code}/state?me=short", None, 400, "class.bad_link"),
    ("GET", "/api/class/{code}/events?me=", None, 400, "class.bad_link"),
    ("POST", "/api/class/{code}/answer", {"me": "{me}", "asked": "{asked}", "choice": "no such choice"}, 400,
     "class.bad_choice"),
    ("POST", "/api/class/{code}/answer", {"me": "{me}", "asked": 999, "choice": "hold"}, 409, "class.question_closed"),
    ("POST", "/api/class/{code}/answer", {"me": "{me}", "asked": "3", "choice": "hold"}, 400, "class.bad_request"),
    ("POST", "/api/class/{code}/answer", {"me": "{stranger}", "asked": "{asked}", "choice": "hold"}, 404,
     "class.not_seated"),
    ("POST", "/api/class/ACDEFGHJ/answer", {"me": "{stranger}", "asked": "{asked}", "choice": "hold"}, 404,
     "class.not_seated"),  # (a live code and a wrong one alike: no route tells them apart without a seat)
    ("GET", "/api/class/{code}/reveal?me={me}", None, 409, "class.not_revealed"),
    ("GET", "/api/class/{code}/reveal?me={stranger}", None, 404, "class.not_seated"),
    ("GET", "/api/class/ACDEFGHJ/reveal?me={stranger}", None, 404, "class.not_seated"),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_bad_input_is_a_translated_json_error_and_changes_nothing(cluster, a_class, lang):
    store, (port, _) = cluster
    code, _ = a_class
    me, _ = joined(port, code)
    before = store.update(code, lambda c: ask(c, 2))
    values = {"code": code, "me": me, "stranger": new_student(), "asked": before.asked}

    def filled(value):
        if isinstance(value, str):
            filled_in = value.format(**values)
            return int(filled_in) if value == "{asked}" else filled_in
        return {k: filled(v) for k, v in value.items()} if isinstance(value, dict) else value

    for method, path, body, status, key in BAD:
        joiner = "&" if "?" in path else "?"
        raw, kind = body if isinstance(body, tuple) else (filled(body), None)
        got, headers, answer = call(port, method, filled(path) + f"{joiner}lang={lang}", raw,
                                    {"Content-Type": kind} if kind else None)
        assert (got, json.loads(answer)) == (status, {"error": key, "message": Text(lang)(key)}), (path, body)
        assert headers["Content-Type"].startswith("application/json")
    assert store.read(code) == before
    big = json.dumps({"me": me, "padding": "x" * 2000}).encode()
    assert call(port, "POST", f"/api/class/{code}/join?lang={lang}", big,
                {"Content-Type": "application/json"})[0] == 413  # read no further than a kilobyte


def test_the_page_and_its_files_are_served_compressed_and_kept_and_nothing_beside_them(cluster, a_class):
    _, (port, other) = cluster
    code, _ = a_class
    status, headers, body = call(port, "GET", f"/join?class={code}&lang=zh", headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"
    page = gzip.decompress(body).decode()
    assert '<html lang="zh-Hans">' in page and code in page
    files = re.search(r'"files": "([^"]+)"', page)[1]
    assert call(other, "GET", f"/join?class={code}&lang=zh")[2].decode().count(files) >= 1  # one name, any process
    for name in ("student.js", "student.css", "plotly-basic.min.js", "tour-3-zh-phone.json", "questions-zh.json",
                 "explorer-zh-follow.json", "bundle/phone-both-zh/index.js"):
        status, headers, body = call(port, "GET", files + name, headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers["Cache-Control"] == "public, max-age=31536000, immutable", name
        plain = call(other, "GET", files + name)[2]
        assert headers.get("Content-Encoding") == "gzip" and gzip.decompress(body) == plain
        again = call(port, "GET", files + name, headers={"Accept-Encoding": "gzip"})
        assert again[1].get("X-Gzip-Kept") == "hit" and again[2] == body, name  # compressed once, for every phone
    # Plotly.js as npm published it, after V8's compile hint (a comment to other browsers)
    served = call(other, "GET", files + "plotly-basic.min.js")[2]
    assert served == b"//# allFunctionsCalledOnLoad\n" + PLOTLY_BASIC.read_bytes()
    version = files.rstrip("/").rsplit("/", 1)[1]
    for path in (files.replace(version, "0" * len(version)) + "student.js", files + "tour-9-zh-phone.json",
                 files + "../routes.py", files + "bundle/phone-both-zh/../../../server/asgi.py",
                 files + "bundle/phone-anything-zh/index.js", files + "student.js.map"):
        assert call(port, "GET", path)[0] in (400, 404), path  # (400: Streamlit's own check of a path's dots)


def test_the_teachers_key_is_in_nothing_a_student_is_sent(cluster, a_class):
    store, (port, _) = cluster
    code, key = a_class
    me, joined_state = joined(port, code)
    stream = Stream(port, code, me)
    try:
        store.update(code, lambda c: reveal(close(ask(c, 0))))
        stream.wait_until(lambda state: state["phase"] == "revealed")  # (the first state, if the move came first)
        sent = [call(port, "GET", f"/join?{urlencode({'class': code, 'lang': 'en', 'me': me})}")[2].decode(),
                json.dumps(joined_state), call(port, "GET", f"/api/class/{code}/state?me={me}")[2].decode(),
                call(port, "GET", f"/api/class/{code}/reveal?me={me}&lang=en")[2].decode(),
                json.dumps(stream.states)]
    finally:
        stream.close()
    assert all(key not in part and key_hash(key) not in part and key_hash(key)[:16] not in part for part in sent)
    assert json.loads(sent[3])["verdict"]["kind"] == "not_counted"


def test_a_typed_code_is_read_as_typed_and_a_bad_one_is_said_in_the_pages_language(cluster):
    _, (port, _) = cluster
    status, headers, _ = call(port, "GET", "/join?class=%20acde%20fghj%20&lang=zh")
    assert status == 303 and headers["Location"] == "/join?class=ACDEFGHJ&lang=zh"
    status, _, body = call(port, "GET", "/join?class=0OI1L&lang=zh")
    assert status == 200 and ZH("class.bad_code") in body.decode() and 'name="class"' in body.decode()
    status, _, body = call(port, "GET", "/join", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert '<html lang="zh-Hans">' in body.decode() and EN("join.code") not in body.decode()



# --- a school behind one address, and guessing --------------------------------------------------------------


def test_two_hundred_phones_behind_one_address_join_follow_answer_and_see_the_reveal(cluster, a_class):
    """A whole class from one school NAT address, on both processes, with the default settings: every phone
    opens the page, takes a seat, holds its push stream, answers and reads the reveal; nothing is refused."""
    store, ports = cluster
    code, _ = a_class
    school = _computer[0]
    most = POLICY["STUDENTS_PER_CLASS"]

    async def lesson() -> list[Phone]:
        phones = [Phone(ports[n % 2], code, school) for n in range(most)]
        joined = await asyncio.gather(*(phone.open() for phone in phones))
        assert [answer.status for answer in joined] == [200] * most
        for phone in phones:
            phone.follow()
        await asyncio.gather(*(phone.until(lambda s: s is not None) for phone in phones))
        asked = store.update(code, lambda c: ask(c, 1))
        await asyncio.gather(*(phone.until(lambda s: s["asked"] == asked.asked) for phone in phones))
        choices = QUESTIONS[1].choices
        said = await asyncio.gather(*(phone.answer(choices[n % len(choices)]) for n, phone in enumerate(phones)))
        assert [answer.status for answer in said] == [200] * most
        shown = store.update(code, reveal)
        await asyncio.gather(*(phone.until(lambda s: s["version"] == shown.version) for phone in phones))
        revealed = await asyncio.gather(*(phone.reveal() for phone in phones))
        assert {answer.status for answer in revealed} == {200}
        assert revealed[0].json()["description"].startswith(EN("class.describe", answered=most, students=most,
                                                                choices="").rstrip(". "))
        for phone in phones:
            await phone.close()
        return phones

    phones = in_own_loop(lesson())
    assert {status for phone in phones for status in phone.statuses} == {200}
    record = store.read(code)
    assert len(record.seats) == len(record.answers) == most  # each seat counted once, from one address


def wrong_code(code: str) -> str:
    """A well-formed code that is not ``code`` (and no live class in these tests)."""
    return "".join(c for c in reversed(CODE_ALPHABET) if c not in code)[:len(code)]


async def guesses(port: int, code: str, addresses: list[str]) -> list[int]:
    """One join of ``code`` per address in ``addresses``, one after the other: their statuses."""
    return [(await request(port, "POST", f"/api/class/{code}/join?lang=en", {}, forwarded=address)).status
            for address in addresses]


def test_wrong_codes_are_bounded_per_address_and_per_ipv6_64_and_then_no_code_is_looked_up(cluster, a_class):
    """Past an address's wrong codes a minute (counted in Redis, whichever process answered), the right code is
    refused too, in words; another address still joins. IPv6 addresses count by their /64."""
    _, (port, other) = cluster
    code, _ = a_class
    most = POLICY["WRONG_CODES_PER_MINUTE"]
    for guesser, same, elsewhere in (("198.51.100.7", "198.51.100.7", "198.51.100.8"),
                                     ("2001:db8:1:2::a", "2001:db8:1:2:ffff::b", "2001:db8:1:3::a")):
        tries = in_own_loop(guesses(port, wrong_code(code), [guesser] * (most // 2)))
        tries += in_own_loop(guesses(other, wrong_code(code), [same] * (most - most // 2)))
        assert tries == [404] * most
        refused = in_own_loop(request(port, "POST", f"/api/class/{code}/join?lang=zh", {}, forwarded=same))
        assert (refused.status, refused.json()["message"]) == (429, ZH("class.too_many_tries"))
        assert refused.headers.get("cache-control") == "no-store"
        assert in_own_loop(guesses(other, code, [elsewhere])) == [200]


def test_reads_naming_no_seat_count_as_guesses_and_past_them_the_computer_is_refused_without_a_read(cluster,
                                                                                                  a_class):
    """A script reading random seats (a flood, or a guess of a token) from one address: past its wrong tries a
    minute, on either process, its requests naming seats the process has not seen are refused at once, while a
    seated phone behind the same address goes on; another address is answered as before."""
    store, (port, other) = cluster
    code, _ = a_class
    flooder, elsewhere = "198.51.100.99", "198.51.100.98"
    seated = in_own_loop(request(port, "POST", f"/api/class/{code}/join?lang=en", {}, forwarded=flooder)).json()["me"]

    async def reads(where: int, count: int, me: str | None = None) -> list[int]:
        return [(await request(where, "GET", f"/api/class/{code}/state?me={me or new_student()}&lang=en",
                               forwarded=flooder)).status for _ in range(count)]

    most = POLICY["WRONG_CODES_PER_MINUTE"]
    assert in_own_loop(reads(port, most // 2)) + in_own_loop(reads(other, most - most // 2)) == [200] * most
    for where in (port, other):  # the next miss on either process is past the count in Redis: then none is read
        assert in_own_loop(reads(where, 2)) == [200, 429]
    refused = in_own_loop(request(other, "GET", f"/api/class/{code}/state?me={new_student()}&lang=zh",
                                  forwarded=flooder))
    assert (refused.status, refused.json()["message"], refused.headers["retry-after"]) == (
        429, ZH("class.too_many_tries"), "60")
    for where in (port, other):  # the computer's seated phone (a school's, behind the same NAT) goes on
        kept = in_own_loop(request(where, "GET", f"/api/class/{code}/state?me={seated}&lang=en", forwarded=flooder))
        assert kept.status == 200 and kept.json()["state"] is not None
    fine = in_own_loop(request(other, "GET", f"/api/class/{code}/state?me={new_student()}&lang=en",
                               forwarded=elsewhere))
    assert fine.status == 200 and fine.json()["state"] is None  # (another computer: read, and counted as its own)
    assert list(store.read(code).seats) == [seated]


def test_the_servers_wrong_codes_are_bounded_across_its_processes_whatever_the_addresses(cluster, a_class):
    """Thousands of addresses (an attacker's), each under its own bound, guessing on both processes: past the
    server's wrong codes a minute no code is looked up for a new seat, from any address; a seat's phone still
    reloads. (Last in the module: the server's bound then holds for the rest of its minute.)"""
    store, ports = cluster
    code, _ = a_class
    seated, _ = joined(ports[0], code)
    most, per_address = POLICY["SERVER_WRONG_CODES_PER_MINUTE"], POLICY["WRONG_CODES_PER_MINUTE"]
    sent, statuses = 0, []
    while 429 not in statuses and sent < 2 * most:  # (a minute's window may turn once meanwhile)
        addresses = [f"203.0.{sent // 250}.{sent % 250}"] * (per_address - 1)
        statuses = in_own_loop(guesses(ports[sent % 2], wrong_code(code), addresses))
        sent += len(addresses)
    assert 429 in statuses and sent <= 2 * most + per_address
    refused = in_own_loop(request(ports[1], "POST", f"/api/class/{code}/join?lang=en", {}, forwarded="192.0.2.1"))
    assert (refused.status, refused.json()["message"]) == (429, EN("class.server_too_many_tries"))
    assert joined(ports[1], code, seated)[0] == seated
    assert list(store.read(code).seats) == [seated]
