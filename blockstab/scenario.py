"""Your own example: a sentence of 2-D tokens with an action token and two contrasting contexts.

A :class:`Scenario` supplies only the embeddings; every layer still repeats the lesson's block
(``lesson.lesson_params``). Sentence A puts context A into the context slot, sentence B context
B, so the two sentences differ in that one token, as the lesson's "rollback confirmed / not
confirmed" do. A is the app's ``confirmed`` side and B its ``not_confirmed`` side (``SIDES``).

Anything a person typed, a link carried or a file held goes through :func:`parse` (table rows),
:func:`decode` (the URL form) or :func:`from_json` (a file). Each returns either a Scenario or a
list of :class:`Problem` records: codes and values, never English, so the app words them in the
reader's language. The limits keep the app safe and the pictures readable.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from .lesson import ACTION_TOKEN, AXES, CONTEXT_EMBEDDINGS, CONTEXT_TOKEN, SCENARIOS, SHARED_EMBEDDINGS, TOKENS

SIDES = SCENARIOS  # ("confirmed", "not_confirmed"): sentence A and sentence B
ROLES = ("plain", "action", "context_a", "context_b")
MIN_TOKENS, MAX_TOKENS = 2, 16  # tokens in one sentence (the two context rows count once)
MAX_ROWS = MAX_TOKENS + 1
MAX_LABEL = 40  # characters (code points) in a token or axis name
MAX_ABS = 10.0  # every coordinate lies in [-MAX_ABS, MAX_ABS]
MAX_NUMBER_TEXT = 32  # characters in a typed number
URL_VERSION = "v1"
MAX_URL = 6000  # characters of a ``sc=`` value, checked before decoding
SCHEMA = "blockstab.scenario"
FILE_VERSION = 1
MAX_FILE_BYTES = 16_384
# Unicode categories of the characters refused in text a user writes (a label here, a sentence of the trained
# model's): controls, format characters (bidi overrides, zero-width joiners and spaces, BOM), surrogates,
# private use, unassigned, line and paragraph separators.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
URL_ROLE = {"plain": "p", "action": "a", "context_a": "A", "context_b": "B"}
ROLE_OF_URL = {v: k for k, v in URL_ROLE.items()}


@dataclass(frozen=True)
class Token:
    label: str
    x: float
    y: float

    @property
    def vector(self) -> tuple[float, float]:
        return (self.x, self.y)


@dataclass(frozen=True)
class Scenario:
    """One example sentence. Positions (``context_slot``, ``action``) count in the full sentence."""

    axes: tuple[str, str]
    tokens: tuple[Token, ...]  # the shared tokens in sentence order, without the context token
    context_slot: int  # where the context token stands: 0 .. len(tokens)
    contexts: tuple[Token, Token]  # the context token in sentence A and in sentence B
    action: int  # the action token's position, never the context slot
    preset: str = ""  # a preset's id: its labels are ids the app's catalogs translate

    @property
    def length(self) -> int:
        return len(self.tokens) + 1

    def sentence(self, side: str) -> tuple[Token, ...]:
        context = self.contexts[SIDES.index(side)]
        return (*self.tokens[:self.context_slot], context, *self.tokens[self.context_slot:])

    def embeddings(self, sides=SIDES) -> np.ndarray:
        """Token embeddings ``(len(sides), length, 2)``, one sentence per side."""
        return np.array([[t.vector for t in self.sentence(s)] for s in sides], dtype=np.float64)

    def rows(self) -> list[dict]:
        """The editor's table: one row per token, the two context rows (A, B) at the slot."""
        rows = [{"label": t.label, "x": t.x, "y": t.y, "role": "plain"} for t in self.tokens]
        shared = [i for i in range(self.length) if i != self.context_slot]
        rows[shared.index(self.action)]["role"] = "action"
        a, b = ({"label": c.label, "x": c.x, "y": c.y, "role": role}
                for c, role in zip(self.contexts, ("context_a", "context_b"), strict=True))
        rows[self.context_slot:self.context_slot] = [a, b]
        return rows


@dataclass(frozen=True)
class Problem:
    """Why an input was refused: a code (catalog key ``problem.<code>``) and what it is about.

    ``row`` is 1-based (the table's row, or the axis number for ``field`` ``axis``)."""

    code: str
    row: int | None = None
    field: str = ""  # "label" | "x" | "y" | "role" | "axis" | ""
    value: str = ""
    limit: str = ""
    count: int | None = None


Parsed = Scenario | list[Problem]


# --- reading one cell ---------------------------------------------------------------------------


def _shown(raw: object, limit: int = MAX_LABEL) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    return text if len(text) <= limit else text[:limit] + "…"


def _missing(raw: object) -> bool:
    return raw is None or (isinstance(raw, float) and math.isnan(raw))


def parse_label(raw: object, row: int | None, field: str, problems: list[Problem]) -> str | None:
    """A token or axis name, stripped of outer spaces; ``None`` (and a problem) if refused."""
    if _missing(raw):
        problems.append(Problem("empty_label", row, field))
        return None
    if not isinstance(raw, str):
        problems.append(Problem("label_not_text", row, field, _shown(raw)))
        return None
    text = raw.strip()
    if not text:
        problems.append(Problem("empty_label", row, field))
    elif len(text) > MAX_LABEL:
        problems.append(Problem("label_too_long", row, field, _shown(text), str(MAX_LABEL), len(text)))
    elif bad := next((c for c in text if unicodedata.category(c) in REFUSED_CATEGORIES), None):
        problems.append(Problem("label_bad_character", row, field, f"U+{ord(bad):04X}"))
    else:
        return text
    return None


def parse_number(raw: object, row: int | None, field: str, problems: list[Problem]) -> float | None:
    """A coordinate: a number, or text that is a plain decimal number (full-width digits allowed)."""
    before = len(problems)
    value = None
    if _missing(raw) or (isinstance(raw, str) and not raw.strip()):
        problems.append(Problem("number_missing", row, field))
    elif isinstance(raw, bool) or not isinstance(raw, int | float | str):
        problems.append(Problem("not_a_number", row, field, _shown(raw)))
    elif isinstance(raw, str):
        text = unicodedata.normalize("NFKC", raw).strip().replace("−", "-")
        if len(text) > MAX_NUMBER_TEXT or not NUMBER.fullmatch(text):
            try:  # "nan", "inf", "-Infinity": numbers, but not finite ones
                finite = math.isfinite(float(text)) if len(text) <= MAX_NUMBER_TEXT else True
            except ValueError:
                finite = True
            problems.append(Problem("not_a_number" if finite else "not_finite", row, field, _shown(raw)))
        else:
            value = float(text)  # may be inf: "1e999"
    else:
        try:
            value = float(raw)
        except OverflowError:  # an integer beyond float's range
            problems.append(Problem("out_of_range", row, field, _shown(raw), f"{MAX_ABS:g}"))
    if value is not None and len(problems) == before:
        if math.isnan(value) or (math.isinf(value) and not isinstance(raw, str)):  # "1e999" is finite text
            problems.append(Problem("not_finite", row, field, _shown(raw)))
        elif not -MAX_ABS <= value <= MAX_ABS:
            problems.append(Problem("out_of_range", row, field, _shown(raw), f"{MAX_ABS:g}"))
        else:
            return value + 0.0  # -0.0 -> 0.0 keeps encode/decode and equality simple
    return None


# --- a whole scenario ---------------------------------------------------------------------------


def parse(axes: object, rows: object) -> Parsed:
    """A Scenario from axis names and table rows (dicts with label, x, y, role), or every problem.

    Every row is checked, so a person sees all that is wrong at once; nothing is repaired except
    outer spaces in labels and an empty role, which means "plain"."""
    problems: list[Problem] = []
    if not isinstance(axes, list | tuple) or len(axes) != 2:
        return [Problem("payload_shape", field="axis")]
    names = [parse_label(name, i, "axis", problems) for i, name in enumerate(axes, start=1)]
    if not isinstance(rows, list | tuple):
        return [*problems, Problem("payload_shape")]
    if len(rows) > MAX_ROWS:  # refused before reading: a huge table costs nothing
        return [*problems, Problem("too_many_tokens", count=len(rows) - 1, limit=str(MAX_TOKENS))]
    tokens, roles = [], []
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or set(row) - {"label", "x", "y", "role"}:
            problems.append(Problem("payload_shape", n))
            tokens.append(None)
            roles.append(None)
            continue
        label = parse_label(row.get("label"), n, "label", problems)
        x = parse_number(row.get("x"), n, "x", problems)
        y = parse_number(row.get("y"), n, "y", problems)
        role = row.get("role")
        if _missing(role) or role == "":
            role = "plain"
        if role not in ROLES:
            problems.append(Problem("unknown_role", n, "role", _shown(role)))
            role = None
        roles.append(role)
        tokens.append(None if None in (label, x, y) else Token(label, x, y))
    for role in ("action", "context_a", "context_b"):
        count = roles.count(role)
        if count != 1:
            problems.append(Problem("missing_role" if count == 0 else "duplicate_role", field="role", value=role,
                                    count=count))
    length = sum(role != "context_b" for role in roles)
    if length < MIN_TOKENS:
        problems.append(Problem("too_few_tokens", count=length, limit=str(MIN_TOKENS)))
    elif length > MAX_TOKENS:
        problems.append(Problem("too_many_tokens", count=length, limit=str(MAX_TOKENS)))
    if problems:
        return problems
    a, b = (tokens[roles.index(r)] for r in ("context_a", "context_b"))
    if a.label == b.label:
        return [Problem("same_contexts", roles.index("context_b") + 1, "label", _shown(a.label))]
    order = [(t, r) for t, r in zip(tokens, roles, strict=True) if r != "context_b"]
    slot = [r for _, r in order].index("context_a")
    return Scenario(
        axes=(names[0], names[1]),
        tokens=tuple(t for t, r in order if r != "context_a"),
        context_slot=slot,
        contexts=(a, b),
        action=[r for _, r in order].index("action"),
    )


def validate(scenario: Scenario) -> list[Problem]:
    """Every problem of a Scenario built in code (presets, tests); ``[]`` when it is usable."""
    if not 0 <= scenario.context_slot <= len(scenario.tokens) or not 0 <= scenario.action < scenario.length \
            or scenario.action == scenario.context_slot:
        return [Problem("payload_shape")]
    parsed = parse(list(scenario.axes), scenario.rows())
    return parsed if isinstance(parsed, list) else []


# --- the URL form: "v1." + urlsafe base64 of compact JSON, or a preset's id ---------------------


def encode(scenario: Scenario) -> str:
    """The ``sc=`` value: a preset's id, else ``v1.`` + base64url(JSON ``[axes, rows]``)."""
    if scenario.preset:
        return scenario.preset
    doc = [list(scenario.axes), [[r["label"], r["x"], r["y"], URL_ROLE[r["role"]]] for r in scenario.rows()]]
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return f"{URL_VERSION}." + base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode(raw: object) -> Parsed:
    """The Scenario a ``sc=`` value stands for, or why it cannot be used (length checked first)."""
    if not isinstance(raw, str):
        return [Problem("payload_shape")]
    if len(raw) > MAX_URL:
        return [Problem("payload_too_long", count=len(raw), limit=str(MAX_URL))]
    if raw in PRESETS:
        return PRESETS[raw]
    version, dot, body = raw.partition(".")
    if not dot:
        return [Problem("unknown_example", value=_shown(raw))]
    if version != URL_VERSION:
        return [Problem("payload_version", value=_shown(version, 12))]
    if not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", body):
        return [Problem("payload_encoding")]
    body = body.rstrip("=")
    try:
        text = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")
        doc = json.loads(text, parse_constant=str)  # NaN, Infinity: read as text, refused as not finite
    except (binascii.Error, UnicodeDecodeError):
        return [Problem("payload_encoding")]
    except RecursionError:
        return [Problem("payload_too_deep")]
    except ValueError:
        return [Problem("payload_json")]
    if not (isinstance(doc, list) and len(doc) == 2 and isinstance(doc[1], list)):
        return [Problem("payload_shape")]
    if len(doc[1]) > MAX_ROWS:
        return [Problem("too_many_tokens", count=len(doc[1]) - 1, limit=str(MAX_TOKENS))]
    rows = []
    for n, row in enumerate(doc[1], start=1):
        if not (isinstance(row, list) and len(row) == 4 and isinstance(row[3], str) and row[3] in ROLE_OF_URL):
            return [Problem("payload_shape", n)]
        rows.append({"label": row[0], "x": row[1], "y": row[2], "role": ROLE_OF_URL[row[3]]})
    return parse(doc[0], rows)


# --- the file form: JSON with a schema name and a version -----------------------------------------

JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "BlockStab example sentence",
    "type": "object",
    "required": ["schema", "version", "axes", "tokens"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": SCHEMA},
        "version": {"const": FILE_VERSION},
        "axes": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL},
                 "minItems": 2, "maxItems": 2},
        "tokens": {
            "type": "array", "minItems": MIN_TOKENS + 1, "maxItems": MAX_ROWS,
            "items": {
                "type": "object", "required": ["label", "x", "y", "role"], "additionalProperties": False,
                "properties": {
                    "label": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL},
                    "x": {"type": "number", "minimum": -MAX_ABS, "maximum": MAX_ABS},
                    "y": {"type": "number", "minimum": -MAX_ABS, "maximum": MAX_ABS},
                    "role": {"enum": list(ROLES)},
                },
            },
        },
    },
}


def to_json(scenario: Scenario) -> str:
    """The file a person downloads: schema name, version, axes and the editor's rows."""
    doc = {"schema": SCHEMA, "version": FILE_VERSION, "axes": list(scenario.axes), "tokens": scenario.rows()}
    return json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def from_json(data: bytes | str) -> Parsed:
    """The Scenario in an uploaded file, or why it is refused (size checked before parsing)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_FILE_BYTES:
        return [Problem("file_too_large", count=len(raw), limit=str(MAX_FILE_BYTES))]
    try:
        doc = json.loads(raw.decode("utf-8-sig"), parse_constant=str)
    except RecursionError:
        return [Problem("file_too_deep")]
    except (UnicodeDecodeError, ValueError):
        return [Problem("file_not_json")]
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return [Problem("file_schema", value=_shown(doc.get("schema")) if isinstance(doc, dict) else "")]
    version = doc.get("version")
    if isinstance(version, bool) or version != FILE_VERSION:
        return [Problem("file_version", value=_shown(version, 12), limit=str(FILE_VERSION))]
    extra = sorted(str(k) for k in set(doc) - {"schema", "version", "axes", "tokens"})
    if extra:
        return [Problem("file_schema", value=_shown(extra[0]))]
    return _quoted_numbers(doc.get("tokens")) or parse(doc.get("axes"), doc.get("tokens"))


def _quoted_numbers(tokens: object) -> list[Problem]:
    """Coordinates a file writes as text (``"x": "1"``): its schema says number, as the table does not."""
    if not isinstance(tokens, list):
        return []
    return [Problem("file_number_text", n, field, _shown(json.dumps(row[field], ensure_ascii=False)))
            for n, row in enumerate(tokens, start=1) if isinstance(row, dict)
            for field in ("x", "y") if isinstance(row.get(field), str)]


# --- presets: the lesson and two other domains ----------------------------------------------------


def _preset(preset: str, axes: tuple[str, str], words: list[tuple[str, float, float]], slot: int,
            contexts: tuple[tuple[str, float, float], tuple[str, float, float]], action: int) -> Scenario:
    return Scenario(axes=axes, tokens=tuple(Token(*w) for w in words), context_slot=slot,
                    contexts=(Token(*contexts[0]), Token(*contexts[1])), action=action, preset=preset)


LESSON = _preset(
    "lesson", AXES, [(t, *SHARED_EMBEDDINGS[t]) for t in TOKENS if t != "status"], CONTEXT_TOKEN,
    tuple((s, *CONTEXT_EMBEDDINGS[s]) for s in SCENARIOS), ACTION_TOKEN,
)
# "Fever and cough; the test is positive / negative; next step?" Axes: symptom, urgency.
TRIAGE = _preset(
    "triage", ("symptom", "urgency"),
    [("fever", 1.3, 0.1), ("cough", 0.9, -0.4), ("test", -0.2, 1.0), ("next_step", 0.6, 1.4)], 3,
    (("positive", -0.4, 1.5), ("negative", 1.6, -0.5)), 4,
)
# "Refund requested for the order; it was delivered / lost; reply?" Axes: complaint, resolution.
SUPPORT = _preset(
    "support", ("complaint", "resolution"),
    [("refund", 0.7, 0.1), ("order", -0.2, -1.0), ("reply", 0.5, 1.5)], 2,
    (("delivered", 1.5, -0.4), ("lost", -0.5, 1.4)), 3,
)
PRESETS = {p.preset: p for p in (LESSON, TRIAGE, SUPPORT)}
