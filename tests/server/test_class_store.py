"""The class store's contract (``server.class_store``), on both stores: the embedded one and a real
Redis server started by ``scripts/redis.sh`` (Debian's ``redis-server``; missing, the tests fail), and each
store's word that a class moved on (what the students' pages follow: ``server.class_events``)."""

import itertools
import threading
import time

import pytest

from server.class_store import MemoryStore, RedisStore, followed
from support import ROOT
from testbed.local_server import ServerFailed, redis_server
from ui.lessons import QUESTIONS
from ui.live_class import Refused, answer, ask, join, new_code, new_key, new_student, show_step, start, teacher_token

prefixes = (f"test{n}:" for n in itertools.count())  # each test its own keys on the one server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    try:
        with redis_server(tmp_path_factory.mktemp("redis") / "redis.log", ROOT) as url:
            yield url
    except ServerFailed as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(params=["memory", "redis"])
def make_store(request):
    """``make_store(idle_seconds=..., classes=...)``: a new, empty store of the kind under test."""
    if request.param == "memory":
        return MemoryStore
    url = request.getfixturevalue("redis_url")
    return lambda **limits: RedisStore(url, prefix=next(prefixes), **limits)


def a_class(store) -> str:
    record = start(new_code(), new_key(), "en")
    assert store.create(record)
    return record.code


def test_a_class_is_kept_read_changed_and_ended(make_store):
    store = make_store()
    code = a_class(store)
    student = new_student()
    teacher = teacher_token(store.read(code))
    assert store.read(code).code == code and followed(store, code, teacher) == "0/0/0/0/open"
    changed = store.update(code, lambda c: ask(join(c, student, 0.0, 200), 2))
    assert store.read(code) == changed and followed(store, code, teacher) == "1/1/0/0/open"  # (the teacher's page's)
    assert followed(store, code, student) is None and followed(store, "NOSUCH", teacher) is None
    store.end(code)
    assert store.read(code) is None and followed(store, code, teacher) is None
    with pytest.raises(Refused) as refused:
        store.update(code, lambda c: c)
    assert refused.value.key == "class.ended"


def test_a_refused_change_writes_nothing(make_store):
    store = make_store()
    code = a_class(store)
    before = store.read(code)
    with pytest.raises(Refused):
        store.update(code, lambda c: answer(ask(c, 0), new_student(), QUESTIONS[0].answer))
    assert store.read(code) == before


def test_a_taken_code_is_refused_and_classes_are_bounded(make_store):
    store = make_store(classes=3)
    code = a_class(store)
    assert not store.create(start(code, new_key(), "en"))
    a_class(store), a_class(store)
    with pytest.raises(Refused) as refused:
        a_class(store)
    assert refused.value.key == "class.too_many"
    store.end(code)
    a_class(store)  # an ended class makes room


def test_a_class_nobody_touches_ends_by_itself_and_a_touched_one_lives_on(make_store):
    store = make_store(idle_seconds=1)
    idle, touched = a_class(store), a_class(store)
    deadline = time.monotonic() + 30
    while store.read(idle) is not None:  # waits for the condition, bounded
        store.update(touched, lambda c: c)
        assert time.monotonic() < deadline, "the idle class never ended"
        time.sleep(0.1)
    assert store.read(touched) is not None


def test_forty_students_answering_at_once_are_each_counted_once(make_store):
    """Every join and answer is a read-change-write; run at once from 40 threads (40 sessions, and
    on Redis 40 connections as from several app processes), none is lost and none is counted twice."""
    store = make_store()
    code = a_class(store)
    store.update(code, lambda c: ask(c, 0))
    students = [new_student() for _ in range(40)]
    start_together = threading.Barrier(len(students))

    def student_answers(n: int, student: str) -> None:
        start_together.wait()
        store.update(code, lambda c: join(c, student, 0.0, 200))
        for choice in (*QUESTIONS[0].choices, QUESTIONS[0].answer):  # changing their mind, then settling
            store.update(code, lambda c, choice=choice: answer(c, student, choice))

    threads = [threading.Thread(target=student_answers, args=pair) for pair in enumerate(students)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    c = store.read(code)
    assert set(c.seats) == set(students) and set(c.answers) == set(students)
    assert all(choice == QUESTIONS[0].answer for choice in c.answers.values())


def test_events_are_counted_per_key_and_window_and_one_can_be_given_back(make_store):
    store = make_store()
    assert [store.allow("wrong:a", 3, 60) for _ in range(5)] == [True] * 3 + [False] * 2
    assert store.allow("wrong:b", 3, 60)
    store.refund("wrong:b", 60)
    assert [store.allow("wrong:b", 3, 60) for _ in range(4)] == [True] * 3 + [False]
    store.refund("wrong:a", 60)
    store.refund("wrong:a", 60)
    assert [store.allow("wrong:a", 3, 60) for _ in range(2)] == [False, False]  # 5 counted, 2 given back: 3


def test_two_app_processes_share_one_redis(redis_url):
    """Two stores on one Redis, as two app processes behind a load balancer: a class started on
    one is joined and changed on the other."""
    teacher_side, student_side = RedisStore(redis_url, prefix="shared:"), RedisStore(redis_url, prefix="shared:")
    code = a_class(teacher_side)
    student = new_student()
    student_side.update(code, lambda c: join(c, student, 0.0, 200))
    teacher_side.update(code, lambda c: ask(c, 0))
    assert student_side.read(code).version == 1 and set(teacher_side.read(code).seats) == {student}


def test_a_class_that_moves_on_or_ends_is_told_and_an_answer_is_not(make_store):
    """The embedded store tells its listeners; a Redis store publishes on its channel, which every app
    process listens to (whichever process made the change)."""
    store = make_store()
    heard = []
    if isinstance(store, MemoryStore):
        store.listen(heard.append)
    else:
        listening = store.redis.pubsub()
        listening.subscribe(store.channel)
        assert listening.get_message(timeout=5)["type"] == "subscribe"
    code = a_class(store)
    student = new_student()
    store.update(code, lambda c: join(c, student, 0.0, 200))  # a student in: no page moves on
    store.update(code, lambda c: show_step(c, 2))
    store.update(code, lambda c: ask(c, 0))
    store.update(code, lambda c: answer(c, student, QUESTIONS[0].answer))
    store.end(code)
    if not isinstance(store, MemoryStore):
        messages = [listening.get_message(timeout=5) for _ in range(3)]
        heard = [m["data"].decode() for m in messages if m and m["type"] == "message"]
        assert listening.get_message(timeout=0.5) is None
        listening.close()
    assert heard == [code, code, code]
