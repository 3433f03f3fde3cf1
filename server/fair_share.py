"""Each session's fair share of a classroom server (issue #15, rerun floods).

A browser drops its superseded reruns itself (``runner.fastReruns``), but a script can send
thousands a second, and Streamlit 1.67 starts a script run for every one: ten such sessions kept
another student's toggle waiting for over a minute. Two bounds (their numbers in ``server.policy``),
installed by ``python -m server``:

* **reruns**: a session starts up to ``RERUN_BURST`` runs at once and ``RERUNS_PER_SECOND`` after
  that. Past its share, its request waits, a newer one replaces it (so the last request of a burst
  always runs: coalesced, never dropped), and the sessions waiting share ``SHARED_RERUNS_PER_SECOND``
  between them, however many they are; a session that waited earns its share again only by asking
  for less;
* **messages**: the server reads up to ``MESSAGE_BURST`` WebSocket messages of one connection at
  once and ``MESSAGES_PER_SECOND`` after that; the rest wait in the socket
  (nothing is dropped), so a flood costs the server no work until it is read (``InboundLimit``,
  a middleware of the app, ``server.asgi``).

A person clicking at a normal pace stays within both; a script's flood is slowed to them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from .policy import POLICY

GATE = "_blockstab_rerun_gate"  # the attribute each AppSession keeps its gate in

_LOGGER = logging.getLogger(__name__)


@dataclass
class TokenBucket:
    """``burst`` events at once, then ``rate`` a second."""

    rate: float
    burst: float
    tokens: float | None = None  # None: full
    at: float = 0.0

    def wait(self, now: float) -> float:
        """0 if an event may happen at ``now`` (it is counted), else the seconds until one may."""
        earned = self.burst if self.tokens is None else self.tokens + (now - self.at) * self.rate
        self.tokens, self.at = min(self.burst, earned), now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def drain(self, now: float) -> None:
        """Empty at ``now``: the time spent waiting earns nothing."""
        self.tokens, self.at = 0.0, now


@dataclass
class Lane:
    """Where requests past their session's share wait: together they start ``rate`` runs a second."""

    rate: float
    waiting: int = 0  # sessions with a request waiting


class RerunGate:
    """One session's rerun requests: ``start(state)`` at once while its bucket allows; past that,
    the newest request waits its turn in the lane (``call_later``), replacing any request waiting."""

    def __init__(self, bucket: TokenBucket, lane: Lane, start: Callable, call_later: Callable,
                 clock: Callable[[], float]):
        self.bucket, self.lane, self.start, self.call_later, self.clock = bucket, lane, start, call_later, clock
        self.waiting = False
        self.held = None

    def request(self, state) -> None:
        if self.waiting:
            self.held = state
            return
        if not self.bucket.wait(self.clock()):
            self.start(state)
            return
        self.waiting, self.held = True, state
        self.lane.waiting += 1
        self.call_later(self.lane.waiting / self.lane.rate, self._release)

    def _release(self) -> None:
        state, self.waiting, self.held = self.held, False, None
        self.lane.waiting -= 1
        self.bucket.drain(self.clock())
        self.start(state)


class InboundLimit:
    """ASGI middleware: a WebSocket's messages are read at most ``rate`` a second after ``burst``."""

    def __init__(self, app, rate: float = POLICY["MESSAGES_PER_SECOND"], burst: float = POLICY["MESSAGE_BURST"]):
        self.app, self.rate, self.burst = app, rate, burst

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)
        bucket, loop = TokenBucket(self.rate, self.burst), asyncio.get_running_loop()

        async def paced():
            while delay := bucket.wait(loop.time()):
                await asyncio.sleep(delay)
            return await receive()

        return await self.app(scope, paced, send)


def gate_of(session, rerun: Callable, lane: Lane) -> RerunGate:
    """The session's gate, made on its first request (on the server's event loop)."""
    gate = vars(session).get(GATE)
    if gate is None:
        loop = asyncio.get_running_loop()

        def start(state) -> None:
            try:
                rerun(session, state)
            except Exception as error:  # what Streamlit's handle_backmsg does with a failed request
                _LOGGER.exception("Error processing a rerun request")
                session.handle_backmsg_exception(error)

        bucket = TokenBucket(POLICY["RERUNS_PER_SECOND"], POLICY["RERUN_BURST"])
        gate = RerunGate(bucket, lane, start, loop.call_later, loop.time)
        setattr(session, GATE, gate)
    return gate


def install() -> None:
    """Put the rerun bound into Streamlit's sessions; call before the server starts
    (``tests/server/test_fair_share.py`` checks it served)."""
    from .streamlit_internals import hook_rerun_requests  # noqa: PLC0415 - the server's process only

    lane = Lane(POLICY["SHARED_RERUNS_PER_SECOND"])
    hook_rerun_requests(lambda rerun: lambda session, state=None: gate_of(session, rerun, lane).request(state))
