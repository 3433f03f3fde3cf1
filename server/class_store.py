"""Where live classes (``ui.live_class``) are kept: one contract, two stores. The embedded default
lives in this process (a classroom laptop needs nothing else); with ``BLOCKSTAB_CLASS_STORE`` set to
``redis://host:port/db`` every app process shares one Redis (or Valkey). Either applies a change (a
pure function of the record) atomically, ends a class nobody touched for :data:`IDLE_SECONDS`, bounds
how many classes run at once, and says when a class moved on (its version changed, or it ended) so that
its students' pages follow (``server.class_events``). Nothing is written to disk (Redis as
``deploy/redis.conf`` runs it)."""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Protocol

from ui.live_class import LiveClass, Refused, as_json, from_json, teacher_view

from .policy import POLICY

IDLE_SECONDS = 3 * 3600  # a class nobody touched for this long has ended


class ClassStore(Protocol):
    def create(self, record: LiveClass) -> bool:
        """Keep a new class; ``False`` if its code is taken. Raises ``Refused("class.too_many")``."""

    def read(self, code: str) -> LiveClass | None:
        """The class, or ``None`` if it has ended (or never was)."""

    def update(self, code: str, change: Callable[[LiveClass], LiveClass]) -> LiveClass:
        """Apply ``change`` atomically and return the class it made; ``Refused("class.ended")``
        if there is no such class, and whatever ``change`` raises (nothing is then written)."""

    def end(self, code: str) -> None:
        """Delete the class and everything about it."""

    def allow(self, key: str, most: int, seconds: int) -> bool:
        """Count one more event for ``key`` (e.g. a wrong code from an address) in the current
        window of ``seconds``: whether it is within ``most``."""

    def refund(self, key: str, seconds: int) -> None:
        """Count one event fewer for ``key`` in the current window of ``seconds`` (one that turned out not to
        be what ``allow`` counts)."""

    def guess(self, code: str, bounds: list[tuple[str, int]], seconds: int) -> str | None:
        """A try of ``code`` by someone without a seat, atomically: the key of the first of ``bounds`` (key,
        most) already at its most in the current window of ``seconds`` (then the class is not looked up),
        else ``None``: the class is live, or the code is wrong and counted against every bound."""

    def listen(self, moved: Callable[[str], None]) -> None:
        """Have ``moved(code)`` called in this process whenever a class of this store moves on or ends,
        wherever the change was made (a Redis store's changes are heard through its channel instead)."""


def moved_on(before: LiveClass, after: LiveClass) -> bool:
    """Whether a change is one the students' pages follow (an answer is not: ``LiveClass.version``)."""
    return before.version != after.version


class MemoryStore:
    """The embedded store: this process's memory, one lock."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS, classes: int = POLICY["CLASSES"], clock=time.monotonic):
        self.idle, self.most, self.clock = idle_seconds, classes, clock
        self._classes: dict[str, tuple[LiveClass, float]] = {}  # code -> (record, last touched)
        self._events: dict[str, tuple[float, int]] = {}  # key -> (window's end, count)
        self._lock = threading.Lock()
        self._listeners: list[Callable[[str], None]] = []

    def _live(self, code: str) -> LiveClass | None:
        record, touched = self._classes.get(code, (None, 0.0))
        if record is not None and self.clock() - touched > self.idle:
            del self._classes[code]
            return None
        return record

    def create(self, record: LiveClass) -> bool:
        with self._lock:
            for code in list(self._classes):
                self._live(code)
            if record.code in self._classes:
                return False
            if len(self._classes) >= self.most:
                raise Refused("class.too_many")
            self._classes[record.code] = (record, self.clock())
            return True

    def read(self, code: str) -> LiveClass | None:
        with self._lock:
            return self._live(code)

    def update(self, code: str, change: Callable[[LiveClass], LiveClass]) -> LiveClass:
        with self._lock:
            record = self._live(code)
            if record is None:
                raise Refused("class.ended")
            changed = change(record)
            self._classes[code] = (changed, self.clock())
        if moved_on(record, changed):
            self._moved(code)
        return changed

    def end(self, code: str) -> None:
        with self._lock:
            self._classes.pop(code, None)
        self._moved(code)

    def listen(self, moved: Callable[[str], None]) -> None:
        self._listeners.append(moved)

    def _moved(self, code: str) -> None:
        for moved in self._listeners:
            moved(code)

    def allow(self, key: str, most: int, seconds: int) -> bool:
        with self._lock:
            now = self.clock()
            ends, count = self._events.get(key, (0.0, 0))
            if now >= ends:
                ends, count = now + seconds, 0
                self._events = {k: v for k, v in self._events.items() if v[0] > now}  # the old windows go
            self._events[key] = (ends, count + 1)
            return count + 1 <= most

    def refund(self, key: str, seconds: int) -> None:
        with self._lock:
            ends, count = self._events.get(key, (0.0, 0))
            if self.clock() < ends and count:
                self._events[key] = (ends, count - 1)

    def guess(self, code: str, bounds: list[tuple[str, int]], seconds: int) -> str | None:
        with self._lock:
            now, counted = self.clock(), {}
            for key, _ in bounds:
                ends, count = self._events.get(key, (0.0, 0))
                counted[key] = (ends, count) if now < ends else (now + seconds, 0)
            for key, most in bounds:
                if counted[key][1] >= most:
                    return key
            if self._live(code) is None:
                self._events.update({key: (ends, count + 1) for key, (ends, count) in counted.items()})
            return None


class RedisStore:
    """Redis (or Valkey): a class is one JSON value, expiring :data:`IDLE_SECONDS` after the last change; a
    change is an optimistic transaction (``WATCH``, then ``MULTI``/``EXEC``, again if another process wrote
    meanwhile), so the changes themselves stay the pure functions of ``ui.live_class``, written once."""

    def __init__(self, url: str, idle_seconds: int = IDLE_SECONDS, classes: int = POLICY["CLASSES"],
                 prefix: str = "blockstab:"):
        import redis  # noqa: PLC0415 - only a server configured for Redis needs the client

        self.redis, self.watch_error = redis.Redis.from_url(url), redis.exceptions.WatchError
        self.url, self.idle, self.most, self.prefix = url, int(idle_seconds), classes, prefix
        self.classes = f"{prefix}classes"  # a sorted set: each live code, scored by when it expires
        self.channel = f"{prefix}moved"  # where each class that moved on or ended is published, by its code

    def _key(self, code: str) -> str:
        return f"{self.prefix}class:{code}"

    def _write(self, pipe, record: LiveClass) -> None:
        """Queue the writes of ``record`` in ``pipe`` (after ``MULTI``)."""
        pipe.set(self._key(record.code), json.dumps(as_json(record)), ex=self.idle)
        pipe.zadd(self.classes, {record.code: time.time() + self.idle})

    def _transaction(self, work: Callable, *keys: str):
        """``work(pipe)`` with ``keys`` watched, again until no other client wrote them meanwhile."""
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(*keys)
                    return work(pipe)
                except self.watch_error:
                    continue

    def create(self, record: LiveClass) -> bool:
        record_key = self._key(record.code)
        self.redis.zremrangebyscore(self.classes, "-inf", time.time())  # the ended classes go

        def work(pipe) -> bool:
            if pipe.exists(record_key):
                return False
            if pipe.zcard(self.classes) >= self.most:
                raise Refused("class.too_many")
            pipe.multi()
            self._write(pipe, record)
            pipe.execute()
            return True

        return self._transaction(work, self.classes, record_key)

    def read(self, code: str) -> LiveClass | None:
        value = self.redis.get(self._key(code))
        return None if value is None else from_json(json.loads(value))

    def update(self, code: str, change: Callable[[LiveClass], LiveClass]) -> LiveClass:
        record_key = self._key(code)

        def work(pipe) -> LiveClass:
            value = pipe.get(record_key)
            if value is None:
                raise Refused("class.ended")
            record = from_json(json.loads(value))
            changed = change(record)
            pipe.multi()
            self._write(pipe, changed)
            if moved_on(record, changed):
                pipe.publish(self.channel, code)
            pipe.execute()
            return changed

        return self._transaction(work, record_key)

    def end(self, code: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.delete(self._key(code))
            pipe.zrem(self.classes, code)
            pipe.publish(self.channel, code)
            pipe.execute()

    def _window(self, key: str, seconds: int) -> str:
        return f"{self.prefix}events:{key}:{int(time.time() // seconds)}"

    def allow(self, key: str, most: int, seconds: int) -> bool:
        window = self._window(key, seconds)
        with self.redis.pipeline() as pipe:
            pipe.incr(window)
            pipe.expire(window, seconds)
            count, _ = pipe.execute()
        return count <= most

    def refund(self, key: str, seconds: int) -> None:
        window = self._window(key, seconds)
        with self.redis.pipeline() as pipe:
            pipe.decr(window)
            pipe.expire(window, seconds)
            pipe.execute()

    # KEYS: the class, then each bound's window; ARGV: each bound's most, then the window's seconds. The
    # number of the first bound at its most (the class not looked up), else 0 (counted if the class is none).
    _GUESS = """
    for i = 2, #KEYS do
      if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i - 1]) then return i - 1 end
    end
    if redis.call('EXISTS', KEYS[1]) == 0 then
      for i = 2, #KEYS do
        redis.call('INCR', KEYS[i])
        redis.call('EXPIRE', KEYS[i], ARGV[#ARGV])
      end
    end
    return 0
    """

    def guess(self, code: str, bounds: list[tuple[str, int]], seconds: int) -> str | None:
        windows = [self._window(key, seconds) for key, _ in bounds]
        over = self.redis.eval(self._GUESS, 1 + len(bounds), self._key(code), *windows,
                               *(most for _, most in bounds), seconds)
        return bounds[over - 1][0] if over else None

    def listen(self, moved: Callable[[str], None]) -> None:
        """(Heard through :attr:`channel`: ``server.class_events`` subscribes to it in each process.)"""


def followed(store: ClassStore, code: str, who: str) -> str | None:
    """What the page of ``who`` shows of the class, as it polls (:func:`ui.live_class.teacher_view`): ``None``
    if the class has ended or ``who`` is not in it (so the poll tells a stranger nothing, not even
    whether a code is live)."""
    record = store.read(code)
    return teacher_view(record, who, time.time()) if record is not None else None


@functools.cache
def class_store() -> ClassStore:
    """This process's store: Redis at ``BLOCKSTAB_CLASS_STORE`` if it is set, else the embedded one."""
    url = os.environ.get("BLOCKSTAB_CLASS_STORE", "")
    return RedisStore(url) if url else MemoryStore()
