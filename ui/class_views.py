"""What a live class's answers look like once revealed: a bar per choice (counts and shares, the right
answer marked) and the same in words; and once it has ended, its summary (a table, and the same as a CSV
file). Pure functions of a :class:`~ui.live_class.LiveClass`."""

from __future__ import annotations

import csv
import io

import plotly.graph_objects as go
import segno

from .lessons import ASKABLE, Question
from .live_class import LiveClass, Result, rounds, summary
from .text import Text
from .views.style import INK, OTHER_TOKENS, PLOTLY_WHITE, TARGET, ink_layout, text_colour, unvalidated, wrap


def share(n: int, total: int) -> str:
    """``n`` of ``total`` as a whole percentage ("0 %" of nobody)."""
    return f"{round(100 * n / total) if total else 0} %"


def answer_name(question: Question, answer: str, t: Text) -> str:
    """An answer as students read it: a choice's words, or the number typed."""
    return answer if question.number else t(question.choice_key(answer))


def choice_names(c: LiveClass, t: Text) -> list[str]:
    """The question's choices as students read them, the right one marked."""
    question = ASKABLE[c.question]
    return [t("class.right_choice", choice=t(question.choice_key(choice))) if choice == question.answer
            else t(question.choice_key(choice)) for choice in question.choices]


def answers_title(c: LiveClass, t: Text, font: int) -> dict:
    """A chart of the answers' title: how many of the seats answered (the last round)."""
    answered = rounds(c)[-1].answered
    return {"text": wrap(t("class.answers_title", answered=answered, students=len(c.seats))),
            "font": {"size": font + 2}}


def answers_figure(c: LiveClass, t: Text, projector: bool = False) -> go.Figure:
    """The class's answers to the current question: one bar per choice, in the question's order (top
    first), each labelled with its count and share; the right answer's bar in the target colour. After a vote
    again, a bar per round for each choice, side by side, the first hatched, named in the legend."""
    question, answered = ASKABLE[c.question], rounds(c)
    font = 20 if projector else 14
    if question.number:
        return numbers_figure(c, t, font)
    colours = [TARGET if choice == question.answer else OTHER_TOKENS for choice in question.choices]
    names = [wrap(name, 24) for name in choice_names(c, t)]
    bars = []
    for result in answered:
        tally = dict(result.counts)
        bars.append({
            "type": "bar", "orientation": "h", "y": names, "x": [tally[choice] for choice in question.choices],
            "name": t("class.round", n=result.round),
            "marker": {"color": colours, **({"pattern": {"shape": "/", "fgcolor": INK}} if result.round == 1
                                             and len(answered) > 1 else {})},
            "text": [f"{tally[choice]} ({share(tally[choice], result.answered)})" for choice in question.choices],
            "textposition": "outside", "cliponaxis": False, "hoverinfo": "skip",
            "textfont": {"color": [text_colour(colour) for colour in colours], "size": font}})
    most = max(1, *(n for result in answered for _, n in result.counts))
    layout = ink_layout({
        "title": answers_title(c, t, font),
        "template": PLOTLY_WHITE, "font": {"size": font}, "showlegend": len(answered) > 1,
        "legend": {"orientation": "h", "traceorder": "normal", "y": -0.15},
        "barmode": "group",
        "height": 120 + (110 if projector else 80) * len(question.choices) * len(answered),  # room for 3 lines
        "margin": {"l": 20, "r": 80, "t": 60 + 2 * font, "b": 40},
        "xaxis": {"title": {"text": t("class.answers_axis")}, "range": [0, most * 1.25],
                  **({"dtick": 1} if most <= 10 else {})},  # (whole students)
        "yaxis": {"autorange": "reversed", "automargin": True},
    })
    return unvalidated({"data": bars, "layout": layout})


def answers_description(c: LiveClass, t: Text) -> str:
    """The figure in words: how many answered, then each choice's count and share, in its order; after a vote
    again, so for each round."""
    question, answered = ASKABLE[c.question], rounds(c)

    def described(result: Result) -> str:
        if question.number:
            right = dict(result.counts).get(result.answer, 0)
            return t("class.describe_numbers", answered=result.answered, students=len(c.seats),
                     numbers=t("describe.separator").join(f"{typed} ({n})" for typed, n in result.counts) or "-",
                     value=result.answer, right=right, share=share(right, result.answered))
        tally = dict(result.counts)
        each = t("describe.separator").join(
            t("class.describe_choice", choice=name, count=tally[choice], share=share(tally[choice], result.answered))
            for choice, name in zip(question.choices, choice_names(c, t), strict=True))
        return t("class.describe", answered=result.answered, students=len(c.seats), choices=each)

    if len(answered) == 1:
        return described(answered[0])
    return " ".join(t("class.describe_round", n=result.round, said=described(result)) for result in answered)


def numbers_figure(c: LiveClass, t: Text, font: int) -> go.Figure:
    """A numeric prediction's answers as a dot plot: a dot per answer at its number, stacked (a round's dots
    beside the other's, the first hollow), and the engine's value marked by a line."""
    question, answered = ASKABLE[c.question], rounds(c)
    numbers = [int(typed) for result in answered for typed, _ in result.counts] + [c.value]
    offsets = (-0.15, 0.15) if len(answered) > 1 else (0.0,)
    dots = []
    for result, offset in zip(answered, offsets, strict=True):
        points = [(int(typed) + offset, k) for typed, n in result.counts for k in range(1, n + 1)]
        name = t("class.round", n=result.round) if len(answered) > 1 else t("class.numbers_legend")
        dots.append({"type": "scatter", "mode": "markers", "name": name,
                     "x": [x for x, _ in points], "y": [y for _, y in points], "hoverinfo": "skip",
                     "marker": {"size": font, "color": OTHER_TOKENS, "line": {"color": INK, "width": 2},
                                "symbol": "circle-open" if result.round == 1 and len(answered) > 1 else "circle"}})
    most = max([1, *(n for result in answered for _, n in result.counts)])
    layout = ink_layout({
        "title": answers_title(c, t, font),
        "template": PLOTLY_WHITE, "font": {"size": font}, "showlegend": True, "height": 360 + 4 * font,
        "legend": {"orientation": "h", "traceorder": "normal", "y": -0.32, "yanchor": "top"},
        "margin": {"l": 60, "r": 40, "t": 60 + 2 * font, "b": 100},
        "xaxis": {"title": {"text": t(question.number.unit)}, "range": [min(numbers) - 1, max(numbers) + 1],
                  "dtick": 1 if max(numbers) - min(numbers) <= 20 else None, "zeroline": False},
        "yaxis": {"title": {"text": t("class.answers_axis")}, "range": [0, most + 1.5], "dtick": 1},
        "shapes": [{"type": "line", "x0": c.value, "x1": c.value, "y0": 0, "y1": 1, "yref": "paper",
                    "line": {"color": TARGET, "width": 3}}],
        "annotations": [{"x": c.value, "y": 1, "yref": "paper", "yanchor": "bottom", "showarrow": False,
                         "text": t("class.engine_value", value=c.value), "font": {"color": text_colour(TARGET)}}],
    })
    return unvalidated({"data": dots, "layout": layout})


def own_answer(typed: str, t: Text) -> dict:
    """The phone's own number on the dot plot: a ring round it, named in the legend."""
    return {"type": "scatter", "mode": "markers", "name": t("class.your_number"), "x": [int(typed)], "y": [0.4],
            "hoverinfo": "skip", "showlegend": True,
            "marker": {"size": 18, "color": TARGET, "symbol": "triangle-up",
                       "line": {"color": INK, "width": 2}}}


def link_code(link: str) -> segno.QRCode:
    """The QR code of a link a class's phones open (its join link, its homework link), made here (never
    fetched), error correction M."""
    return segno.make(link, error="m", micro=False)


def link_code_svg(link: str, projector: bool = False) -> str:
    """:func:`link_code` as inline SVG, dark on white with its quiet zone, at projector size if asked."""
    return link_code(link).svg_inline(scale=12 if projector else 6, dark=INK, light="#ffffff", border=4)


SUMMARY_COLUMNS = ("question", "round", "prompt", "answered", "counts", "right", "share_right")


def summary_rows(c: LiveClass, t: Text) -> list[dict[str, str | int]]:
    """A row per question and round the class answered: its number and prompt, how many answered, the count of
    each choice (or number typed), the right answer and the share that chose it (whole per cent, as text: empty
    with no answer). The columns are :data:`SUMMARY_COLUMNS`' words; nothing in a row says who answered."""
    rows = []
    for result in summary(c):
        question, share_right = ASKABLE[result.question], result.share_right()
        values = (result.question + 1, result.round, t(f"ex.{question.id}.prompt"), result.answered,
                  "; ".join(f"{answer_name(question, choice, t)} ({n})" for choice, n in result.counts),
                  answer_name(question, result.answer, t) if result.answer else "",
                  "" if share_right is None else str(round(100 * share_right)))
        rows.append(dict(zip((t(f"class.summary.{column}") for column in SUMMARY_COLUMNS), values, strict=True)))
    return rows


def summary_csv(c: LiveClass, t: Text) -> bytes:
    """:func:`summary_rows` as a CSV file: UTF-8 with its byte-order mark (so that a spreadsheet reads Chinese
    as such), a header row, a row per question and round."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([t(f"class.summary.{column}") for column in SUMMARY_COLUMNS])
    writer.writerows(row.values() for row in summary_rows(c, t))
    return out.getvalue().encode("utf-8-sig")
