"""A class's phones as a script drives them (``ui/student/page.js``'s requests, and its event stream), over
asyncio, from a loopback address chosen per phone: many phones from one address as a school's NAT shows them,
or one script from many as an attacker's. A request may carry a forged ``X-Forwarded-For``: a server reached
on loopback takes it for the client's address (uvicorn's proxy rule), which is how a test names addresses it
cannot hold (IPv6 ones in one /64, thousands of others)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field

WAIT_S = 60.0


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


async def request(port: int, method: str, path: str, body: dict | None = None, source: str = "127.0.0.1",
                  forwarded: str | None = None, sent: dict[str, str] | None = None) -> Answer:
    """One request on a connection of its own (closed after it) from ``source``, with the headers ``sent`` besides."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        data = json.dumps(body).encode() if body is not None else b""
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
                f"Content-Length: {len(data)}", *(["Content-Type: application/json"] if body is not None else []),
                *([f"X-Forwarded-For: {forwarded}"] if forwarded else []),
                *(f"{name}: {value}" for name, value in (sent or {}).items())]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        status, headers = await asyncio.wait_for(read_head(reader), WAIT_S)
        return Answer(status, headers, await asyncio.wait_for(read_body(reader, headers), WAIT_S))
    finally:
        writer.close()


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status = int((await reader.readline()).split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while size := int((await reader.readline()).strip(), 16):
            body += await reader.readexactly(size + 2)
            body = body[:-2]
        return body
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    return await reader.read()


@dataclass
class Phone:
    """One student's page: it opens the join link, takes a seat, follows the class's pushed states, answers."""

    port: int
    code: str
    source: str = "127.0.0.1"
    forwarded: str | None = None
    me: str | None = None
    states: list[dict | None] = field(default_factory=list)  # each state pushed, in order
    arrived: list[float] = field(default_factory=list)  # when each of ``states`` was read (time.time())
    statuses: list[int] = field(default_factory=list)  # every request's status, the stream's included
    _stream: asyncio.Task | None = None
    _moved: asyncio.Event = field(default_factory=asyncio.Event)

    async def call(self, method: str, path: str, body: dict | None = None) -> Answer:
        answer = await request(self.port, method, path, body, self.source, self.forwarded)
        self.statuses.append(answer.status)
        return answer

    async def open(self) -> Answer:
        """The page (``GET /join``), then its join: the join's answer."""
        await self.call("GET", f"/join?class={self.code}&lang=en")
        answer = await self.call("POST", f"/api/class/{self.code}/join?lang=en", {"me": self.me} if self.me else {})
        if answer.status == 200:
            self.me = answer.json()["me"]
        return answer

    def follow(self) -> None:
        """Hold the class's event stream open (until :meth:`close`), each state kept."""
        self._stream = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(self.source, 0))
        try:
            path = f"/api/class/{self.code}/events?me={self.me}"
            writer.write((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream\r\n"
                          + (f"X-Forwarded-For: {self.forwarded}\r\n" if self.forwarded else "") + "\r\n").encode())
            status, _ = await read_head(reader)
            self.statuses.append(status)
            while line := await reader.readline():
                if line.startswith(b"data:"):
                    self.arrived.append(time.time())
                    self.states.append(json.loads(line[5:]))
                    self._moved.set()
        finally:
            writer.close()

    async def until(self, shows, seconds: float = WAIT_S) -> dict | None:
        """The first pushed state for which ``shows(state)`` holds (waiting for it)."""
        async with asyncio.timeout(seconds):
            while not (self.states and shows(self.states[-1])):
                self._moved.clear()
                await self._moved.wait()
        return self.states[-1]

    async def answer(self, choice: str) -> Answer:
        asked = self.states[-1]["asked"]
        return await self.call("POST", f"/api/class/{self.code}/answer?lang=en",
                               {"me": self.me, "asked": asked, "choice": choice})

    async def reveal(self) -> Answer:
        return await self.call("GET", f"/api/class/{self.code}/reveal?me={self.me}&lang=en")

    async def close(self) -> None:
        if self._stream is not None:
            self._stream.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await self._stream
