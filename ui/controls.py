"""The Explorer's controls, declared once: the page renders them and the URL binds to them.

Each control's ``key`` is both its Streamlit widget key and its URL query parameter, so a shared
link reproduces the view. :func:`check_query` explains any URL value the app had to ignore.
The example sentence (``sc``) is not a widget: pages read it with ``widgets.chrome.active_example``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from blockstab.ablations import INCIDENT, NORM_OFF, SCOPES
from blockstab.block import PLACEMENTS, RESIDUAL_SCALES
from blockstab.init import INIT_SCHEMES
from blockstab.lab import COMPARISONS, HEAD_COUNTS, MAX_LAB_DEPTH, MAX_SEED, TOKEN_COUNTS, WIDTHS
from blockstab.papers import PAPERS
from blockstab.pretrained import DEPTH, sentence_problem
from blockstab.scenario import LESSON, Scenario, decode, encode
from blockstab.sublayers import NORM_KINDS

INTEGER = re.compile(r"[0-9]{1,6}")
TOUR_STEPS = 8  # the guided tour's length (ui.lessons.TOUR, which imports this module)
STAGE_FOCUS = ("attention", "attention_residual", "attention_norm", "feed_forward", "ffn_residual", "ffn_norm")
MAX_EXPLORER_DEPTH = 100


@dataclass(frozen=True)
class Control:
    key: str
    kind: str  # "toggle" | "choice" | "keys" | "int" | "steps" (an int from ``options``) | "example" | "text"
    #          | "pattern" (a string matching the regular expression ``options[0]``)
    default: object
    options: tuple = ()
    low: int = 0
    high: int = 0
    primary: bool = False  # shown above the figures in projector mode
    instant: bool = False  # drawn by the instant Explorer in the browser (ui/explorer/), not by Streamlit
    under_block: bool = False  # the instant Explorer draws it under the block view, whose block or stage it picks
    at_most: str | None = None  # the control whose value bounds the one shown (a block past the stack: its last)

    def parse(self, raw: str):
        """The typed value for a URL string, or ``None`` when the string is not allowed."""
        if self.kind == "toggle":
            return {"true": True, "false": False}.get(raw.lower())  # as Streamlit's binding: no spaces
        if self.kind == "choice":
            return raw if raw in self.options else None
        if self.kind == "keys":
            keys = tuple(k for k in raw.split(",") if k)
            return keys if keys and all(k in self.options for k in keys) else None
        if self.kind == "example":
            example = decode(raw)
            return example if isinstance(example, Scenario) else None
        if self.kind == "text":
            return None if sentence_problem(raw) else raw
        if self.kind == "pattern":
            return raw if re.fullmatch(self.options[0], raw) else None
        if not INTEGER.fullmatch(raw):  # ASCII digits only: int() would take "²", "٣", "1_0", " 5"
            return None
        value = int(raw)
        if self.kind == "steps":
            return value if value in self.options else None
        return value if self.low <= value <= self.high else None

    def accepts(self, value) -> bool:
        """Whether ``value``, typed as a browser reports it (JSON), is one this control can take."""
        if self.kind == "toggle":
            return isinstance(value, bool)
        if self.kind == "choice":
            return isinstance(value, str) and value in self.options
        if self.kind == "int":
            return type(value) is int and self.low <= value <= self.high
        return False

    def format(self, value) -> str:
        """The URL string for a value (inverse of :meth:`parse`)."""
        if self.kind == "toggle":
            return "true" if value else "false"
        if self.kind == "keys":
            return ",".join(value)
        if self.kind == "example":
            return encode(value)
        return str(value)


CONTROLS = (
    Control("scenario", "choice", "both", ("both", "confirmed", "not_confirmed"), primary=True),
    Control("residual", "toggle", True, primary=True, instant=True),
    Control("norm", "toggle", True, primary=True, instant=True),
    Control("norm_kind", "choice", "rmsnorm", ("rmsnorm", "layernorm"), instant=True),
    Control("placement", "choice", "post", ("post", "pre"), instant=True),
    Control("depth", "int", 24, low=1, high=MAX_EXPLORER_DEPTH, primary=True, instant=True),
    Control("block", "int", 1, low=1, high=MAX_EXPLORER_DEPTH, instant=True, under_block=True, at_most="depth"),
    Control("focus", "choice", "attention_residual", STAGE_FOCUS, instant=True, under_block=True),
)
INSTANT = tuple(c for c in CONTROLS if c.instant)  # the controls the Explorer switches in the browser
# Shown on every page by the router; ``lang`` defaults to the browser's language.
APP_CONTROLS = (
    Control("lang", "choice", None, ("en", "zh")),
    Control("projector", "toggle", False),
)
# ``show`` hides every Explorer control not listed (a teacher's classroom link);
# ``step`` is the guided tour's step; ``part`` the part of the lesson a phone's page (/study) shows.
PAGE_CONTROLS = (
    Control("show", "keys", None, tuple(c.key for c in CONTROLS)),
    Control("step", "int", 1, low=1, high=TOUR_STEPS),
    Control("part", "choice", "tour", ("tour", "explorer", "exercises")),
)
# The Depth lab's own controls (prefixed: one URL carries one page's parameters, but the keys
# share one namespace). ``lab_show`` picks the user's stack or a paper preset.
LAB_CONTROLS = (
    Control("lab_show", "choice", "stack", ("stack", *PAPERS)),
    Control("lab_compare", "choice", "stabilisers", COMPARISONS),
    Control("lab_width", "steps", 64, WIDTHS),
    Control("lab_tokens", "steps", 32, TOKEN_COUNTS),
    Control("lab_heads", "steps", 4, HEAD_COUNTS),
    Control("lab_depth", "int", 48, low=1, high=MAX_LAB_DEPTH),
    Control("lab_init", "choice", "bert", INIT_SCHEMES),
    Control("lab_seed", "int", 0, low=0, high=MAX_SEED),
    Control("lab_placement", "choice", "pre", PLACEMENTS),
    Control("lab_norm", "choice", "layernorm", NORM_KINDS),
    Control("lab_residual", "toggle", True),
    Control("lab_scale", "choice", "one", RESIDUAL_SCALES),
    Control("lab_gradients", "toggle", True),
)
# The Real model page's controls: the sentence, each stabiliser on, off in every block or in one,
# that block, and what "LayerNorm off" leaves (the identity, or its gain and bias).
REAL_CONTROLS = (
    Control("real_text", "text", INCIDENT),
    Control("real_residual", "choice", "on", SCOPES),
    Control("real_norm", "choice", "on", SCOPES),
    Control("real_layer", "int", 1, low=1, high=DEPTH),
    Control("real_norm_off", "choice", "identity", tuple(NORM_OFF)),
)
# A live class's links (ui.live_class): its code, six characters without look-alikes (0/O/Q, 1/I/L,
# 2/Z, 5/S, 8/B, U/V); a student's token (``me``, kept in the student's join link); the teacher's key.
CODE_ALPHABET = "ACDEFGHJKMNPRTWXY34679"
CODE_LENGTH = 8
CLASS_CONTROLS = (
    Control("class", "pattern", None, (f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}",)),
    Control("me", "pattern", None, ("[A-Za-z0-9_-]{16}",)),
    Control("key", "pattern", None, ("[A-Za-z0-9_-]{32}",)),
)
# ``sc`` is the example sentence every page computes on (blockstab.scenario: a preset's id or a
# versioned payload); absent, the lesson's sentence.
EXAMPLE = Control("sc", "example", LESSON)
BY_KEY = {c.key: c for c in (*CONTROLS, *APP_CONTROLS, *PAGE_CONTROLS, *LAB_CONTROLS, *REAL_CONTROLS, *CLASS_CONTROLS,
                                EXAMPLE)}


def explorer_query(view: dict, **extra) -> dict[str, str]:
    """URL parameters that open the Explorer on ``view`` (control key -> value); defaults left out."""
    query = {k: BY_KEY[k].format(v) for k, v in view.items() if v != BY_KEY[k].default}
    return {**query, **{k: BY_KEY[k].format(v) for k, v in extra.items() if v is not None}}


@dataclass(frozen=True)
class ExplorerState:
    scenario: str = "both"
    residual: bool = True
    norm: bool = True
    norm_kind: str = "rmsnorm"
    placement: str = "post"
    depth: int = 24
    block: int = 1
    focus: str = "attention_residual"
    projector: bool = False
    phone: bool = False  # a phone's browser (its User-Agent says so): subplots one under another
    example: Scenario = LESSON  # the sentence the stack runs on

    @property
    def scenarios(self) -> tuple[str, ...]:
        return ("confirmed", "not_confirmed") if self.scenario == "both" else (self.scenario,)

    @property
    def norm_used(self) -> str:
        return self.norm_kind if self.norm else "none"

    @property
    def shown_block(self) -> int:
        """The block to look inside, never past the stack's depth (the control table's bound, which the
        browser reads from the bundle's index too)."""
        return min(self.block, getattr(self, BY_KEY["block"].at_most))


def check_query(query: dict[str, str]) -> list[tuple[str, str]]:
    """(parameter, value) pairs of the URL that the app cannot use; unknown keys included."""
    return [(key, raw) for key, raw in query.items() if key not in BY_KEY or BY_KEY[key].parse(raw) is None]
