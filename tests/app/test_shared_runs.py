"""Depth-lab runs shared by every session (server.shared_runs): threads stand in for sessions."""

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from server.shared_runs import Replaced, SharedRuns, Waiting

TIMEOUT = 20.0


class Stop(Exception):
    """What Streamlit raises in a session whose user changed a control."""


def until(condition, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def in_threads(*targets) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    return threads


def joined(threads) -> None:
    for thread in threads:
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "a session never got its answer"


def test_a_class_asking_for_one_setup_runs_it_once_and_follows_its_progress():
    runs = SharedRuns(size=8, workers=2, poll_seconds=0.01)
    release, calls, seen, answers = threading.Event(), [], [], []

    def compute(progress):
        calls.append(1)
        progress(0.5)
        release.wait(TIMEOUT)
        return object()

    def session():
        answers.append(runs.run("dong", compute, lambda w: seen.append((threading.get_ident(), w))))

    threads = in_threads(*[session] * 12)
    until(lambda: len({who for who, w in seen if w.fraction == 0.5}) == 11)
    release.set()
    joined(threads)
    assert len(calls) == 1
    assert len(answers) == 12 and all(a is answers[0] for a in answers)
    assert all(w.ahead == 0 for _, w in seen), "a session waiting for a running setup follows it"
    assert runs.get("dong") is answers[0]
    assert runs.running == {} and runs.line == {}


def test_no_more_setups_run_at_once_than_there_are_workers():
    runs = SharedRuns(size=8, workers=2, poll_seconds=0.01)
    lock, now, most, seen, answers = threading.Lock(), [0], [0], [], {}

    def compute_for(key):
        def compute(progress):
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            time.sleep(0.05)
            with lock:
                now[0] -= 1
            return f"curves of {key}"
        return compute

    def session(key):
        return lambda: answers.__setitem__(key, runs.run(key, compute_for(key), seen.append))

    joined(in_threads(*[session(k) for k in range(6)]))
    assert most[0] == 2
    assert answers == {k: f"curves of {k}" for k in range(6)}
    assert {w.ahead for w in seen} <= set(range(2, 6)) and max(w.ahead for w in seen) >= 2


def test_a_stopped_run_is_not_kept_and_the_session_still_waiting_runs_it():
    runs = SharedRuns(size=8, workers=2, poll_seconds=0.01)
    b_waits, calls, outcome = threading.Event(), [], {}

    def stopped(progress):
        calls.append("a")
        progress(0.3)
        b_waits.wait(TIMEOUT)
        raise Stop

    def finished(progress):
        calls.append("b")
        return "curves"

    def session_a():
        try:
            runs.run("xiong", stopped, lambda w: None)
        except Stop:
            outcome["a"] = "stopped"

    def session_b():
        outcome["b"] = runs.run("xiong", finished, lambda w: b_waits.set())

    first = in_threads(session_a)
    until(lambda: "xiong" in runs.running)
    joined([*first, *in_threads(session_b)])
    assert calls == ["a", "b"]
    assert outcome == {"a": "stopped", "b": "curves"}
    assert runs.get("xiong") == "curves"


def test_a_session_that_stops_waiting_leaves_the_line():
    runs = SharedRuns(size=8, workers=1, poll_seconds=0.01)
    release, stopped = threading.Event(), []

    def blocked(progress):
        release.wait(TIMEOUT)
        return "first"

    def impatient(waiting: Waiting):
        assert waiting.ahead == 1
        raise Stop

    def session_that_leaves():
        try:
            runs.run("second", lambda progress: "never", impatient)
        except Stop:
            stopped.append(True)

    first = in_threads(lambda: runs.run("first", blocked, lambda w: None))
    until(lambda: "first" in runs.running)
    joined(in_threads(session_that_leaves))
    assert stopped == [True] and runs.line == {}
    release.set()
    joined(first)
    assert runs.run("third", lambda progress: "third", lambda w: None) == "third"
    assert runs.get("second") is None and runs.running == {} and runs.line == {}


def test_only_the_newest_results_are_kept():
    runs = SharedRuns(size=2, workers=1)
    for key in "abc":
        runs.run(key, lambda progress, key=key: key.upper(), lambda w: None)
    runs.get("b")  # used: now newer than c
    runs.run("d", lambda progress: "D", lambda w: None)
    assert [runs.get(k) for k in "abcd"] == [None, "B", None, "D"]


SESSION = st.tuples(st.sampled_from("abc"), st.sampled_from([None, "run", "wait"]))


@settings(max_examples=25, deadline=None)
@given(sessions=st.lists(SESSION, min_size=1, max_size=10), workers=st.integers(1, 3))
def test_any_crowd_gets_every_answer_within_the_worker_limit(sessions, workers):
    """Sessions asking for a few setups at once, some stopping during the run or the wait: every
    session that does not stop gets its setup's result, no setup ever runs twice at the same time,
    at most ``workers`` run at once, and nothing is left in the line afterwards."""
    runs = SharedRuns(size=8, workers=workers, poll_seconds=0.005)
    lock, active, most, answers, errors = threading.Lock(), set(), [0], {}, []

    def session(i, key, stops):
        def compute(progress):
            with lock:
                if key in active:
                    errors.append(f"{key} ran twice at once")
                active.add(key)
                most[0] = max(most[0], len(active))
            try:
                for step in range(5):
                    time.sleep(0.002)
                    progress(step / 5)
                    if stops == "run" and step == 2:
                        raise Stop
            finally:
                with lock:
                    active.discard(key)
            return f"curves of {key}"

        def show(waiting):
            if stops == "wait":
                raise Stop

        def target():
            try:
                answers[i] = runs.run(key, compute, show)
            except Stop:
                answers[i] = "stopped"
        return target

    joined(in_threads(*[session(i, key, stops) for i, (key, stops) in enumerate(sessions)]))
    assert errors == [] and most[0] <= workers
    for i, (key, stops) in enumerate(sessions):
        assert answers[i] in ({f"curves of {key}"} if stops is None else {f"curves of {key}", "stopped"})
    assert runs.running == {} and runs.line == {}


# --- one request per client (issue #15): many tabs cannot fill the line -------------------------------


def test_a_clients_new_request_replaces_its_queued_one():
    runs = SharedRuns(size=8, workers=1, poll_seconds=0.01)
    release, outcomes = threading.Event(), {}

    def busy(progress):
        release.wait(TIMEOUT)
        return "busy"

    def tab(n):
        try:
            outcomes[n] = runs.run(f"setup-{n}", lambda progress, n=n: n, lambda w: None, owner="10.0.0.7")
        except Replaced:
            outcomes[n] = "replaced"

    holder = in_threads(lambda: runs.run("other", busy, lambda w: None, owner="10.0.0.8"))
    until(lambda: "other" in runs.running)
    for n in range(6):  # one student opens six tabs, each asking for another setup
        joined_later = in_threads(lambda n=n: tab(n))
        until(lambda n=n: f"setup-{n}" in runs.line)
        holder += joined_later
    until(lambda: len(outcomes) == 5)
    assert list(runs.line) == ["setup-5"]  # one queued request for the six tabs
    release.set()
    joined(holder)
    assert outcomes == {**{n: "replaced" for n in range(5)}, 5: 5}
    assert runs.latest == {}


def test_a_replaced_run_stops_unless_another_session_follows_it():
    runs = SharedRuns(size=8, workers=2, poll_seconds=0.01)
    started, release, outcome = threading.Event(), threading.Event(), []

    def slow(progress):
        started.set()
        while not release.is_set():
            progress(0.5)
            time.sleep(0.005)
        return "done"

    def first():
        try:
            outcome.append(runs.run("deep", slow, lambda w: None, owner="a"))
        except Replaced:
            outcome.append("stopped")

    threads = in_threads(first)
    started.wait(TIMEOUT)
    runs.run("small", lambda progress: "small", lambda w: None, owner="a")  # the same client asks again
    joined(threads)
    assert outcome == ["stopped"] and runs.get("deep") is None

    started.clear()
    threads = in_threads(first)
    started.wait(TIMEOUT)
    follower = []
    threads += in_threads(lambda: follower.append(runs.run("deep", slow, lambda w: None, owner="b")))
    until(lambda: runs.line.get("deep"))
    runs.run("small", lambda progress: "small", lambda w: None, owner="a")
    release.set()
    joined(threads)
    assert outcome[-1] in ("stopped", "done") and follower == ["done"]  # b's run went on


# --- waiting sessions redraw when what they show changes, and on a heartbeat --------------------------


def shows_while_queued(heartbeat_seconds: float, seconds: float = 0.4) -> list[Waiting]:
    """What a session queued behind a run that makes no progress for ``seconds`` is shown."""
    runs = SharedRuns(size=8, workers=1, poll_seconds=0.005, heartbeat_seconds=heartbeat_seconds)
    release, seen = threading.Event(), []
    holder = in_threads(lambda: runs.run("first", lambda progress: release.wait(TIMEOUT) and "first", lambda w: None))
    until(lambda: "first" in runs.running)
    queued = in_threads(lambda: runs.run("second", lambda progress: "second", seen.append))
    time.sleep(seconds)
    release.set()
    joined(holder + queued)
    return seen


def test_a_queued_session_redraws_only_when_what_it_shows_changes():
    """Not every poll (28 queued sessions redrew 140 times a second): once while nothing changes."""
    assert shows_while_queued(heartbeat_seconds=60) == [Waiting(0.0, 1)]


def test_a_queued_session_still_redraws_on_a_heartbeat():
    """A session notices that its user left when it draws, so it draws now and then."""
    seen = shows_while_queued(heartbeat_seconds=0.05)
    assert 3 <= len(seen) <= 12 and set(seen) == {Waiting(0.0, 1)}
