"""The active example's words in the reader's language, problem messages, and text made safe.

A preset's labels are ids the catalogs translate (``axis.<id>``, ``token.<id>``, and
``scenario.<id>`` for a context); a person's own example is shown exactly as typed. User text is
never markup: :func:`plotly_text` escapes what Plotly would read as HTML, :func:`markdown_text`
what Markdown would format, and :func:`literal` quotes a value as inline code. No Streamlit here.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import replace

from blockstab.scenario import LESSON, PRESETS, REFUSED_CATEGORIES, ROLES, SIDES, Problem, Scenario, Token

from .text import Text

SHOWN = 40  # characters of a user value quoted in a message
EXAMPLE_NAMES = tuple(PRESETS)  # the preset picker's order: the lesson first


# --- names ----------------------------------------------------------------------------------------


def axis_names(example: Scenario, t: Text) -> tuple[str, str]:
    if example.preset:
        return (t("axis." + example.axes[0]), t("axis." + example.axes[1]))
    return example.axes


def _word(example: Scenario, token: Token, t: Text) -> str:
    return t("token." + token.label) if example.preset else token.label


def token_labels(example: Scenario, side: str, t: Text) -> tuple[str, ...]:
    """The sentence of one side, word by word."""
    return tuple(_word(example, token, t) for token in example.sentence(side))


def side_name(example: Scenario, side: str, t: Text) -> str:
    """What tells sentence A from B: the lesson's "confirmed", a preset's or a person's context."""
    context = example.contexts[SIDES.index(side)]
    return t("scenario." + context.label) if example.preset else context.label


def side_option(example: Scenario, side: str, t: Text) -> str:
    """The sentence picker's option: the lesson keeps its longer wording."""
    if example == LESSON or side == "both":
        return t("option.scenario." + side)
    return side_name(example, side, t)


def sentence_text(example: Scenario, t: Text) -> str:
    """The two sentences as one line, the context written ``A | B`` (plain text, not Markdown)."""
    a, b = (token_labels(example, side, t) for side in SIDES)
    words = [x if x == y else f"{x} | {y}" for x, y in zip(a, b, strict=True)]
    words[example.action] += " ★"
    return " · ".join(words)


def localized(example: Scenario, t: Text) -> Scenario:
    """A preset written out in one language, as a person would type it (no longer a preset)."""
    if not example.preset:
        return example
    return replace(
        example, preset="", axes=axis_names(example, t),
        tokens=tuple(replace(tok, label=t("token." + tok.label)) for tok in example.tokens),
        contexts=tuple(replace(c, label=t("token." + c.label)) for c in example.contexts),
    )


def canonical(example: Scenario) -> Scenario:
    """A preset typed out unchanged in either language is that preset (language-neutral link)."""
    for preset in PRESETS.values():
        if any(example == localized(preset, Text(lang)) for lang in ("en", "zh")):
            return preset
    return example


def sentence_caption(example: Scenario, t: Text) -> str:
    """The Explorer's one-line description of the sentence (Markdown, user text escaped)."""
    if example == LESSON:
        return t("explorer.sentence")
    across, up = (markdown_text(name) for name in axis_names(example, t))
    return t("explorer.sentence_example", sentence=markdown_text(sentence_text(example, t)), across=across, up=up)


def blank(t: Text) -> Scenario:
    """Starting from scratch: one plain word, the two contexts and the action token."""
    return Scenario(axes=(t("editor.blank.axis_1"), t("editor.blank.axis_2")),
                    tokens=(Token(t("editor.blank.word"), 1.0, 0.2), Token(t("editor.blank.action"), 0.5, 1.2)),
                    context_slot=1,
                    contexts=(Token(t("editor.blank.context_a"), -0.4, 1.3),
                              Token(t("editor.blank.context_b"), 1.4, -0.4)),
                    action=2)


def number_text(value: float) -> str:
    """A coordinate as the editor shows it: shortest exact form, ``1`` rather than ``1.0``."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def table_rows(example: Scenario) -> list[dict]:
    """The editor's table for an example already written out (see :func:`localized`): text cells."""
    return [{**row, "x": number_text(row["x"]), "y": number_text(row["y"])} for row in example.rows()]


# --- messages -------------------------------------------------------------------------------------

ROLE_CODES = ("missing_role", "duplicate_role")


def problem_text(problem: Problem, t: Text) -> str:
    """One refusal as a Markdown sentence, its user value quoted as inline code."""
    where = ""
    if problem.field == "axis" and problem.row is not None:
        where = t("where.axis", row=problem.row)
    elif problem.row is not None:
        where = t("where.row", row=problem.row, column=t("column." + (problem.field or "row")))
    value = t("role." + problem.value) if problem.code in ROLE_CODES and problem.value in ROLES \
        else literal(problem.value)
    return where + t("problem." + problem.code, value=value, limit=problem.limit, count=problem.count)


def ignored_settings(t: Text, settings: list[tuple[str, str]], most: int = 5) -> str | None:
    """The notice that a link's (parameter, value) ``settings`` cannot be used and are at their defaults, as
    Markdown naming at most ``most`` of them, each quoted as code; ``None`` for none."""
    named = [literal(f"{key}={value}", limit=60) for key, value in settings]
    if len(named) == 1:
        return t("url.ignored", setting=named[0])
    if not named:
        return None
    more = len(named) - most
    listed = ", ".join(named[:most]) + (" " + t("url.more", count=more) if more > 0 else "")
    return t("url.ignored_list", settings=listed)


def problems_text(problems: list[Problem], t: Text, most: int = 8) -> str:
    """Up to ``most`` refusals as a Markdown list (and how many more there are)."""
    lines = [f"- {problem_text(p, t)}" for p in problems[:most]]
    if len(problems) > most:
        lines.append("- " + t("problem.more", count=len(problems) - most))
    return "\n".join(lines)


# --- user text made safe ----------------------------------------------------------------------------


def visible(value: str, limit: int = SHOWN) -> str:
    """At most ``limit`` characters, with controls and invisible characters written as U+XXXX."""
    short = value if len(value) <= limit else value[:limit] + "…"
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) in REFUSED_CATEGORIES else c for c in short)


def literal(value: str, limit: int = SHOWN) -> str:
    """``value`` as Markdown inline code: shown character for character, never formatted or linked."""
    text = visible(str(value), limit)
    if not text:
        return '`""`'
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# Where GitHub-flavoured Markdown would find a bare link (``www.``, ``scheme:``, ``name@host``):
# its autolinks are found in the parsed text, so backslash escapes do not stop them.
LINK_START = re.compile(r"(?i)(?<=www)(?=\.)|(?=[:@])")
WORD_JOINER = "\u2060"  # invisible, unbreakable: the text looks and wraps as typed


def markdown_text(value: str) -> str:
    """``value`` with every ASCII punctuation mark backslash-escaped and a word joiner where a
    bare link would start: Markdown shows it as typed, never as a link, image or markup."""
    text = LINK_START.sub(WORD_JOINER, visible(value, 10_000))
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text).replace("\n", " ")


def plain_text(markdown: str) -> str:
    """Text made with :func:`markdown_text` values, as plain text again (every backslash escape and
    word joiner it added dropped: a typed one is written out by :func:`visible`), for a page that
    shows it as text."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace(WORD_JOINER, "")


def plotly_text(value: str) -> str:
    """``value`` for a Plotly label, hover or title: its pseudo-HTML (<b>, <a href>, <br>) escaped."""
    return html.escape(value, quote=False)
