"""Everything the app serves, gzipped for a browser that accepts it; the files that never change under
their URL compressed once per process (issue #48).

Streamlit 1.67 serves its frontend (``/static/...``, the root HTML) uncompressed on purpose: Starlette's
GZipMiddleware compresses afresh on every request, so a class's 40 first loads would cost 40 compressions
of megabytes. Here Streamlit's content-hashed ``/static/`` files, the bidi components' files (the app's
Plotly.js) and a live class's files (``server.class_files``: 200 phones asking at one "show me" for the same
bundle) are compressed once and the bytes kept in memory (the least recently used let go past
``KEPT_BYTES``); every other response goes through Starlette's GZipMiddleware, which leaves alone what
Streamlit already compressed, small bodies and ``text/event-stream`` (sent as it comes).
"""

from __future__ import annotations

import gzip
from collections import OrderedDict, defaultdict

import anyio
import anyio.to_thread
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.gzip import DEFAULT_EXCLUDED_CONTENT_TYPES, GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .class_files import ROUTE as CLASS_FILES

# Path prefixes whose files never change in a process: Streamlit's, the bidi components' and a live class's (their
# path carries the code's version).
UNCHANGING = ("/static/", "/_stcore/bidi-components/", CLASS_FILES)
KEPT_BYTES = 32 * 1024 * 1024  # the compressed files kept (all of Streamlit's frontend is about 7 MB)
MINIMUM_BYTES = 500  # smaller bodies go as they are (GZipMiddleware's default)
KEPT_HEADER = "X-Gzip-Kept"  # "hit": sent from the kept bytes, "miss": compressed for this request and kept


def as_gzipped(headers: MutableHeaders) -> None:
    """The headers of a body sent gzipped: its ETag weak, since it names the file, not these bytes, and no byte
    ranges, which would be the file's. (Sent as they were, a browser resumed a cut-off gzipped download with a range
    of the plain file and could not decode the result: "Failed to fetch dynamically imported module".)"""
    if (etag := headers.get("etag")) and not etag.startswith("W/"):
        headers["ETag"] = "W/" + etag
    if "accept-ranges" in headers:
        del headers["accept-ranges"]


def compressible(headers: Headers) -> bool:
    """Not already encoded, and of a type GZipMiddleware compresses (not a font, an image or a stream)."""
    media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
    excluded = {media_type, media_type.partition("/")[0] + "/*"} & set(DEFAULT_EXCLUDED_CONTENT_TYPES)
    return "content-encoding" not in headers and not excluded


class Compression:
    """ASGI middleware: the files under ``UNCHANGING`` gzipped from memory, the rest by GZipMiddleware."""

    def __init__(self, app: ASGIApp, kept_bytes: int = KEPT_BYTES) -> None:
        self.app = app
        self.per_request = GZipMiddleware(app, minimum_size=MINIMUM_BYTES)
        self.kept: OrderedDict[str, bytes] = OrderedDict()  # path -> its gzipped body, least recently used first
        self.kept_bytes = kept_bytes
        self.compressions = 0  # of files kept: one per file while it stays kept
        self.compressing: defaultdict[str, anyio.Lock] = defaultdict(anyio.Lock)  # one compression per path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Headers(scope=scope)
        # Asked for plain: so that Streamlit's own middleware does not compress the bidi files on every request, and
        # so that a range is answered as a range of the plain file, which is what it counts.
        plain = [(name, value) for name, value in scope["headers"] if name != b"accept-encoding"]
        if "range" in request:
            await self.app({**scope, "headers": plain}, receive, send)
            return
        if scope["method"] != "GET" or not scope["path"].startswith(UNCHANGING) \
                or "gzip" not in request.get("accept-encoding", ""):
            await self.per_request(scope, receive, send_as_gzipped(send))
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def send_gzipped(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                passed = message["status"] != 200 or not compressible(Headers(raw=message.get("headers", [])))
                start = {} if passed else message  # held until the body is whole
                if passed:
                    await send(message)
            elif not start or message["type"] != "http.response.body":
                await send(message)
            elif message.get("more_body", False):
                chunks.append(message.get("body", b""))
            else:
                body = b"".join([*chunks, message.get("body", b"")])
                if len(body) >= MINIMUM_BYTES:
                    body, hit = await self.gzipped(scope["path"], body)
                    headers = MutableHeaders(raw=list(start.get("headers", [])))
                    headers.update({"Content-Encoding": "gzip", "Content-Length": str(len(body)),
                                    KEPT_HEADER: "hit" if hit else "miss"})
                    headers.add_vary_header("Accept-Encoding")
                    as_gzipped(headers)
                    start["headers"] = headers.raw
                await send(start)
                await send({"type": "http.response.body", "body": body})

        await self.app({**scope, "headers": plain}, receive, send_gzipped)

    async def gzipped(self, path: str, body: bytes) -> tuple[bytes, bool]:
        """``path``'s body gzipped, and whether it was kept already; compressed in a thread (a 4.7 MB
        Plotly.js takes a second at level 9), once however many requests wait for it."""
        async with self.compressing[path]:
            if (kept := self.kept.get(path)) is not None:
                self.kept.move_to_end(path)
                return kept, True
            compressed = await anyio.to_thread.run_sync(lambda: gzip.compress(body, compresslevel=9, mtime=0))
            self.compressions += 1
            self.keep(path, compressed)
            return compressed, False

    def keep(self, path: str, compressed: bytes) -> None:
        """Keep ``compressed`` under ``path``, letting the least recently used go past ``kept_bytes``."""
        if len(compressed) > self.kept_bytes:
            return
        self.kept[path] = compressed
        while sum(map(len, self.kept.values())) > self.kept_bytes:
            self.kept.popitem(last=False)


def send_as_gzipped(send: Send) -> Send:
    """``send``, with the headers of a response that goes out gzipped (by GZipMiddleware, or Streamlit) made right."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(raw=list(message.get("headers", [])))
            if "gzip" in headers.get("content-encoding", ""):
                as_gzipped(headers)
                message = {**message, "headers": headers.raw}
        await send(message)

    return sending
