"""The course's tour, exercises, checklist and teacher presets, as data.

Every text comes from the catalogs under keys derived from the ids; every figure and "show me"
is an Explorer view (control key -> value, the rest at defaults), so a teacher-facing change is a
change to these tables, rendered by generic pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache

import numpy as np

from blockstab.lesson import lesson_params
from blockstab.scenario import LESSON, Scenario

from .controls import ExplorerState
from .numbers import readable
from .views import explore


def collapse_block(readouts) -> int | None:
    """The first block after which every sentence's tokens are one point (``None``: none in the stack)."""
    blocks = np.nonzero(np.all(readouts.distinct_tokens == 1, axis=1))[0]
    return int(blocks[0]) if blocks.size else None


def growth_power(readouts) -> int | None:
    """The power of ten of the action token's growth over the stack, the least of its sentences' (``None``: it
    did not grow, or overflowed)."""
    ratio = float((readouts.action_norm[-1] / readouts.action_norm[0]).min())
    return int(np.floor(np.log10(ratio))) if np.isfinite(ratio) and ratio >= 1 else None


@dataclass(frozen=True)
class Number:
    """A numeric prediction's answer: a whole number typed on the phone, from ``low`` to ``high`` (``unit``, a
    catalog key), right when it is ``fact`` of the engine's readouts on the class's view."""

    unit: str
    low: int
    high: int
    fact: Callable


@dataclass(frozen=True)
class TourStep:
    """One stage of the action token's journey; ``figure`` names the view that shows it."""

    id: str
    figure: str  # "tokens" | "block" | "depth" | "readouts"
    view: dict = field(default_factory=dict)

    def state(self, projector: bool = False, example: Scenario = LESSON, phone: bool = False) -> ExplorerState:
        return ExplorerState(**self.view, projector=projector, phone=phone, example=example)


@dataclass(frozen=True)
class Question:
    """Predict, then reveal: one correct choice, an explanation, and a view that shows it. A live class's quick
    poll (``exercise`` 0) is a question the teacher asks aloud: its choices only, none right, nothing to show. A
    live class's numeric prediction (``exercise`` 3) has a ``number`` instead of choices: its answer is the
    engine's on the class's view (:func:`engine_number`)."""

    id: str
    exercise: int
    choices: tuple[str, ...]
    answer: str | None
    show_me: dict
    number: Number | None = None

    @property
    def explained(self) -> bool:
        """Whether it has a right answer, and so an explanation (a poll has neither)."""
        return self.answer is not None or self.number is not None

    def choice_key(self, choice: str) -> str:
        if self.exercise == 0:
            return f"poll.{choice}"
        return f"device.{choice}" if self.exercise == 2 else f"ex.{self.id}.choice.{choice}"


@dataclass(frozen=True)
class Demonstration:
    """A checklist item or a teacher preset: a sentence and the Explorer view that proves it."""

    id: str
    view: dict


TOUR = (
    TourStep("sentence", "tokens"),
    TourStep("attention", "block", {"focus": "attention"}),
    TourStep("feed_forward", "block", {"focus": "feed_forward"}),
    TourStep("residual", "block", {"focus": "attention_residual"}),
    TourStep("normalization", "block", {"focus": "attention_norm"}),
    TourStep("repeat", "depth", {"depth": 24}),
    TourStep("no_residual", "depth", {"depth": 24, "residual": False}),
    TourStep("no_norm", "readouts", {"depth": 24, "norm": False}),
)

DEVICES = ("residual", "normalization")
RESIDUAL_OFF = {"residual": False, "depth": 24}
NORM_OFF = {"norm": False, "depth": 24}

QUESTIONS = (
    # Choices in a fixed order per question (a class sees the same), the answer never first or longest by rule.
    Question("drop_input", 1, ("too_small", "overwrite", "nothing"), "overwrite", RESIDUAL_OFF),
    Question("range", 1, ("fixed_by_residual", "sharper", "unstable"), "unstable", NORM_OFF),
    Question("role", 1, ("smarter", "hold"), "hold", {"depth": 100}),
    Question("lost_object", 2, DEVICES, "residual", RESIDUAL_OFF),
    Question("one_axis", 2, DEVICES, "normalization", {"norm": False, "depth": 3, "focus": "ffn_residual"}),
    Question("both_scenarios", 2, DEVICES, "residual", {"residual": False, "depth": 24, "scenario": "both"}),
    Question("size_swings", 2, DEVICES, "normalization", {"norm": False, "depth": 100}),
)

POLLS = (
    Question("poll_letters", 0, ("a", "b", "c", "d"), None, {}),
    Question("poll_agree", 0, ("agree", "disagree"), None, {}),
)
NUMBERS = (
    Question("collapse_at", 3, (), None, RESIDUAL_OFF, Number("class.unit.block", 1, 24, collapse_block)),
    Question("growth_power", 3, (), None, NORM_OFF, Number("class.unit.power_of_ten", 0, 100, growth_power)),
)
# What a live class asks: the lesson's questions (their numbers), the quick polls, the numeric predictions.
ASKABLE = QUESTIONS + POLLS + NUMBERS


def engine_number(question: Question, view: ExplorerState) -> int | None:
    """A numeric prediction's answer: its fact of the engine's readouts on ``view`` (the class's) with the
    question's own settings (``None``: the stack does not show it there)."""
    return question.number.fact(explore(replace(view, **question.show_me)).readouts)

# The ten-minute script (For teachers) as a live class runs it, one item per "Next": tour steps 1-6, then
# Exercise 2's questions (each revealed, and shown in the Explorer, as the teacher chooses).
LIVE_SCRIPT = (*(("tour", n) for n in range(6)),
               *(("question", n) for n, q in enumerate(QUESTIONS) if q.exercise == 2))

CHECKLIST = (
    Demonstration("residual_keeps", RESIDUAL_OFF),
    Demonstration("norm_tidies", NORM_OFF),
    Demonstration("block_parts", {"focus": "ffn_norm"}),
)

PRESETS = (
    Demonstration("course_table", {"depth": 1, "focus": "attention_residual"}),
    Demonstration("stable", {"depth": 24}),
    Demonstration("collapse", RESIDUAL_OFF),
    Demonstration("runaway", NORM_OFF),
    Demonstration("layernorm_2d", {"norm_kind": "layernorm", "depth": 3, "focus": "attention_norm"}),
    Demonstration("pre_ln", {"placement": "pre", "depth": 100}),
)


@cache
def lesson_facts() -> dict[str, str]:
    """The numbers the lesson's prose quotes (tour, exercises, teachers' script), computed by the
    engine on the lesson's sentence, so the words can never drift from the pictures."""
    def readouts(**view):
        return explore(ExplorerState(**view)).readouts

    growth = readouts(norm=False).action_norm
    ratio = float((growth[-1] / growth[0]).min())
    stable = {depth: readouts(depth=depth) for depth in (24, 100)}
    pre = readouts(placement="pre", depth=100).action_norm
    gains = np.linalg.norm(lesson_params().blocks[0].feed_forward.w_out, axis=1)  # each key's write strength
    return {
        "collapse_block": str(collapse_block(readouts(residual=False))),
        "growth_24": readable(ratio),
        "growth_per_block": readable(ratio ** (1 / 24), digits=2),
        "distinct_24": str(int(stable[24].distinct_tokens[-1].min())),
        "distinct_100": str(int(stable[100].distinct_tokens[-1].min())),
        "nearest_24": readable(float(stable[24].action_nearest_angle[-1].min()), digits=2),
        "nearest_100": readable(float(stable[100].action_nearest_angle[-1].min()), digits=2),
        "sentences_24": readable(float(stable[24].scenario_angle[-1]), digits=2),
        "pre_growth_100": readable(float((pre[-1] / pre[0]).max()), digits=2),
        "memory_keys": str(len(gains)),
        "strong_keys": str(int(np.sum(gains > gains.min()))),
    }
