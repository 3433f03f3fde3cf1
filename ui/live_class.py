"""A live class (issue #36) as a small frozen record and the pure changes a teacher and students make
to it: what the projector leads with (a tour step, an Explorer view, a question), its seats (one per phone
that joined: its token), each seat's one answer per question, and the class's counts. No store and no
Streamlit here: ``server.class_store`` keeps the record and applies these changes atomically."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .controls import BY_KEY, CODE_ALPHABET, CODE_LENGTH, CONTROLS, INSTANT, ExplorerState, explorer_query
from .lessons import ASKABLE, LIVE_SCRIPT, TOUR, engine_number

ACTIVITIES = ("tour", "explorer", "question")
EXPLORER_KEYS = {control.key for control in CONTROLS}
RECENT_SECONDS = 60  # "remove the recent joins": the seats that joined this long ago or less
TIMER_SECONDS = (5, 600)  # a question's countdown: at least, at most


class Refused(Exception):
    """A change the class does not take; ``key`` is the catalog's message for it."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


@dataclass(frozen=True)
class Result:
    """One question's round as the class answered it: how many seats chose each choice, or typed each number
    (nothing of who), and the right one (``None``: a poll)."""

    question: int  # index into ui.lessons.ASKABLE
    round: int
    counts: tuple[tuple[str, int], ...]  # (choice, seats), in the question's order of choices (numbers: rising)
    answer: str | None = None

    @property
    def answered(self) -> int:
        return sum(n for _, n in self.counts)

    def share_right(self) -> float | None:
        """The share of the answers that are the right one (``None``: no answer, or a poll: none is right)."""
        return dict(self.counts).get(self.answer, 0) / self.answered if self.answered and self.answer else None


@dataclass(frozen=True)
class LiveClass:
    """A class's state. ``version`` grows at every change a student's page follows (not at an answer:
    a class of 40 answering does not make 40 pages redraw 40 times)."""

    code: str
    teacher: str  # the SHA-256 of the teacher's key: the key itself is never kept
    lang: str  # the teacher's language, a student's default
    version: int = 0
    activity: str = "tour"
    step: int = 0  # the tour's step (index into ui.lessons.TOUR)
    view: tuple[tuple[str, str], ...] = ()  # the Explorer view, as its URL's query pairs
    question: int = 0  # index into ui.lessons.ASKABLE
    asked: int = 0  # the version the question was asked at: asked again, it is a new question
    phase: str = "open"  # a question's: "open" (answering), "closed" (answers kept, none taken), "revealed"
    round: int = 1  # the question's round: 2 once the class votes again
    value: int | None = None  # a numeric prediction's answer: the engine's on the class's view when asked
    timer: int = 0  # the open question's countdown, in seconds (0: none)
    closes_at: float = 0.0  # when that countdown ends (the server's clock, s): the question is closed from then
    following: bool = True  # False: students explore on their own
    locked: bool = False  # no new seat (a seat's phone that reloads stays in)
    paused: bool = False  # every phone shows "look at the projector" (and takes no answer) until resumed
    seats: dict[str, float] = field(default_factory=dict)  # each phone's token -> when it joined (server's clock, s)
    answers: dict[str, str] = field(default_factory=dict)  # the current question's choice, by seat
    first: dict[str, str] = field(default_factory=dict)  # in round 2, each seat's choice in round 1
    results: tuple[Result, ...] = ()  # the questions asked before the current one, as answered
    ended: bool = False  # the teacher ended it: no phone is in it, its summary is kept until it expires


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_key() -> str:
    """A teacher's key: 192 random bits (32 characters), never sent to a student's page."""
    return secrets.token_urlsafe(24)


def new_student() -> str:
    """A seat's token (96 random bits): one answer per seat and question, however often re-sent."""
    return secrets.token_urlsafe(12)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def start(code: str, key: str, lang: str) -> LiveClass:
    return LiveClass(code=code, teacher=key_hash(key), lang=lang)


def check_teacher(c: LiveClass, key: str) -> None:
    if not hmac.compare_digest(c.teacher, key_hash(key)):
        raise Refused("class.not_teacher")


def teacher_token(c: LiveClass) -> str:
    """The token the teacher's pages poll the class with (a student's is random): a prefix of the key's
    hash, which reads what the projector shows and acts on nothing."""
    return c.teacher[:16]


def teacher_view(c: LiveClass, token: str, now: float = 0.0) -> str | None:
    """What may change on the teacher's page, which polls with its token (:func:`teacher_token`): the
    version, how many seats there are, how many answered, whether joining is locked, the question's phase at
    ``now`` (its timer ran out). ``None`` for any other token."""
    if hmac.compare_digest(token, teacher_token(c)):
        return f"{c.version}/{len(c.seats)}/{len(c.answers)}/{int(c.locked)}/{phase_at(c, now)}"
    return None


def join(c: LiveClass, seat: str, now: float, most: int) -> LiveClass:
    """A seat for the phone whose token is ``seat``, joined at ``now`` (its seat again: nothing changes, even
    when locked); at most ``most`` seats."""
    if BY_KEY["me"].parse(seat) is None:
        raise Refused("class.bad_link")
    if c.ended:
        raise Refused("class.ended")
    if seat in c.seats:
        return c
    if c.locked:
        raise Refused("class.locked")
    if len(c.seats) >= most:
        raise Refused("class.full")
    return replace(c, seats={**c.seats, seat: now})


def pause(c: LiveClass, paused: bool = True) -> LiveClass:
    """Every phone on "look at the projector" (``paused``), or back to what it had, its answer included."""
    return _led(c, paused=paused) if c.paused != paused else c


def lock(c: LiveClass, locked: bool = True) -> LiveClass:
    """Joining closed (``locked``) or open again: the seats stay as they are."""
    return replace(c, locked=locked)


def recent(c: LiveClass, now: float) -> list[str]:
    """The seats that joined in the last :data:`RECENT_SECONDS` before ``now``."""
    return [seat for seat, joined in c.seats.items() if now - joined <= RECENT_SECONDS]


def remove_recent(c: LiveClass, now: float) -> LiveClass:
    """The class without the seats of the last :data:`RECENT_SECONDS` (a burst of scripted joins) or their
    answers; their pages follow to "not in the class", the others' stay as they were."""
    gone = set(recent(c, now))
    if not gone:
        return c
    return _led(c, seats={s: t for s, t in c.seats.items() if s not in gone},
                answers={s: a for s, a in c.answers.items() if s not in gone},
                first={s: a for s, a in c.first.items() if s not in gone})


def _led(c: LiveClass, **change) -> LiveClass:
    """A change students follow."""
    return replace(c, version=c.version + 1, **change)


def show_step(c: LiveClass, step: int) -> LiveClass:
    if not 0 <= step < len(TOUR):
        raise Refused("class.bad_step")
    return _led(c, activity="tour", step=step, following=True)


def show_view(c: LiveClass, view: dict[str, str]) -> LiveClass:
    """The Explorer on ``view`` (its URL's query, checked where it is read, as any link's)."""
    return _led(c, activity="explorer", view=tuple(sorted(view.items())), following=True)


def ask(c: LiveClass, question: int, timer: int = 0, now: float = 0.0) -> LiveClass:
    """Question ``question`` open, with no answers yet; with a ``timer`` (seconds), closed by itself that long
    after ``now`` (the server's clock)."""
    if not 0 <= question < len(ASKABLE):
        raise Refused("class.bad_question")
    if not (timer == 0 or TIMER_SECONDS[0] <= timer <= TIMER_SECONDS[1]):
        raise Refused("class.bad_timer")
    value = None
    if ASKABLE[question].number:
        value = engine_number(ASKABLE[question], view_state(c.view))
        if value is None:
            raise Refused("class.no_number")
    return _led(c, activity="question", question=question, asked=c.version + 1, phase="open", round=1, value=value,
                following=True, answers={}, first={}, timer=timer, closes_at=now + timer if timer else 0.0,
                results=summary(c))


def vote_again(c: LiveClass, timer: int = 0, now: float = 0.0) -> LiveClass:
    """The question's second round (peer instruction), before its reveal: the first round kept as answered,
    each seat shown its first choice, every seat's vote taken afresh (``timer`` as for :func:`ask`)."""
    if c.activity != "question" or not c.asked or c.phase == "revealed" or c.round != 1:
        raise Refused("class.not_votable")
    return replace(ask(c, c.question, timer, now), round=2, first=dict(c.answers))


def current_result(c: LiveClass) -> Result | None:
    """The current question's round as answered so far (``None``: no question asked yet)."""
    if not c.asked:
        return None
    return Result(c.question, c.round, tuple(counts(c).items()), right_answer(c))


def right_answer(c: LiveClass) -> str | None:
    """The current question's right answer as a phone sends it: a choice, a number, or none (a poll)."""
    return str(c.value) if ASKABLE[c.question].number else ASKABLE[c.question].answer


def rounds(c: LiveClass) -> tuple[Result, ...]:
    """The current question's rounds as answered so far, the first first."""
    current = current_result(c)
    if current is None:
        return ()
    return (c.results[-1], current) if c.round == 2 else (current,)


def summary(c: LiveClass) -> tuple[Result, ...]:
    """Every question's round the class answered, in order, the current one last."""
    current = current_result(c)
    return c.results + ((current,) if current else ())


def end(c: LiveClass) -> LiveClass:
    """The class over: every phone is told, no seat is left; its summary is kept."""
    return _led(c, ended=True, seats={}, answers={}, first={}, results=summary(c), asked=0, activity="tour")


def phase_at(c: LiveClass, now: float) -> str:
    """The question's phase at ``now``: an open one whose timer has run out is closed."""
    return "closed" if c.phase == "open" and c.closes_at and now >= c.closes_at else c.phase


def close(c: LiveClass) -> LiveClass:
    return _led(c, phase="closed") if c.activity == "question" and c.phase == "open" else c


def reveal(c: LiveClass) -> LiveClass:
    return _led(c, phase="revealed") if c.activity == "question" else c


def show_me(c: LiveClass) -> LiveClass:
    """The revealed question's Explorer view on every screen."""
    if c.activity != "question" or c.phase != "revealed":
        raise Refused("class.not_revealed")
    if not ASKABLE[c.question].show_me:
        raise Refused("class.nothing_to_show")
    return show_view(c, explorer_query(ASKABLE[c.question].show_me))


def script_position(c: LiveClass) -> int:
    """Where the class is in :data:`~ui.lessons.LIVE_SCRIPT` (-1: not on it); the Explorer after a
    question's "show me" is still that question's place."""
    here = ("tour", c.step) if c.activity == "tour" else ("question", c.question) if c.asked else None
    return LIVE_SCRIPT.index(here) if here in LIVE_SCRIPT else -1


def next_in_script(c: LiveClass) -> LiveClass:
    """The script's next item for the class (its first, if the class is not on it)."""
    at = script_position(c) + 1
    if at >= len(LIVE_SCRIPT):
        raise Refused("class.script_done")
    activity, n = LIVE_SCRIPT[at]
    return show_step(c, n) if activity == "tour" else ask(c, n)


def explore_freely(c: LiveClass) -> LiveClass:
    return _led(c, following=False)


def follow_me(c: LiveClass) -> LiveClass:
    return _led(c, following=True)


def answer(c: LiveClass, seat: str, choice: str, now: float = 0.0) -> LiveClass:
    """``seat``'s answer to the open question at ``now``: counted once, a new choice replacing the seat's own
    until the question closes (by the teacher, or its timer)."""
    if seat not in c.seats:
        raise Refused("class.not_seated")
    if c.paused:
        raise Refused("class.paused")
    if c.activity == "question" and c.phase == "open" and phase_at(c, now) == "closed":
        raise Refused("class.time_up")
    if c.activity != "question" or c.phase != "open":
        raise Refused("class.question_closed")
    number = ASKABLE[c.question].number
    if number:
        typed = re.fullmatch(r"\s*(-?[0-9]{1,6})\s*", choice)
        if typed is None or not number.low <= int(typed[1]) <= number.high:
            raise Refused("class.bad_number")
        choice = str(int(typed[1]))
    elif choice not in ASKABLE[c.question].choices:
        raise Refused("class.bad_choice")
    return replace(c, answers={**c.answers, seat: choice})


def counts(c: LiveClass) -> dict[str, int]:
    """The current question's answers by choice, in the question's order of choices (numbers: each typed, rising)."""
    tally = Counter(c.answers.values())
    if ASKABLE[c.question].number:
        return {typed: tally[typed] for typed in sorted(tally, key=int)}
    return {choice: tally[choice] for choice in ASKABLE[c.question].choices}


def view_state(view: Iterable[tuple[str, str]], projector: bool = False, phone: bool = False) -> ExplorerState:
    """The Explorer's state on a class's view (its URL's pairs, read as any link's)."""
    values = {key: BY_KEY[key].parse(raw) for key, raw in view if key in EXPLORER_KEYS}
    return ExplorerState(**{k: v for k, v in values.items() if v is not None}, projector=projector, phone=phone)


def student_state(c: LiveClass, me: str, now: float = 0.0) -> dict | None:
    """What the page of seat ``me`` shows of the class at ``now`` (``ui/student/``), as JSON values; ``None``
    for anyone without a seat. The Explorer's view is the instant controls' values and the sentence's side;
    ``closes_in``: the seconds an open question's timer has left (``None``: no timer running); ``time_up``:
    the question was closed by its timer (not by the teacher); ``first``: in a second round, the seat's own
    choice in the first."""
    if me not in c.seats or c.ended:
        return None
    view, phase = view_state(c.view), phase_at(c, now)
    closes_in = round(c.closes_at - now, 1) if c.closes_at and phase == "open" else None
    return {"version": c.version, "activity": c.activity, "step": c.step, "question": c.question, "asked": c.asked,
            "phase": phase, "closes_in": closes_in, "time_up": c.phase == "open" and phase == "closed",
            "round": c.round, "first": c.first.get(me), "following": c.following, "paused": c.paused,
            "scenario": view.scenario,
            "view": {control.key: getattr(view, control.key) for control in INSTANT},
            "mine": c.answers.get(me)}


def as_json(c: LiveClass) -> dict:
    """The record as JSON values (a store keeps it so): its fields, the view's pairs and the results as lists."""
    return {**vars(c), "view": [list(pair) for pair in c.view],
            "results": [[r.question, r.round, [list(pair) for pair in r.counts], r.answer] for r in c.results]}


def from_json(value: dict) -> LiveClass:
    """The record :func:`as_json` made (or the version before it made: results without their right answer, then
    their question's)."""
    return LiveClass(**{**value, "view": tuple(tuple(pair) for pair in value["view"]),
                        "results": tuple(Result(q, n, tuple(tuple(pair) for pair in counted),
                                                answer[0] if answer else ASKABLE[q].answer)
                                         for q, n, counted, *answer in value["results"])})
