"""Everything the app serves goes gzipped to a browser that accepts it (``server/compression.py``, issue #48):
Streamlit's frontend files and the app's Plotly.js compressed once per process and sent from memory, the root
HTML per request, a plain request answered with the same bytes plain; an event stream, a 304, a 206 and a small
body pass untouched; a gzipped answer offers no byte ranges and a range is one of the plain file.

The real server is started as the README starts it; the middleware alone is driven over ASGI directly (with no
HTTP client library), so that a test can see each message as it is sent."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import http.client
import re
from pathlib import Path

import anyio
import pytest
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from server.compression import KEPT_HEADER, MINIMUM_BYTES, Compression
from testbed.local_server import streamlit_server
from testbed.protocol_client import ProtocolSession
from widgets.explorer import PLOTLY_URL

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = re.compile(r'(?:src|href)="\./(static/js/[^"]+\.js)"')  # the root HTML's scripts


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> int:
    """The app's port, served as ``python -m server`` serves it, its Explorer opened once over the WebSocket
    (through the middleware), which serves the app's Plotly.js from then on."""
    with streamlit_server("app.py", tmp_path_factory.mktemp("compression") / "server.log", ROOT) as (base, _):
        port = int(base.rsplit(":", 1)[1])

        async def opened() -> None:
            session = ProtocolSession(port, "lang=en")
            await session.connect(timeout=60)
            await session.close()

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # (a browser test's loop may run)
            pool.submit(asyncio.run, opened()).result()
        yield port


def get(port: int, path: str, accept: str = "gzip, deflate, br", **headers: str) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("localhost", port, timeout=60)
    try:
        connection.request("GET", path, headers={"Accept-Encoding": accept, **headers})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def scripts(port: int) -> list[str]:
    return ["/" + path for path in SCRIPT.findall(get(port, "/", accept="identity")[2].decode())]


def assert_gzipped_as_plain(port: int, path: str) -> dict[str, str]:
    """``path`` comes gzipped (its length, ``Vary``) and unpacks to exactly the bytes sent plain; its headers."""
    status, plain_headers, plain = get(port, path, accept="identity")
    assert status == 200 and "content-encoding" not in plain_headers
    status, headers, body = get(port, path)
    assert status == 200 and headers["content-encoding"] == "gzip" and "accept-encoding" in headers["vary"].lower()
    assert int(headers.get("content-length", len(body))) == len(body) < len(plain)  # (or chunked: the HTML)
    assert gzip.decompress(body) == plain
    return headers


def test_streamlits_script_comes_gzipped_with_its_cache_headers(served):
    """Its ETag weak (it names the file, not the gzipped bytes) and no byte ranges offered (they would be the
    file's); revalidated by that ETag, a 304."""
    path = scripts(served)[0]
    headers = assert_gzipped_as_plain(served, path)
    plain = get(served, path, accept="")[1]
    assert "immutable" in headers["cache-control"] and headers["etag"] == "W/" + plain["etag"]
    assert "accept-ranges" not in headers and plain["accept-ranges"] == "bytes"
    status, _, body = get(served, path, **{"If-None-Match": headers["etag"]})
    assert status == 304 and body == b""


def test_a_range_is_of_the_plain_file_and_a_cut_off_gzipped_download_is_not_resumed_with_one(served):
    """A browser that asks for a range gets those bytes of the plain file, never gzipped; one that holds the first
    bytes of a gzipped answer and asks for the rest as browsers resume (Range, If-Range: the ETag it holds) gets the
    whole file again, plain: before, it got the plain file's bytes from there on, appended them to gzipped ones and
    could not decode the module (the suite's "Failed to fetch dynamically imported module")."""
    path = scripts(served)[0]
    plain = get(served, path, accept="identity")[2]
    status, headers, body = get(served, path, Range="bytes=100-199")
    assert status == 206 and "content-encoding" not in headers and body == plain[100:200]
    cut_off = get(served, path)
    rest = {"Range": f"bytes={len(cut_off[2]) // 2}-", "If-Range": cut_off[1]["etag"]}
    status, headers, body = get(served, path, **rest)
    assert status == 200 and "content-encoding" not in headers and body == plain


def test_the_root_html_and_a_pages_html_come_gzipped(served):
    assert_gzipped_as_plain(served, "/")
    assert_gzipped_as_plain(served, "/walk")


def test_the_apps_plotly_js_comes_gzipped_from_memory(served):
    assert_gzipped_as_plain(served, PLOTLY_URL)
    assert get(served, PLOTLY_URL)[1][KEPT_HEADER.lower()] == "hit"


def test_a_script_is_compressed_on_its_first_request_and_sent_from_memory_after(served):
    path = next(path for path in reversed(scripts(served)[1:])  # one no other test asks for gzipped
                if len(get(served, path, accept="identity")[2]) >= MINIMUM_BYTES)
    first, second = get(served, path), get(served, path)
    assert first[1][KEPT_HEADER.lower()] == "miss" and second[1][KEPT_HEADER.lower()] == "hit"
    assert first[2] == second[2]


# The middleware alone, on a tiny app.

SCRIPT_BODY = b"export const figure = 'the action token keeps its size';\n" * 2000
EVENTS = ["data: one\n\n", "data: two\n\n"]


def tiny_app(first_event_sent: anyio.Event) -> Starlette:
    async def events():
        yield EVENTS[0]
        await first_event_sent.wait()  # the client has it: nothing held it back
        yield EVENTS[1]

    def static(status: int, body: bytes = SCRIPT_BODY, **headers: str):
        return lambda request: Response(body, status, media_type="text/javascript",
                                        headers={"ETag": '"v1"', "Cache-Control": "public, immutable", **headers})

    return Starlette(routes=[
        Route("/static/js/app.js", static(200)), Route("/static/js/other.js", static(200)),
        Route("/static/js/small.js", static(200, b"export const x = 1;\n")),
        Route("/static/js/unchanged.js", static(304, b"")),
        Route("/static/js/part.js", static(206, SCRIPT_BODY[:1000], **{"Content-Range": "bytes 0-999/114000"})),
        Route("/api/data", lambda request: Response(SCRIPT_BODY, media_type="application/json",
                                                    headers={"ETag": '"v2"', "Accept-Ranges": "bytes"})),
        Route("/api/events", lambda request: StreamingResponse(events(), media_type="text/event-stream"))])


def run_apart(function, *args):
    """``anyio.run(function, *args)`` in a thread of its own: a browser test before it in this worker leaves
    Playwright's event loop running in this one."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, function, *args).result()


async def call(app, path: str, accept: str = "gzip", on_send=None) -> tuple[int, dict[str, str], bytes]:
    """One GET of ``path`` through ``app`` over ASGI; ``on_send`` sees each message as it is sent."""
    messages, requested, disconnected = [], [], anyio.Event()

    async def receive():
        if requested:
            await disconnected.wait()  # never: the client stays
        requested.append(True)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        messages.append(message)
        if on_send:
            on_send(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
             "headers": [(b"host", b"test"), (b"accept-encoding", accept.encode())], "server": ("test", 80)}
    with anyio.fail_after(10):
        await app(scope, receive, send)
    start = messages[0]
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, b"".join(m.get("body", b"") for m in messages[1:])


def test_a_file_is_compressed_once_however_many_ask_at_once():
    middleware = Compression(tiny_app(anyio.Event()))

    async def run():
        answers = [await call(middleware, "/static/js/app.js", accept="identity")]

        async def student():
            answers.append(await call(middleware, "/static/js/app.js"))

        async with anyio.create_task_group() as group:
            for _ in range(40):
                group.start_soon(student)
        return answers

    plain, *gzipped = run_apart(run)
    assert plain[1].get("content-encoding") is None and plain[2] == SCRIPT_BODY
    assert len(gzipped) == 40 and middleware.compressions == 1
    for status, headers, body in gzipped:
        assert status == 200 and headers["content-encoding"] == "gzip" and gzip.decompress(body) == SCRIPT_BODY
        assert headers["content-length"] == str(len(body)) and headers["vary"] == "Accept-Encoding"
        assert headers["etag"] == 'W/"v1"' and headers["cache-control"] == "public, immutable"
    assert sorted(headers[KEPT_HEADER.lower()] for _, headers, _ in gzipped) == ["hit"] * 39 + ["miss"]


def test_the_least_recently_used_file_is_let_go_past_the_bound():
    room_for_one = len(gzip.compress(SCRIPT_BODY, mtime=0)) * 3 // 2
    middleware = Compression(tiny_app(anyio.Event()), kept_bytes=room_for_one)

    async def run():
        for path in ("/static/js/app.js", "/static/js/other.js", "/static/js/app.js"):
            await call(middleware, path)

    run_apart(run)
    assert middleware.compressions == 3 and list(middleware.kept) == ["/static/js/app.js"]


@pytest.mark.parametrize(("path", "status"), [("/static/js/unchanged.js", 304), ("/static/js/part.js", 206),
                                              ("/static/js/small.js", 200)])
def test_a_304_a_206_and_a_small_body_pass_untouched(path, status):
    middleware = Compression(tiny_app(anyio.Event()))
    answer_status, headers, body = run_apart(call, middleware, path)
    assert answer_status == status and "content-encoding" not in headers and middleware.compressions == 0
    assert body == {304: b"", 206: SCRIPT_BODY[:1000], 200: b"export const x = 1;\n"}[status]


def test_a_per_request_response_is_gzipped_and_not_kept():
    middleware = Compression(tiny_app(anyio.Event()))
    status, headers, body = run_apart(call, middleware, "/api/data")
    assert headers["content-encoding"] == "gzip" and gzip.decompress(body) == SCRIPT_BODY
    assert headers["etag"] == 'W/"v2"' and "accept-ranges" not in headers  # the file's, not these bytes
    assert middleware.compressions == 0 and not middleware.kept


def test_an_event_stream_is_sent_as_it_comes_and_untouched():
    """Its second event is made only once the first was sent: a middleware holding the body back would wait
    forever (and fail the test's deadline)."""
    first_event_sent = anyio.Event()
    middleware = Compression(tiny_app(first_event_sent))

    def on_send(message):
        if message["type"] == "http.response.body" and message.get("body") == EVENTS[0].encode():
            first_event_sent.set()

    status, headers, body = run_apart(lambda: call(middleware, "/api/events", on_send=on_send))
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert "content-encoding" not in headers and body == "".join(EVENTS).encode()
