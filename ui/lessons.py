"""The course's tour, exercises, checklist and teacher presets, as data.

Every text comes from the catalogs under keys derived from the ids; every figure and "show me"
is an Explorer view (control key -> value, the rest at defaults), so a teacher-facing change is a
change to these tables, rendered by generic pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from blockstab.scenario import LESSON, Scenario

from .controls import ExplorerState


@dataclass(frozen=True)
class TourStep:
    """One stage of the action token's journey; ``figure`` names the view that shows it."""

    id: str
    figure: str  # "tokens" | "block" | "depth" | "readouts"
    view: dict = field(default_factory=dict)

    def state(self, projector: bool = False, example: Scenario = LESSON) -> ExplorerState:
        return ExplorerState(**self.view, projector=projector, example=example)


@dataclass(frozen=True)
class Question:
    """Predict, then reveal: one correct choice, an explanation, and a view that shows it."""

    id: str
    exercise: int
    choices: tuple[str, ...]
    answer: str
    show_me: dict

    def choice_key(self, choice: str) -> str:
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
    Question("drop_input", 1, ("overwrite", "too_small", "nothing"), "overwrite", RESIDUAL_OFF),
    Question("range", 1, ("unstable", "fixed_by_residual", "sharper"), "unstable", NORM_OFF),
    Question("role", 1, ("smarter", "hold"), "hold", {"depth": 100}),
    Question("lost_object", 2, DEVICES, "residual", RESIDUAL_OFF),
    Question("one_axis", 2, DEVICES, "normalization", {"norm": False, "depth": 3, "focus": "ffn_residual"}),
    Question("both_scenarios", 2, DEVICES, "residual", {"residual": False, "depth": 24, "scenario": "both"}),
    Question("size_swings", 2, DEVICES, "normalization", {"norm": False, "depth": 100}),
)

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
