"""Depth-lab runs shared by every session: one run per setup, a few setups at a time, results kept.

A class of forty opening the teacher's link to the same preset starts one run, not forty: the
first session runs it and the others follow its progress. At most ``workers`` different setups
run at once (one per core), so a crowd asking for many setups queues instead of sharing two cores
forty ways and holding forty streams in memory; a queued session is told how many go first.
A session that stops waiting (its user changed a control) leaves the line; a stopped run is
not kept, and whoever still waits for it runs it. Each client (``owner``) has one request queued
or running: a new one replaces it (the old wait ends with :class:`Replaced`, and so does the old
run unless another session follows it), so one student's many tabs cannot fill the line.
Plain threads, no Streamlit: tested directly.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class Waiting:
    """What a waiting session shows: the shared run's progress, or how many setups go first."""

    fraction: float  # of the run this session follows (0 while queued)
    ahead: int  # setups running or queued before this one; 0: following its run


class Replaced(Exception):
    """This request was replaced by a newer one of the same client."""


class SharedRuns:
    """``run(key, compute, show)``: ``compute(progress)`` once for every session that asks for
    ``key``; the newest ``size`` results kept (least recently used out)."""

    def __init__(self, size: int, workers: int, poll_seconds: float = 0.2, heartbeat_seconds: float = 2.0):
        self.size, self.workers, self.poll_seconds = size, workers, poll_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.results: OrderedDict = OrderedDict()
        self.running: dict = {}  # key -> its progress (0..1)
        self.line: dict = {}  # key -> sessions waiting for it, in the order the keys arrived
        self.latest: dict = {}  # owner -> its current request (an object() per call)
        self.changed = threading.Condition()

    def get(self, key):
        """The kept result for ``key``, or ``None``."""
        with self.changed:
            if key in self.results:
                self.results.move_to_end(key)
            return self.results.get(key)

    def run(self, key, compute, show, owner=None):
        """The result for ``key``: kept, or followed while another session runs it, or run here
        once a worker is free. While waiting, ``show(Waiting)`` is called when what it shows
        changes (checked every ``poll_seconds``) and at least every ``heartbeat_seconds`` (a
        session notices that its user left when it draws); whatever it or ``compute`` raises
        ends this session's wait or run.
        A later call with the same ``owner`` (not ``None``) replaces this one: it raises
        :class:`Replaced`."""
        request = object()
        if owner is not None:
            with self.changed:
                self.latest[owner] = request
                self.changed.notify_all()
        try:
            return self._run(key, compute, show, lambda: owner is not None and self.latest.get(owner) is not request)
        finally:
            self._forget(owner, request)

    def _run(self, key, compute, show, replaced):
        with self.changed:
            self.line[key] = self.line.get(key, 0) + 1
        shown, shown_at = None, 0.0
        try:
            while True:
                with self.changed:
                    if replaced():
                        raise Replaced(key)
                    if key in self.results:
                        self.results.move_to_end(key)
                        return self.results[key]
                    if key not in self.running and self._turn(key):
                        self.running[key] = 0.0
                        break
                    waiting = Waiting(round(self.running.get(key, 0.0), 2), self._ahead(key))
                if waiting != shown or time.monotonic() - shown_at >= self.heartbeat_seconds:
                    show(waiting)
                    shown, shown_at = waiting, time.monotonic()
                with self.changed:
                    self.changed.wait(self.poll_seconds)
        finally:
            self._leave_line(key)
        try:
            value = compute(lambda fraction: self._progress(key, fraction, replaced))
            with self.changed:
                self.results[key] = value
                while len(self.results) > self.size:
                    self.results.popitem(last=False)
            return value
        finally:
            with self.changed:
                del self.running[key]
                self.changed.notify_all()

    def _forget(self, owner, request) -> None:
        with self.changed:
            if owner is not None and self.latest.get(owner) is request:
                del self.latest[owner]

    def _queued(self) -> list:
        return [k for k in self.line if k not in self.running]

    def _turn(self, key) -> bool:
        return self._queued().index(key) < self.workers - len(self.running)

    def _ahead(self, key) -> int:
        return 0 if key in self.running else len(self.running) + self._queued().index(key)

    def _leave_line(self, key) -> None:
        with self.changed:
            self.line[key] -= 1
            if not self.line[key]:
                del self.line[key]
            self.changed.notify_all()

    def _progress(self, key, fraction: float, replaced) -> None:
        """Record a run's progress; stop it if its client asked for something else since and no
        other session follows it."""
        with self.changed:
            self.running[key] = fraction
            if replaced() and not self.line.get(key):
                raise Replaced(key)
