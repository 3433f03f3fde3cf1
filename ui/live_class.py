"""A live class (issue #36) as a small frozen record and the pure changes a teacher and students make
to it: what the projector leads with (a tour step, an Explorer view, a question), each student's one
answer per question, and the class's counts. No store and no Streamlit here: ``server.class_store``
keeps the record and applies these changes atomically."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .controls import BY_KEY, CODE_ALPHABET, CODE_LENGTH, CONTROLS, INSTANT, ExplorerState, explorer_query
from .lessons import LIVE_SCRIPT, QUESTIONS, TOUR

ACTIVITIES = ("tour", "explorer", "question")
EXPLORER_KEYS = {control.key for control in CONTROLS}
ANSWERS_PER_ADDRESS = 2  # answers counted per client address and question: two students may share one
STUDENTS_PER_CLASS = 200


class Refused(Exception):
    """A change the class does not take; ``key`` is the catalog's message for it."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


@dataclass(frozen=True)
class Answer:
    choice: str
    address: str  # the client address it came from (the per-address limit)


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
    question: int = 0  # index into ui.lessons.QUESTIONS
    asked: int = 0  # the version the question was asked at: asked again, it is a new question
    phase: str = "open"  # a question's: "open" (answering), "closed" (answers kept, none taken), "revealed"
    following: bool = True  # False: students explore on their own
    students: frozenset[str] = frozenset()
    answers: dict[str, Answer] = field(default_factory=dict)  # the current question's, by student
    refused: int = 0  # the current question's answers not counted (the per-address limit)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_key() -> str:
    """A teacher's key: 192 random bits (32 characters), never sent to a student's page."""
    return secrets.token_urlsafe(24)


def new_student() -> str:
    """A student's token (96 random bits): one answer per token and question, however often re-sent."""
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


def teacher_view(c: LiveClass, token: str) -> str | None:
    """What may change on the teacher's page, which polls with its token (:func:`teacher_token`): the
    version, how many students are in, have answered and were refused. ``None`` for any other token."""
    if hmac.compare_digest(token, teacher_token(c)):
        return f"{c.version}/{len(c.students)}/{len(c.answers)}/{c.refused}"
    return None


def join(c: LiveClass, student: str, most: int = STUDENTS_PER_CLASS) -> LiveClass:
    """``student`` in the class (joining again changes nothing)."""
    if BY_KEY["me"].parse(student) is None:
        raise Refused("class.bad_link")
    if student in c.students:
        return c
    if len(c.students) >= most:
        raise Refused("class.full")
    return replace(c, students=c.students | {student})


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


def ask(c: LiveClass, question: int) -> LiveClass:
    """Question ``question`` open, with no answers yet."""
    if not 0 <= question < len(QUESTIONS):
        raise Refused("class.bad_question")
    return _led(c, activity="question", question=question, asked=c.version + 1, phase="open", following=True,
                answers={}, refused=0)


def close(c: LiveClass) -> LiveClass:
    return _led(c, phase="closed") if c.activity == "question" and c.phase == "open" else c


def reveal(c: LiveClass) -> LiveClass:
    return _led(c, phase="revealed") if c.activity == "question" else c


def show_me(c: LiveClass) -> LiveClass:
    """The revealed question's Explorer view on every screen."""
    if c.activity != "question" or c.phase != "revealed":
        raise Refused("class.not_revealed")
    return show_view(c, explorer_query(QUESTIONS[c.question].show_me))


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


def answer(c: LiveClass, student: str, address: str, choice: str,
           per_address: int = ANSWERS_PER_ADDRESS) -> LiveClass:
    """``student``'s answer to the open question (a new choice replaces theirs). A student not yet
    counted is refused when ``per_address`` students from ``address`` already are: the class then
    counts one more refused answer, and the student is not in its ``answers``."""
    if student not in c.students:
        raise Refused("class.not_joined")
    if c.activity != "question" or c.phase != "open":
        raise Refused("class.question_closed")
    if choice not in QUESTIONS[c.question].choices:
        raise Refused("class.bad_choice")
    if student in c.answers:
        return replace(c, answers={**c.answers, student: Answer(choice, c.answers[student].address)})
    if sum(a.address == address for a in c.answers.values()) >= per_address:
        return replace(c, refused=c.refused + 1)
    return replace(c, answers={**c.answers, student: Answer(choice, address)})


def counts(c: LiveClass) -> dict[str, int]:
    """The current question's answers by choice, in the question's order of choices."""
    tally = Counter(a.choice for a in c.answers.values())
    return {choice: tally[choice] for choice in QUESTIONS[c.question].choices}


def view_state(view: Iterable[tuple[str, str]], projector: bool = False, phone: bool = False) -> ExplorerState:
    """The Explorer's state on a class's view (its URL's pairs, read as any link's)."""
    values = {key: BY_KEY[key].parse(raw) for key, raw in view if key in EXPLORER_KEYS}
    return ExplorerState(**{k: v for k, v in values.items() if v is not None}, projector=projector, phone=phone)


def student_state(c: LiveClass, me: str) -> dict | None:
    """What the page of student ``me`` shows of the class (``ui/student/``), as JSON values; ``None`` for
    anyone not in it. The Explorer's view is the instant controls' values and the sentence's side."""
    if me not in c.students:
        return None
    view, mine = view_state(c.view), c.answers.get(me)
    return {"version": c.version, "activity": c.activity, "step": c.step, "question": c.question, "asked": c.asked,
            "phase": c.phase, "following": c.following, "scenario": view.scenario,
            "view": {control.key: getattr(view, control.key) for control in INSTANT},
            "mine": mine.choice if mine else None}


def as_json(c: LiveClass) -> dict:
    """The record as JSON values (a store keeps it so)."""
    return {"code": c.code, "teacher": c.teacher, "lang": c.lang, "version": c.version, "activity": c.activity,
            "step": c.step, "view": [list(pair) for pair in c.view], "question": c.question, "asked": c.asked,
            "phase": c.phase,
            "following": c.following, "students": sorted(c.students),
            "answers": {s: [a.choice, a.address] for s, a in sorted(c.answers.items())}, "refused": c.refused}


def from_json(value: dict) -> LiveClass:
    return LiveClass(**{**value, "view": tuple(tuple(pair) for pair in value["view"]),
                        "students": frozenset(value["students"]),
                        "answers": {s: Answer(*a) for s, a in value["answers"].items()}})
