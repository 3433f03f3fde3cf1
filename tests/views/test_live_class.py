"""The live class's record and its changes (``ui.live_class``), without a store or a server."""

import ast
import json
import string

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from support import ROOT
from ui import live_class
from ui.controls import BY_KEY, ExplorerState, explorer_query
from ui.lessons import ASKABLE, LIVE_SCRIPT, NUMBERS, QUESTIONS, TOUR, engine_number, lesson_facts
from ui.live_class import (
    CODE_ALPHABET,
    CODE_LENGTH,
    RECENT_SECONDS,
    TIMER_SECONDS,
    LiveClass,
    Refused,
    answer,
    as_json,
    ask,
    check_teacher,
    close,
    counts,
    end,
    explore_freely,
    follow_me,
    from_json,
    join,
    lock,
    new_code,
    new_key,
    new_student,
    next_in_script,
    pause,
    phase_at,
    recent,
    remove_recent,
    reveal,
    right_answer,
    rounds,
    script_position,
    show_me,
    show_step,
    show_view,
    start,
    student_state,
    summary,
    teacher_token,
    teacher_view,
    view_state,
    vote_again,
)
from ui.text import Text
from ui.views import explore

STUDENTS = [new_student() for _ in range(8)]
NOW = 1_800_000_000.0  # the server's clock when the class below was joined
MOST = 200


def a_class() -> LiveClass:
    """A class every student of :data:`STUDENTS` joined a second apart, on the first question."""
    c = start(new_code(), new_key(), "en")
    for i, student in enumerate(STUDENTS):
        c = join(c, student, NOW + i, MOST)
    return ask(c, 0)


def test_codes_have_no_look_alikes_and_keys_are_long():
    assert not set(CODE_ALPHABET) & set("0OQ1IL2Z5S8BUV")
    codes = {new_code() for _ in range(200)}
    assert all(BY_KEY["class"].parse(code) == code and len(code) == CODE_LENGTH for code in codes) and len(codes) > 190
    assert len(new_key()) >= 32 and set(new_key()) <= set(string.ascii_letters + string.digits + "-_")


def test_only_the_teachers_key_controls_and_the_key_itself_is_not_kept():
    key = new_key()
    c = start("ACDEFG", key, "zh")
    check_teacher(c, key)
    with pytest.raises(Refused) as refused:
        check_teacher(c, new_key())
    assert refused.value.key == "class.not_teacher"
    assert key not in str(as_json(c))


def test_a_phone_takes_one_seat_and_a_full_class_or_a_bad_token_is_refused():
    c = start(new_code(), new_key(), "en")
    c = join(join(c, STUDENTS[0], NOW, MOST), STUDENTS[0], NOW + 5, MOST)
    assert c.seats == {STUDENTS[0]: NOW}  # joining again (a reload) keeps the seat as it was
    for token, most, key in (("<script>x</script>", 10, "class.bad_link"), (STUDENTS[1], 1, "class.full")):
        with pytest.raises(Refused) as refused:
            join(c, token, NOW, most)
        assert refused.value.key == key


def test_a_locked_class_takes_no_new_seat_but_keeps_its_own_and_opens_again():
    c = lock(a_class())
    assert c.locked and c.version == a_class().version  # no student's page moves
    with pytest.raises(Refused) as refused:
        join(c, new_student(), NOW + 60, MOST)
    assert refused.value.key == "class.locked"
    assert join(c, STUDENTS[3], NOW + 60, MOST) == c  # a seat's phone that reloads stays in
    assert answer(c, STUDENTS[3], QUESTIONS[0].answer).answers == {STUDENTS[3]: QUESTIONS[0].answer}
    newcomer = new_student()
    assert newcomer in join(lock(c, False), newcomer, NOW + 60, MOST).seats


def test_a_pause_puts_every_phone_on_the_projector_and_a_resume_gives_each_seat_back_what_it_had():
    c = answer(a_class(), STUDENTS[0], QUESTIONS[0].choices[1])
    before = {s: student_state(c, s) for s in STUDENTS}
    paused = pause(c)
    assert paused.version == c.version + 1 and pause(paused) == paused  # (pausing again changes nothing)
    assert all(student_state(paused, s)["paused"] for s in STUDENTS)
    with pytest.raises(Refused) as refused:
        answer(paused, STUDENTS[1], QUESTIONS[0].answer)  # nothing to tap, and a script's answer is refused
    assert refused.value.key == "class.paused"
    resumed = pause(paused, False)
    assert {s: {**student_state(resumed, s), "version": 0} for s in STUDENTS} == {
        s: {**state, "version": 0} for s, state in before.items()}  # each its own, its answer included
    assert resumed.answers == c.answers and resumed.version == c.version + 2


def test_a_timed_question_closes_by_itself_on_the_servers_clock_and_a_late_answer_is_refused():
    c = ask(a_class(), 2, timer=30, now=NOW)
    assert (c.timer, c.closes_at) == (30, NOW + 30)
    assert [phase_at(c, NOW + dt) for dt in (0, 29.9, 30, 400)] == ["open", "open", "closed", "closed"]
    c = answer(c, STUDENTS[0], QUESTIONS[2].answer, NOW + 29.9)
    with pytest.raises(Refused) as refused:
        answer(c, STUDENTS[1], QUESTIONS[2].answer, NOW + 30)
    assert refused.value.key == "class.time_up" and c.version == ask(a_class(), 2).version
    state = student_state(c, STUDENTS[0], NOW + 12.25)
    assert (state["phase"], state["closes_in"], state["mine"]) == ("open", 17.8, QUESTIONS[2].answer)
    late = student_state(c, STUDENTS[0], NOW + 31)
    assert (late["phase"], late["closes_in"], late["time_up"], state["time_up"]) == ("closed", None, True, False)
    assert not student_state(close(c), STUDENTS[0], NOW + 31)["time_up"]  # closed by the teacher before zero
    token = teacher_token(c)
    assert teacher_view(c, token, NOW + 29) != teacher_view(c, token, NOW + 30)  # the teacher's page runs at zero
    revealed = reveal(c)
    assert phase_at(revealed, NOW + 31) == "revealed" and student_state(revealed, STUDENTS[0], NOW)["closes_in"] is None
    untimed = ask(c, 1)
    assert (untimed.timer, untimed.closes_at, phase_at(untimed, NOW + 10**6)) == (0, 0.0, "open")
    for bad in (TIMER_SECONDS[0] - 1, TIMER_SECONDS[1] + 1, -5):
        with pytest.raises(Refused) as refused:
            ask(c, 1, timer=bad, now=NOW)
        assert refused.value.key == "class.bad_timer"


def test_the_summary_is_every_question_asked_as_answered_and_ending_keeps_it_and_lets_no_phone_in():
    c = a_class()  # question 0 asked
    for n, student in enumerate(STUDENTS):
        c = answer(c, student, QUESTIONS[0].choices[n % 2])
    c = ask(show_step(c, 3), 2)  # a tour step between: question 0 is done when question 2 is asked
    c = answer(c, STUDENTS[0], QUESTIONS[2].answer)
    done = summary(c)
    assert [(r.question, r.round, r.answered) for r in done] == [(0, 1, len(STUDENTS)), (2, 1, 1)]
    assert dict(done[0].counts) == {choice: sum(n % 2 == i for n in range(len(STUDENTS)))
                                     for i, choice in enumerate(QUESTIONS[0].choices)}
    assert done[1].share_right() == 1.0 and summary(ask(c, 1))[2].share_right() is None  # (no answer yet)
    over = end(c)
    assert summary(over) == done and over.ended and over.version == c.version + 1
    assert over.seats == {} and over.answers == {} and student_state(over, STUDENTS[0]) is None
    with pytest.raises(Refused) as refused:
        join(over, new_student(), NOW, MOST)
    assert refused.value.key == "class.ended"
    assert from_json(as_json(over)) == over
    assert not any(student in str(as_json(over)) for student in STUDENTS)  # nothing of who answered


def test_removing_the_recent_joins_removes_those_seats_and_their_answers_only():
    c = a_class()
    for student in STUDENTS:
        c = answer(c, student, QUESTIONS[0].answer)
    now = NOW + 3 + RECENT_SECONDS  # STUDENTS[3:] joined within the last RECENT_SECONDS, the first three before
    assert recent(c, now) == STUDENTS[3:]
    kept = remove_recent(c, now)
    assert set(kept.seats) == set(STUDENTS[:3]) and set(kept.answers) == set(STUDENTS[:3])
    assert kept.version == c.version + 1  # the removed seats' pages follow, to "not in the class"
    assert student_state(kept, STUDENTS[5]) is None and student_state(kept, STUDENTS[0])["mine"] is not None
    assert remove_recent(kept, now) == kept  # nothing recent: nothing changes
    with pytest.raises(Refused):
        answer(kept, STUDENTS[5], QUESTIONS[0].answer)
    assert STUDENTS[5] in join(kept, STUDENTS[5], now, MOST).seats  # the phone may join again (unless locked)


def test_every_step_the_teacher_leads_is_a_new_version_students_follow():
    c = start(new_code(), new_key(), "en")
    for change in (lambda c: show_step(c, len(TOUR) - 1), lambda c: show_view(c, {"residual": "false"}),
                   lambda c: ask(c, 3), close, reveal, show_me, explore_freely, follow_me):
        before, c = c, change(c)
        assert c.version == before.version + 1
    assert c.activity == "explorer" and c.following
    assert dict(c.view) == {"residual": "false"} == explorer_query(QUESTIONS[3].show_me)  # (depth 24: the default)


def test_a_question_asked_again_is_a_new_question_with_no_answers():
    c = answer(a_class(), STUDENTS[0], QUESTIONS[0].answer)
    again = ask(reveal(c), 0)
    assert again.asked == again.version > c.asked and again.answers == {} and again.phase == "open"


def test_an_answer_changes_no_version_and_a_new_choice_replaces_the_old():
    c = a_class()
    c1 = answer(c, STUDENTS[0], QUESTIONS[0].choices[0])
    c2 = answer(c1, STUDENTS[0], QUESTIONS[0].choices[1])
    assert c2.version == c.version
    assert counts(c2) == {choice: int(i == 1) for i, choice in enumerate(QUESTIONS[0].choices)}


def test_the_teachers_page_changes_with_every_count_a_students_state_with_the_version_and_its_own_answer():
    c = a_class()
    teacher, student, other, stranger = teacher_token(c), STUDENTS[0], STUDENTS[1], new_student()
    assert teacher_view(c, student) is None and teacher_view(c, stranger) is None  # the teacher's token only
    assert student_state(c, stranger) is None  # not in the class: nothing of it
    seen = teacher_view(c, teacher)
    before = student_state(c, student)
    for change in (lambda c: join(c, stranger, NOW, MOST), lambda c: answer(c, other, QUESTIONS[0].answer),
                   lambda c: answer(c, STUDENTS[2], QUESTIONS[0].answer), lock):
        c = change(c)
        assert student_state(c, student) == before  # another's join or answer: no student's page moves
        assert teacher_view(c, teacher) != seen
        seen = teacher_view(c, teacher)
    c = answer(c, student, QUESTIONS[0].choices[0])
    assert student_state(c, student) == {**before, "mine": QUESTIONS[0].choices[0]}  # their own answer
    c = close(c)
    assert student_state(c, student)["phase"] == "closed" and student_state(c, student)["version"] == c.version
    assert teacher not in str(teacher_view(c, teacher)) and c.teacher.startswith(teacher)  # a prefix of the key's hash


def test_every_seat_counts_once_whatever_its_address():
    c = a_class()
    for student in [*STUDENTS, *STUDENTS[:4]]:  # (one NAT address for all: no address is kept)
        c = answer(c, student, QUESTIONS[0].answer)
    assert sum(counts(c).values()) == len(STUDENTS) == len(c.answers)
    assert "address" not in str(as_json(c))


@pytest.mark.parametrize(("change", "key"), [
    (lambda c: answer(c, new_student(), QUESTIONS[0].answer), "class.not_seated"),
    (lambda c: answer(close(c), STUDENTS[0], QUESTIONS[0].answer), "class.question_closed"),
    (lambda c: answer(c, STUDENTS[0], "<b>"), "class.bad_choice"),
    (lambda c: join(lock(c), new_student(), NOW, MOST), "class.locked"),
    (lambda c: show_step(c, len(TOUR)), "class.bad_step"),
    (lambda c: ask(c, -1), "class.bad_question"),
    (show_me, "class.not_revealed"),
    (lambda c: vote_again(reveal(c)), "class.not_votable"),
    (lambda c: vote_again(vote_again(c)), "class.not_votable"),
    (lambda c: vote_again(show_step(c, 1)), "class.not_votable"),
    (lambda c: next_in_script(ask(c, LIVE_SCRIPT[-1][1])), "class.script_done"),
])
def test_a_change_the_class_cannot_take_is_refused_with_its_message(change, key):
    with pytest.raises(Refused) as refused:
        change(a_class())
    assert refused.value.key == key


def test_next_walks_the_ten_minute_script_from_where_the_class_is():
    c, walked = show_step(a_class(), 0), []
    while script_position(c) < len(LIVE_SCRIPT) - 1:
        walked.append(script_position(c))
        c = next_in_script(c)
        shown = (c.activity, c.step if c.activity == "tour" else c.question)
        assert c.following and shown == LIVE_SCRIPT[walked[-1] + 1]
    assert walked == list(range(len(LIVE_SCRIPT) - 1))  # from the class's first screen, every item once
    question = LIVE_SCRIPT.index(("question", QUESTIONS.index(next(q for q in QUESTIONS if q.exercise == 2))))
    shown = show_me(reveal(ask(a_class(), LIVE_SCRIPT[question][1])))  # the Explorer after "show me"
    assert script_position(shown) == question and next_in_script(shown).question == LIVE_SCRIPT[question + 1][1]
    assert next_in_script(show_step(a_class(), len(TOUR) - 1)).step == 0  # off the script: its start


def test_every_refusal_has_its_message_in_both_languages():
    """Each ``Refused(key)`` the class and its stores raise is a catalog message (read from the source)."""
    keys = {call.args[0].value for path in ("ui/live_class.py", "server/class_store.py")
            for call in ast.walk(ast.parse((ROOT / path).read_text())) if isinstance(call, ast.Call)
            and getattr(call.func, "id", None) == "Refused" and isinstance(call.args[0], ast.Constant)}
    assert len(keys) >= 10
    for lang in ("en", "zh"):
        assert all(Text(lang)(key) != key for key in keys), lang


def test_the_record_survives_its_json():
    c = lock(answer(a_class(), STUDENTS[0], QUESTIONS[0].answer))
    assert from_json(as_json(c)) == c
    again = answer(vote_again(c), STUDENTS[1], QUESTIONS[0].answer)
    assert from_json(as_json(again)) == again
    predicted = answer(ask(again, ASKABLE.index(NUMBERS[1])), STUDENTS[2], "40")  # a number, its value, both rounds
    assert from_json(json.loads(json.dumps(as_json(predicted)))) == predicted
    kept = as_json(ask(again, 3))  # as the version before kept it (no round's right answer, no value, no first)
    kept = {k: v for k, v in kept.items() if k not in ("round", "first", "value")} | {
        "results": [result[:3] for result in kept["results"]]}
    assert from_json(kept).results == ask(again, 3).results


def test_voting_again_keeps_the_first_round_shows_each_seat_its_own_and_counts_the_second_afresh():
    q = QUESTIONS[3]
    wrong = next(choice for choice in q.choices if choice != q.answer)
    c = ask(a_class(), 3)
    for student, choice in zip(STUDENTS, (q.answer, wrong, wrong), strict=False):
        c = answer(c, student, choice)
    c = close(c)
    again = vote_again(c, timer=20, now=NOW)
    assert (again.round, again.phase, again.answers, again.asked > c.asked) == (2, "open", {}, True)
    assert again.version == c.version + 1 and again.closes_at == NOW + 20  # every phone follows, timed as asked
    assert [student_state(again, s, NOW)["first"] for s in STUDENTS[:4]] == [q.answer, wrong, wrong, None]
    assert student_state(again, STUDENTS[0], NOW)["round"] == 2 and student_state(c, STUDENTS[0])["round"] == 1
    for student in STUDENTS[1:4]:  # two change their minds, one newcomer answers; the first does not vote again
        again = answer(again, student, q.answer, NOW)
    first, second = rounds(again)
    assert (first.question, first.round, dict(first.counts)) == (3, 1, counts(c))
    assert (second.question, second.round, dict(second.counts)) == (3, 2, {q.answer: 3, wrong: 0})
    assert summary(again)[-2:] == (first, second) and len(summary(again)) == len(summary(c)) + 1
    revealed = reveal(again)
    assert rounds(revealed) == (first, second)
    nxt = ask(revealed, 4)  # the next question: one round again, its seats' first answers gone
    assert (nxt.round, nxt.first, rounds(nxt)[0].round) == (1, {}, 1) and summary(nxt)[-3:-1] == (first, second)
    assert rounds(start(new_code(), new_key(), "en")) == ()


class AnyOrder(RuleBasedStateMachine):
    """Teacher and phones acting in any order: the counts are always the distinct seats that answered the
    current question, never above the class's seats; a locked class gains no seat."""

    def __init__(self):
        super().__init__()
        self.c = start(new_code(), new_key(), "en")
        self.now = NOW

    @rule(student=st.sampled_from(STUDENTS), later=st.floats(0, 90))
    def joins(self, student, later):
        self.now += later
        before = self.c
        try:
            self.c = join(self.c, student, self.now, 6)
        except Refused as refused:
            assert (refused.key, len(self.c.seats)) == ("class.full", 6) or (refused.key, self.c.locked) == (
                "class.locked", True)
        assert set(self.c.seats) == set(before.seats) or not before.locked and student not in before.seats

    @rule(answers=st.lists(st.tuples(st.sampled_from(STUDENTS), st.integers(0, 2)), max_size=12))
    def answers(self, answers):  # several at a time, as a class answers in a burst
        choices = QUESTIONS[self.c.question].choices
        for student, pick in answers:
            try:
                self.c = answer(self.c, student, choices[pick % len(choices)])
            except Refused as refused:
                assert refused.key in ("class.not_seated", "class.question_closed", "class.paused")

    @rule(locked=st.booleans())
    def locks(self, locked):
        self.c = lock(self.c, locked)

    @rule(paused=st.booleans())
    def pauses(self, paused):
        self.c = pause(self.c, paused)

    @rule()
    def removes_the_recent(self):
        before, self.c = self.c, remove_recent(self.c, self.now)
        assert all(self.now - joined > RECENT_SECONDS for joined in self.c.seats.values())
        assert {s: t for s, t in before.seats.items() if self.now - t > RECENT_SECONDS} == self.c.seats

    @rule(question=st.integers(0, len(QUESTIONS) - 1))
    def asks(self, question):
        self.c = ask(self.c, question)

    @rule()
    def closes(self):
        self.c = close(self.c)

    @rule()
    def reveals(self):
        self.c = reveal(self.c)

    @invariant()
    def counts_are_the_distinct_seats_that_answered(self):
        tally = counts(self.c)
        assert sum(tally.values()) == len(self.c.answers) <= len(self.c.seats) <= 6
        assert set(self.c.answers) <= set(self.c.seats)
        assert all(n >= 0 for n in tally.values())


TestAnyOrder = AnyOrder.TestCase


@pytest.mark.parametrize("view", [{}, {"norm_kind": "layernorm"}, {"placement": "pre", "scenario": "confirmed"}])
def test_a_numeric_prediction_is_answered_by_the_engine_on_the_classs_view_and_takes_whole_numbers_in_bounds(view):
    collapse, growth = (ASKABLE.index(q) for q in NUMBERS)
    c = ask(show_view(a_class(), view), collapse)
    shown = view_state(tuple(sorted(view.items())))
    assert c.value == engine_number(NUMBERS[0], shown) and right_answer(c) == str(c.value)
    assert ask(c, growth).value == engine_number(NUMBERS[1], shown)
    for typed, kept in ((" 3 ", "3"), ("07", "7"), ("24", "24"), ("1", "1")):
        assert answer(c, STUDENTS[0], typed).answers[STUDENTS[0]] == kept
    for bad in ("0", "25", "-3", "3.5", "3e1", "", "三", "1" * 7, "٣", "2 4"):
        with pytest.raises(Refused) as refused:
            answer(c, STUDENTS[0], bad)
        assert refused.value.key == "class.bad_number", bad
    for student, typed in zip(STUDENTS, ("5", str(c.value), "5", "2"), strict=False):
        c = answer(c, student, typed)
    (result,) = rounds(c)
    assert [int(n) for n, _ in result.counts] == sorted({5, c.value, 2})  # rising
    assert dict(result.counts)[str(c.value)] >= 1 and result.answer == str(c.value)
    assert result.share_right() == dict(result.counts)[str(c.value)] / 4


def test_the_engines_values_are_the_lessons_and_a_value_the_engine_does_not_show_cannot_be_asked(monkeypatch):
    collapse, growth = NUMBERS
    lesson = view_state(())
    assert engine_number(collapse, lesson) == int(lesson_facts()["collapse_block"]) == 3  # the course's block 3
    norm_off = explore(ExplorerState(norm=False, depth=24)).readouts
    ratio = float((norm_off.action_norm[-1] / norm_off.action_norm[0]).min())
    assert 10 ** engine_number(growth, lesson) <= ratio < 10 ** (engine_number(growth, lesson) + 1)
    assert collapse.number.fact(explore(ExplorerState(depth=24)).readouts) is None  # intact: nothing collapses
    monkeypatch.setattr(live_class, "engine_number", lambda question, view: None)  # (a view that shows none)
    with pytest.raises(Refused) as refused:
        ask(a_class(), ASKABLE.index(collapse))
    assert refused.value.key == "class.no_number"
