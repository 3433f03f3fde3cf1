"""Per-address limits on the app's own HTTP routes (issue #48, ``server/address_limits.py``): a bucket of
requests per address and a bound on its open event streams, refused with a translated 429; the address
read by one rule (``server/client_address.py``). On a tiny Starlette app with a clock the test moves, then
on a real server: one address flooding is refused while another computer is still answered."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route

from server.address_limits import TOO_MANY_REQUESTS, TOO_MANY_STREAMS, AddressLimits, language
from server.class_routes import GUESS_SECONDS, Misses
from server.client_address import UNKNOWN, Trust, pseudonym
from server.routes import CLASS_VERSION
from support import in_own_loop
from testbed.local_server import streamlit_server
from ui.live_class import join, start
from ui.text import Text

ROOT = Path(__file__).resolve().parents[2]
FOREVER = 1e9  # a rate no test waits out
NOTHING_TRUSTED = Trust()


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def page(_request):
    return PlainTextResponse("ok")


async def events(request):
    """A class's event stream: ``END`` ends after one event, ``FAIL`` raises after it, any other code stays
    open until the client leaves or the server cancels it."""
    code = request.path_params["code"]

    async def stream():
        yield b"data: hello\n\n"
        if code == "FAIL":
            raise RuntimeError("the route failed")
        if code != "END":
            await asyncio.Event().wait()

    return StreamingResponse(stream(), media_type="text/event-stream")


TINY = Starlette(routes=[Route("/join", page), Route("/api/class/{code}/version", page),
                         Route("/api/class/{code}/events", events), Route("/{other:path}", page)])


def limits(rate=FOREVER, burst=1000, streams=1000, trust=NOTHING_TRUSTED, most=1000, clock=None) -> AddressLimits:
    return AddressLimits(TINY, rate=rate, burst=burst, streams=streams, trust=trust, most=most,
                         clock=clock or Clock())


async def call(app, path: str, client: str | None = "10.0.0.1", headers=(), query: bytes = b"",
               gone: asyncio.Event | None = None, streaming: asyncio.Event | None = None,
               ) -> tuple[int, dict[str, str], bytes]:
    """One GET through ``app`` as a server hands it over: ``(status, headers, body)``. The client leaves
    (``http.disconnect``) once ``gone`` is set, else never; ``streaming`` is set once a body's first part came."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query,
             "headers": [(name.lower().encode(), value.encode()) for name, value in headers],
             "client": (client, 50000) if client else None, "server": ("testserver", 80)}
    asked = False

    async def receive():
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await (gone or asyncio.Event()).wait()
        return {"type": "http.disconnect"}

    sent = []

    async def send(message):
        sent.append(message)
        if streaming and message["type"] == "http.response.body":
            streaming.set()

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def statuses(app, path: str, count: int, **kwargs) -> list[int]:
    async def run():
        return [(await call(app, path, **kwargs))[0] for _ in range(count)]

    return in_own_loop(run())


def test_a_bucket_lets_its_burst_through_then_refills_at_its_rate():
    clock = Clock()
    app = limits(rate=2.0, burst=3, clock=clock)
    path = CLASS_VERSION.format(code="ABCDEF")
    assert statuses(app, path, 4) == [200, 200, 200, 429]
    clock.now += 0.5  # one request's worth
    assert statuses(app, path, 2) == [200, 429]
    clock.now += 60  # full again, never past the burst
    assert statuses(app, path, 4) == [200, 200, 200, 429]


def test_each_address_has_its_own_bucket():
    app = limits(burst=2, rate=0.001)
    assert statuses(app, "/join", 3, client="10.0.0.1") == [200, 200, 429]
    assert statuses(app, "/join", 1, client="10.0.0.2") == [200]


def test_an_ipv6_computer_is_its_64_however_many_addresses_it_takes_from_it():
    app = limits(burst=2, rate=0.001)
    assert statuses(app, "/join", 2, client="2001:db8:7:7::1") == [200, 200]
    assert statuses(app, "/join", 1, client="2001:db8:7:7:abcd:ef01:2345:6789") == [429]
    assert statuses(app, "/join", 1, client="2001:db8:7:8::1") == [200]  # another /64: another computer


@pytest.mark.parametrize(("query", "accept", "lang"), [
    (b"lang=zh", "en-US,en;q=0.9", "zh"),
    (b"lang=en", "zh-CN,zh;q=0.9", "en"),
    (b"lang=fr&me=x", "fr-FR, zh-Hans;q=0.8, en;q=0.5", "zh"),
    (b"", "de-DE, en-GB;q=0.7", "en"),
    (b"", "", "en"),
])
def test_a_refusal_is_a_429_with_retry_after_and_its_message_in_the_requests_language(query, accept, lang):
    app = limits(rate=0.25, burst=1)
    in_own_loop(call(app, "/api/class/ABCDEF/version"))
    status, headers, body = in_own_loop(call(app, "/api/class/ABCDEF/version", query=query,
                                             headers=[("Accept-Language", accept)]))
    assert status == 429 and headers["retry-after"] == "4" and headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": TOO_MANY_REQUESTS, "message": Text(lang)(TOO_MANY_REQUESTS)}


def test_both_refusals_are_in_both_catalogs_and_differ():
    for key in (TOO_MANY_REQUESTS, TOO_MANY_STREAMS):
        assert Text("en")(key) != Text("zh")(key)
    assert language(b"lang=zh", "") == "zh" and language(b"lang=xx", "ZH-tw") == "zh"


def test_a_retry_after_is_whole_seconds_and_at_least_one():
    app = limits(rate=20.0, burst=1)
    in_own_loop(call(app, "/join"))
    status, headers, _ = in_own_loop(call(app, "/join"))
    assert status == 429 and headers["retry-after"] == "1"  # 0.05 s to wait


@pytest.mark.parametrize("path", ["/", "/class", "/joined", "/join/x", "/study/x", "/apiary", "/_stcore/health",
                                  "/static/app.js", "/_stcore/stream", "/component/blockstab.follow/index.js"])
def test_paths_outside_join_study_and_api_are_never_limited(path):
    app = limits(rate=0.001, burst=1, streams=0)
    assert statuses(app, path, 20) == [200] * 20


@pytest.mark.parametrize("path", ["/join", "/study", "/api/bundles/x-index.js", "/api/class-files/v1/page.js",
                                  "/api/class/ABCDEF/state"])
def test_the_apps_own_routes_are_limited(path):
    assert statuses(limits(rate=0.001, burst=1), path, 2) == [200, 429]


def test_a_websocket_or_lifespan_passes_untouched():
    seen = []

    async def inner(scope, receive, send):
        seen.append(scope["type"])

    app = AddressLimits(inner, rate=0.001, burst=0, streams=0, trust=NOTHING_TRUSTED, clock=Clock())
    for kind in ("websocket", "lifespan"):
        in_own_loop(app({"type": kind, "path": "/api/x", "headers": []}, None, None))
    assert seen == ["websocket", "lifespan"]


STREAM = "/api/class/{}/events"


def test_a_streams_place_is_released_when_it_ends():
    app = limits(streams=1)

    async def run():
        assert (await call(app, STREAM.format("END")))[2] == b"data: hello\n\n"
        assert (await call(app, STREAM.format("END")))[0] == 200
        return app.open_streams

    assert in_own_loop(run()) == {}


def test_a_streams_place_is_held_while_it_is_open_and_released_when_the_client_leaves():
    app = limits(streams=2)

    async def run():
        gone, streaming = asyncio.Event(), [asyncio.Event(), asyncio.Event()]
        held = [asyncio.create_task(call(app, STREAM.format("HOLD"), gone=gone, streaming=s)) for s in streaming]
        await asyncio.gather(*(s.wait() for s in streaming))
        third = await call(app, STREAM.format("HOLD"), query=b"lang=zh")
        other = asyncio.create_task(call(app, STREAM.format("END"), client="10.0.0.2"))
        counted = dict(app.open_streams)
        gone.set()
        await asyncio.gather(*held)
        return third, counted, await other, dict(app.open_streams)

    third, counted, other, after = in_own_loop(run())
    assert counted == {pseudonym("10.0.0.1"): 2}  # (the address's keyed hash: no address is kept)
    status, headers, body = third
    assert status == 429 and int(headers["retry-after"]) >= 1
    assert json.loads(body) == {"error": TOO_MANY_STREAMS, "message": Text("zh")(TOO_MANY_STREAMS)}
    assert other[0] == 200  # another computer's stream
    assert after == {}
    assert statuses(app, STREAM.format("END"), 3) == [200, 200, 200]


def test_a_streams_place_is_released_when_its_route_fails_or_the_server_cancels_it():
    app = limits(streams=1)

    async def run():
        with pytest.raises(RuntimeError, match="the route failed"):
            await call(app, STREAM.format("FAIL"))
        failed = dict(app.open_streams)
        streaming = asyncio.Event()
        held = asyncio.create_task(call(app, STREAM.format("HOLD"), streaming=streaming))
        await streaming.wait()
        open_ = dict(app.open_streams)
        held.cancel()
        with pytest.raises(asyncio.CancelledError):
            await held
        return failed, open_, dict(app.open_streams)

    assert in_own_loop(run()) == ({}, {pseudonym("10.0.0.1"): 1}, {})
    assert statuses(app, STREAM.format("END"), 1) == [200]


def test_forged_addresses_cost_a_bounded_table_and_idle_buckets_are_dropped():
    """A script behind the proxy naming a new address in each request (or coming from many): the table stays
    within its bound, and a bucket idle for as long as it takes to refill is dropped (it was full)."""
    clock = Clock()
    app = limits(rate=10.0, burst=20, trust=Trust(hops=1), most=500, clock=clock)

    async def run():
        for n in range(5000):
            await call(app, "/join", client="127.0.0.1", headers=[("X-Forwarded-For", f"10.{n // 256}.{n % 256}.1")])
            clock.now += 0.0001
            assert len(app.requests.buckets) <= 500

    in_own_loop(run())
    assert len(app.requests.buckets) == 500
    clock.now += 2.0  # 20 tokens at 10 a second: all of them full again
    assert statuses(app, "/join", 1, client="10.9.9.9") == [200] and list(app.requests.buckets) == [
        pseudonym("10.9.9.9")]


def test_a_bucket_in_use_is_kept_while_others_come_and_go():
    clock = Clock()
    app = limits(rate=1.0, burst=2, most=10_000, clock=clock)
    assert statuses(app, "/join", 2, client="10.0.0.1") == [200, 200]

    async def others():
        for n in range(1000):
            clock.now += 0.0015
            await call(app, "/join", client=f"10.1.{n // 256}.{n % 256}")

    in_own_loop(others())
    assert statuses(app, "/join", 1, client="10.0.0.1") == [200]  # 1.5 tokens earned in the 1.5 s that passed
    assert statuses(app, "/join", 1, client="10.0.0.1") == [429]


def test_behind_the_proxy_the_last_entry_of_the_last_header_is_the_address():
    """A client's own X-Forwarded-For headers (any number, any entries) come before the proxy's: one bucket."""
    app = limits(rate=0.001, burst=2, trust=Trust(hops=1))
    forged = [[("X-Forwarded-For", f"1.2.3.{n}, 5.6.7.{n}"), ("X-Forwarded-For", "192.168.1.7")] for n in range(3)]
    got = [in_own_loop(call(app, "/join", client="127.0.0.1", headers=h))[0] for h in forged]
    assert got == [200, 200, 429]
    assert statuses(app, "/join", 1, client="127.0.0.1", headers=[("X-Forwarded-For", "192.168.1.8")]) == [200]


def test_without_the_proxy_x_forwarded_for_is_ignored():
    app = limits(rate=0.001, burst=2)
    got = [in_own_loop(call(app, "/join", headers=[("X-Forwarded-For", f"1.2.3.{n}")]))[0] for n in range(3)]
    assert got == [200, 200, 429]


def test_a_request_without_a_client_is_counted_as_unknown():
    app = limits(rate=0.001, burst=1)
    assert statuses(app, "/join", 2, client=None) == [200, 429]
    assert list(app.requests.buckets) == [pseudonym(UNKNOWN)]


# --- a real server ---------------------------------------------------------------------------------------

BURST = 5


SETTINGS = ("BLOCKSTAB_BEHIND_PROXY", "BLOCKSTAB_TRUSTED_HOPS", "BLOCKSTAB_CLIENT_ADDRESS_HEADER")
PATH = CLASS_VERSION.format(code="ABCDEF") + "?me=" + "a" * 16


@contextlib.contextmanager
def limited_server(log: Path, **settings: str):
    """The app as ``python -m server`` serves it, with a small burst and a rate no test waits out, trusting
    what ``settings`` name (and nothing else); yields its port."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    env |= {"BLOCKSTAB_REQUEST_BURST": str(BURST), "BLOCKSTAB_REQUESTS_PER_SECOND": "0.05", **settings}
    with streamlit_server("app.py", log, ROOT, env=env) as (base, _):
        yield int(base.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with limited_server(tmp_path_factory.mktemp("limits") / "server.log") as port:
        yield port


@pytest.fixture(scope="module")
def served_behind_a_platform(tmp_path_factory):
    """Behind a platform's proxy that sets Fly-Client-IP."""
    with limited_server(tmp_path_factory.mktemp("platform") / "server.log",
                        BLOCKSTAB_CLIENT_ADDRESS_HEADER="Fly-Client-IP") as port:
        yield port


@pytest.fixture(scope="module")
def served_behind_two_proxies(tmp_path_factory):
    """Behind two proxies that each append to X-Forwarded-For."""
    with limited_server(tmp_path_factory.mktemp("hops") / "server.log", BLOCKSTAB_TRUSTED_HOPS="2") as port:
        yield port


def get(connection: http.client.HTTPConnection, path: str, sent=()) -> tuple[int, dict[str, str], bytes]:
    """One GET on ``connection`` (kept alive) with the headers ``sent`` (pairs: a name may come twice)."""
    connection.putrequest("GET", path)
    for name, value in (("Accept-Language", "zh-CN,zh;q=0.9"), *sent):
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def test_one_computer_flooding_is_refused_while_another_is_answered(served):
    """The embedded server sees each socket's peer address: a client bound to 127.0.0.2 is another computer."""
    path = PATH
    flooder = http.client.HTTPConnection("127.0.0.1", served, timeout=30)  # one keep-alive connection
    other = http.client.HTTPConnection("127.0.0.1", served, timeout=30, source_address=("127.0.0.2", 0))
    try:
        flood = [get(flooder, path) for _ in range(3 * BURST)]
        answered = get(other, path)
        health = get(flooder, "/_stcore/health")
    finally:
        flooder.close()
        other.close()
    codes = [status for status, _, _ in flood]
    assert codes[:BURST] == [200] * BURST and codes[BURST:] == [429] * (2 * BURST), codes
    _, headers, body = flood[-1]
    assert int(headers["retry-after"]) >= 1
    assert json.loads(body) == {"error": TOO_MANY_REQUESTS, "message": Text("zh")(TOO_MANY_REQUESTS)}
    assert answered[0] == 200 and json.loads(answered[2])["version"] is None
    assert health[0] == 200  # Streamlit's own routes are not limited


def statuses_from(port: int, source: str, each_sent: list[list[tuple[str, str]]]) -> list[int]:
    """One request per list of headers in ``each_sent``, on one keep-alive connection from ``source`` (a
    loopback address other than 127.0.0.1: Uvicorn would take that one for a proxy's)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        return [get(connection, PATH, sent)[0] for sent in each_sent]
    finally:
        connection.close()


REFUSED_PAST_BURST = [200] * BURST + [429]


def test_on_its_own_the_server_believes_no_address_a_client_writes(served):
    """With nothing trusted, a client naming a new address in every header of every request is one bucket."""
    forged = [[("X-Forwarded-For", f"203.0.113.{n}"), ("Fly-Client-IP", f"198.51.100.{n}"),
               ("CF-Connecting-IP", f"192.0.2.{n}")] for n in range(BURST + 1)]
    assert statuses_from(served, "127.0.0.3", forged) == REFUSED_PAST_BURST


def test_behind_a_platform_its_header_is_the_address_and_nothing_else_a_client_writes(served_behind_a_platform):
    port = served_behind_a_platform
    one_student = [[("Fly-Client-IP", "203.0.113.7"), ("X-Forwarded-For", f"198.51.100.{n}")]
                   for n in range(BURST + 1)]
    assert statuses_from(port, "127.0.0.2", one_student) == REFUSED_PAST_BURST
    # Another student behind the same proxy (the same peer); a value of its own before the platform's is not read.
    assert statuses_from(port, "127.0.0.2", [[("Fly-Client-IP", "6.6.6.6"), ("Fly-Client-IP", "203.0.113.8")]]) == [200]
    assert statuses_from(port, "127.0.0.2", [[("Fly-Client-IP", "6.6.6.7"), ("Fly-Client-IP", "203.0.113.7")]]) == [429]
    garbled = [[("Fly-Client-IP", f"203.0.113.{n}, 6.6.6.6")] for n in range(BURST + 1)]  # not one address: the peer
    assert statuses_from(port, "127.0.0.3", garbled) == REFUSED_PAST_BURST


def test_behind_two_proxies_the_second_entry_from_the_right_is_the_address(served_behind_two_proxies):
    port = served_behind_two_proxies
    one_student = [[("X-Forwarded-For", f"6.6.6.{n}, 203.0.113.7"), ("X-Forwarded-For", "10.0.0.9")]
                   for n in range(BURST + 1)]
    assert statuses_from(port, "127.0.0.2", one_student) == REFUSED_PAST_BURST
    assert statuses_from(port, "127.0.0.2", [[("X-Forwarded-For", "6.6.6.6, 203.0.113.8, 10.0.0.9")]]) == [200]
    short = [[("X-Forwarded-For", f"203.0.113.{n}")] for n in range(BURST + 1)]  # one hop too few: the peer
    assert statuses_from(port, "127.0.0.3", short) == REFUSED_PAST_BURST


def test_a_bad_setting_stops_the_server_at_start_saying_which():
    env = {**os.environ, "BLOCKSTAB_TRUSTED_HOPS": "two"}
    started = subprocess.run([sys.executable, "-m", "server"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
    assert started.returncode == 1
    assert started.stderr.strip() == "BLOCKSTAB_TRUSTED_HOPS must be a whole number of proxies, 1 or more, not 'two'."


def test_a_computer_past_its_wrong_tries_is_refused_until_the_minute_is_out_and_the_table_is_bounded():
    clock = Clock()
    misses = Misses(most=3, clock=clock)
    misses.block("a")
    assert misses.refused("a") and not misses.refused("b")
    clock.now += GUESS_SECONDS - 0.1
    assert misses.refused("a")
    clock.now += 0.1
    assert not misses.refused("a") and "a" not in misses.until  # (its minute out: forgotten)
    for who in "bcde":
        misses.block(who)
    assert list(misses.until) == ["c", "d", "e"]  # (the longest blocked went first)


def test_a_blocked_computers_seen_seats_go_on_and_others_are_refused_unread():
    misses = Misses(most=2, clock=Clock())
    seated = start("ACDEFGHJ", "k" * 32, "en")
    seated = join(seated, "s" * 16, 0.0, 200)
    misses.seen(seated)
    assert not misses.refuses("a", "ACDEFGHJ", "t" * 16)  # (not blocked: read as any other)
    misses.block("a")
    assert misses.refuses("a", "ACDEFGHJ", "t" * 16) and not misses.refuses("a", "ACDEFGHJ", "s" * 16)
    assert misses.refuses("a", "KMNPRTWX", "s" * 16)  # (a seat of a class this process has not read)
    for code in ("KMNPRTWX", "XYXYXYXY"):
        misses.seen(start(code, "k" * 32, "en"))
    assert list(misses.seats) == ["KMNPRTWX", "XYXYXYXY"]  # (bounded: the oldest class went first)
