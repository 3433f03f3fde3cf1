"""Each session's fair share of the classroom server (issue #15, rerun floods): a session's reruns
past a burst wait and coalesce (the newest always runs), a connection's messages are read at a
bounded rate, and the served app has both (``server/fair_share.py``, installed by ``python -m server``)."""

import asyncio
import time
from pathlib import Path

from server.fair_share import InboundLimit, Lane, RerunGate, TokenBucket
from server.policy import POLICY
from support import in_own_loop
from testbed.local_server import streamlit_server
from testbed.protocol_client import ProtocolSession

ROOT = Path(__file__).resolve().parents[2]


FLOOD = 300  # rerun requests one session sends without waiting


def test_a_bucket_lets_a_burst_through_then_its_rate():
    bucket = TokenBucket(rate=4.0, burst=3)
    assert [bucket.wait(10.0) for _ in range(5)] == [0.0, 0.0, 0.0, 0.25, 0.25]  # the last two: not yet
    assert bucket.wait(10.25) == 0.0
    assert bucket.wait(20.0) == 0.0 and bucket.tokens == 2  # refilled, never past the burst
    bucket.drain(20.0)
    assert bucket.wait(20.1) > 0


class FakeLoop:
    def __init__(self):
        self.now, self.timers = 0.0, []

    def call_later(self, delay, callback):
        self.timers.append((self.now + delay, callback))

    def advance(self, seconds):
        self.now += seconds
        due = sorted((t for t in self.timers if t[0] <= self.now), key=lambda t: t[0])
        self.timers = [t for t in self.timers if t[0] > self.now]
        for _, callback in due:
            callback()


def gates(count: int, loop: FakeLoop, started: list, lane_rate: float = 4.0) -> list[RerunGate]:
    lane = Lane(lane_rate)
    return [RerunGate(TokenBucket(4.0, 3), lane, lambda state, n=n: started.append((n, state)), loop.call_later,
                      lambda: loop.now) for n in range(count)]


def test_a_flood_of_reruns_runs_a_burst_then_only_the_newest_in_its_turn():
    loop, started = FakeLoop(), []
    (gate,) = gates(1, loop, started)
    for n in range(100):
        gate.request(n)
    assert [s for _, s in started] == [0, 1, 2]  # the burst; request 3 waits and 4..99 replace it
    loop.advance(0.25)
    assert [s for _, s in started] == [0, 1, 2, 99]
    for n in range(100, 110):
        gate.request(n)
        loop.advance(0.01)
    loop.advance(1.0)
    assert [s for _, s in started] == [0, 1, 2, 99, 109]  # a burst that outran its share: its last request ran
    loop.advance(10.0)
    gate.request("a click")  # later: at once
    assert started[-1] == (0, "a click") and not loop.timers


def test_sessions_past_their_share_share_one_rate_however_many_they_are():
    loop, started = FakeLoop(), []
    flooders = gates(10, loop, started, lane_rate=4.0)
    for step in range(1000):  # ten sessions, each asking every 10 ms for 10 s
        for gate in flooders:
            gate.request(step)
        loop.advance(0.01)
    past_burst = len(started) - 10 * 3
    assert 4.0 * 10 * 0.8 <= past_burst <= 4.0 * 10 * 1.2, past_burst
    assert {n for n, _ in started[-20:]} == set(range(10))  # every session still gets its turns


def test_a_connection_s_messages_are_read_a_burst_at_once_then_at_the_rate():
    reads = []

    async def receive():
        reads.append(time.monotonic())
        return {"type": "websocket.receive", "bytes": b""}

    async def app(scope, receive, send):
        for _ in range(8):
            await receive()

    in_own_loop(InboundLimit(app, rate=10.0, burst=5)({"type": "websocket"}, receive, None))
    assert len(reads) == 8
    assert reads[7] - reads[4] >= 0.25  # three reads past the burst: a token every 0.1 s each


def shows(session: ProtocolSession) -> tuple[list[str], str]:
    """What the session's last finished run shows: its Markdown, in any order (elements may arrive
    in another order than they show), and the link the server wrote (the Explorer's switches are
    drawn in the browser: the link is where the server shows which state it ran)."""
    markdown = [e.markdown.body for e in session.finished_elements if e.WhichOneof("type") == "markdown"]
    return sorted(markdown), session.query


async def flood_then_settle(port: int, timeout: float = 120.0) -> dict:
    """One session sends FLOOD reruns without waiting (residual on, the last one off) while
    another toggles; then wait (bounded) until the flooder's last finished run shows what
    a session with residual off shows, and a little longer for any run still waiting."""
    flooder, student, reference = (ProtocolSession(port) for _ in range(3))
    for session in (flooder, student, reference):
        await session.connect(timeout=60)
    await reference.rerun({"residual": False}, timeout=60)
    expected = shows(reference)
    start = time.monotonic()
    toggled = asyncio.create_task(student.toggle_times(3, timeout, 0.1))
    for n in range(FLOOD):
        await flooder.send_rerun({"residual": n < FLOOD - 1})
    toggles = await toggled
    while shows(flooder) != expected and time.monotonic() - start < timeout:
        await asyncio.sleep(0.1)
    seconds = time.monotonic() - start
    await asyncio.sleep(2.0 / POLICY["SHARED_RERUNS_PER_SECOND"])
    result = {"seconds": seconds, "toggles": len(toggles), "last_applied": shows(flooder) == expected}
    for session in (flooder, student, reference):
        await session.close()
    return result


def test_a_session_flooding_reruns_gets_a_few_runs_and_its_last_state(tmp_path):
    """Main at f94539a started a script run (a thread) for nearly every request of the flood: 307
    runs in all. The served app runs the burst, then about POLICY["SHARED_RERUNS_PER_SECOND"], and the session
    shows the state of its last request; the other session's toggles all finish meanwhile. Runs are
    counted in the server's debug log, one line per run started."""
    log = tmp_path / "server.log"
    with streamlit_server("app.py", log, ROOT, ("--logger.level", "debug")) as (base, _server):
        port = int(base.rsplit(":", 1)[1])
        result = in_own_loop(flood_then_settle(port))
    runs = log.read_text(errors="replace").count("Beginning script thread")
    others = 3 + 1 + 3  # three sessions' first runs, the reference's rerun and the student's toggles
    assert result["last_applied"] and result["toggles"] == 3
    shared = POLICY["SHARED_RERUNS_PER_SECOND"] * result["seconds"]
    assert runs <= others + POLICY["RERUN_BURST"] + shared + 2, (runs, result)
