"""Per-address limits on BlockStab's own HTTP routes (issue #48): one computer cannot starve the class
through them (a script with 50 keep-alive connections read a class's version 1,065 times a second).

An ASGI middleware of the app (``server.asgi``) for the requests whose path is ``/join``, ``/study`` or starts with
``/api/`` (``server.routes``); Streamlit's own (its pages, its files, its WebSocket) pass untouched. Per client
address (``server.client_address``'s rule and :func:`~server.client_address.pseudonym`), with the limits of
``server.policy``, sized so that a class behind one school NAT address meets none of them:

* **requests**: ``REQUEST_BURST`` at once, then ``REQUESTS_PER_SECOND`` (a student's page fetches about ten
  files at once when it opens);
* **event streams** (``/api/class/<code>/events``, open while a student follows the class): at most
  ``STREAMS_PER_ADDRESS`` open at once, counted from the request until the route returns, however it ends
  (its end, the client gone, an error, the server cancelling it).

Past a bound the route is never reached: ``429 Too Many Requests``, a ``Retry-After`` and
``{"error": <catalog key>, "message": <its text>}`` in the request's language. All of it is in this process's
memory: each replica of a cluster counts on its own, behind HAProxy, which bounds each address's connections
in front of them (``deploy/haproxy.cfg``). A bucket untouched for as long as it takes to refill is full, so it
is dropped (a new one starts full: nothing is forgotten), and past :data:`MAX_ADDRESSES` the least recently
used go first: addresses cycled by a script cost a bounded table.
"""

from __future__ import annotations

import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from ui.text import LANGUAGES, Text

from .client_address import Trust, client, trusted
from .fair_share import TokenBucket
from .policy import POLICY

MAX_ADDRESSES = 10_000  # buckets kept at most (a few MB); past it, the least recently used is dropped
STREAM_RETRY_SECONDS = 10  # a stream's place frees when one of the address's pages closes: no time is known
TOO_MANY_REQUESTS = "limit.too_many_requests"
TOO_MANY_STREAMS = "limit.too_many_streams"


def is_own_route(path: str) -> bool:
    """Whether ``path`` is one of BlockStab's own routes."""
    return path in ("/join", "/study") or path.startswith("/api/")


def is_stream(path: str) -> bool:
    """Whether ``path`` is a class's event stream."""
    return path.startswith("/api/class/") and path.endswith("/events")


def language(query_string: bytes, accept_language: str) -> str:
    """A refusal's language: the ``lang`` query parameter if the app has it, else the first language of
    ``Accept-Language`` that it has (browsers list them most wanted first), else English."""
    asked = parse_qs(query_string.decode("latin-1")).get("lang", [""])[0]
    listed = (tag.split(";")[0].strip().split("-")[0].lower() for tag in accept_language.split(","))
    return next((lang for lang in (asked, *listed) if lang in LANGUAGES), "en")


class AddressBuckets:
    """A token bucket per address, least recently used first: a bucket untouched for ``burst / rate``
    seconds is full and dropped, and past ``most`` addresses the least recently used are dropped."""

    def __init__(self, rate: float, burst: float, most: int = MAX_ADDRESSES):
        self.rate, self.burst, self.most = rate, burst, most
        self.refill_seconds = burst / rate
        self.buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def wait(self, address: str, now: float) -> float:
        """0 if ``address`` may make a request at ``now`` (it is counted), else the seconds until it may."""
        buckets = self.buckets
        while buckets and next(iter(buckets.values())).at <= now - self.refill_seconds:
            buckets.popitem(last=False)
        bucket = buckets.pop(address, None) or TokenBucket(self.rate, self.burst)
        buckets[address] = bucket  # last: the most recently used
        if len(buckets) > self.most:
            buckets.popitem(last=False)
        return bucket.wait(now)


class AddressLimits:
    """ASGI middleware: the module's bounds on each address's requests and event streams."""

    def __init__(self, app, rate: float = POLICY["REQUESTS_PER_SECOND"], burst: float = POLICY["REQUEST_BURST"],
                 streams: int = POLICY["STREAMS_PER_ADDRESS"], trust: Trust | None = None, most: int = MAX_ADDRESSES,
                 clock: Callable[[], float] = time.monotonic):
        self.app, self.streams_per_address, self.clock = app, streams, clock
        self.trust = trusted() if trust is None else trust
        self.requests = AddressBuckets(rate, burst, most)
        self.open_streams: Counter[str] = Counter()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not is_own_route(scope["path"]):
            return await self.app(scope, receive, send)
        peer = (scope.get("client") or (None,))[0]
        address = client(peer, Headers(scope=scope).getlist, self.trust)
        if wait := self.requests.wait(address, self.clock()):
            return await refuse(scope, receive, send, TOO_MANY_REQUESTS, wait)
        if not is_stream(scope["path"]):
            return await self.app(scope, receive, send)
        if self.open_streams[address] >= self.streams_per_address:
            return await refuse(scope, receive, send, TOO_MANY_STREAMS, STREAM_RETRY_SECONDS)
        self.open_streams[address] += 1
        try:
            return await self.app(scope, receive, send)
        finally:
            self.open_streams[address] -= 1
            if not self.open_streams[address]:
                del self.open_streams[address]


async def refuse(scope, receive, send, key: str, retry_seconds: float) -> None:
    """``429`` with the refusal ``key`` and its text in the request's language."""
    accept = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"accept-language"), "")
    message = Text(language(scope.get("query_string", b""), accept))(key)
    headers = {"Retry-After": str(max(1, math.ceil(retry_seconds))), "Cache-Control": "no-store"}
    await JSONResponse({"error": key, "message": message}, 429, headers)(scope, receive, send)
