"""How a live class's change reaches its students' event streams (``server.class_routes``) in this process:
the store says when a class's version moved (``server.class_store``: the embedded one calls :func:`moved`
itself; a Redis store publishes, and every app process hears it through one subscription of its own, so a
change made on one replica reaches the students of every replica). A stream waits for the next move, then
reads the class once for all the streams of the class that woke with it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from starlette.concurrency import run_in_threadpool

from ui.live_class import LiveClass

from .class_store import RedisStore, class_store

RESUBSCRIBE_SECONDS = 1.0  # after the subscription to Redis broke, it is made again this much later

_loop: asyncio.AbstractEventLoop | None = None
_moves: dict[str, asyncio.Event] = {}  # code -> the event its next move sets
_reads: dict[str, tuple[int, asyncio.Future]] = {}  # code -> (the move it was read after, the read)
_counts: dict[str, int] = {}  # code -> its moves heard in this process
_listening: list[asyncio.Task] = []  # (kept: a task no one holds may be collected)


def moved(code: str) -> None:
    """The class ``code`` moved on (or ended): wake its streams. Callable from any thread."""
    if _loop is not None and not _loop.is_closed():
        _loop.call_soon_threadsafe(_wake, code)


def _wake(code: str) -> None:
    _counts[code] = _counts.get(code, 0) + 1
    event = _moves.pop(code, None)
    if event is not None:
        event.set()


def watch(code: str) -> tuple[asyncio.Event, int]:
    """The event the class's next move sets, and how many moves were heard before it (call it before
    reading the class: a move after the read then still wakes the stream)."""
    _start()
    return _moves.setdefault(code, asyncio.Event()), _counts.get(code, 0)


async def read(code: str, heard: int) -> LiveClass | None:
    """The class as the store has it after ``heard`` moves: one read of the store for every stream asking
    meanwhile."""
    started, reading = _reads.get(code, (-1, None))
    if reading is None or started < heard:
        reading = asyncio.ensure_future(run_in_threadpool(class_store().read, code))
        _reads[code] = (heard, reading)
        reading.add_done_callback(lambda done: _reads.get(code, (0, None))[1] is done and _reads.pop(code))
    return await asyncio.shield(reading)


async def until(event: asyncio.Event, seconds: float) -> None:
    """Wait for ``event`` at most ``seconds``."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


def _start() -> None:
    """Once per process, in the server's event loop: hear the store's moves (an embedded store calls
    :func:`moved`; a Redis store's channel is listened to)."""
    global _loop  # noqa: PLW0603 - one loop per process: the server's
    if _loop is not None:
        return
    _loop = asyncio.get_running_loop()
    store = class_store()
    store.listen(moved)
    if isinstance(store, RedisStore):
        _listening.append(asyncio.ensure_future(_listen(store)))


async def _listen(store: RedisStore) -> None:
    """Hear every move published on the store's channel, for as long as the process lives; when the
    subscription breaks (Redis restarted), subscribe again and wake every stream (it may have missed one)."""
    import redis.asyncio  # noqa: PLC0415 - only a server configured for Redis needs it

    while True:
        try:
            async with redis.asyncio.Redis.from_url(store.url) as client, client.pubsub() as pubsub:
                await pubsub.subscribe(store.channel)
                for code in list(_moves):
                    _wake(code)
                async for message in pubsub.listen():
                    if message["type"] == "message":
                        _wake(message["data"].decode("ascii", "replace"))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - Redis away for a moment: listen again
            logging.getLogger(__name__).warning("a live class's moves: subscription lost (%r)", error)
        await asyncio.sleep(RESUBSCRIBE_SECONDS)
