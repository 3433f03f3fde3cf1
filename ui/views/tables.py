"""The numbers beside the figures: the stage table, the course's worked case, CSV, and the
course-table check."""

from __future__ import annotations

import csv
import io

import numpy as np

from blockstab.lesson import COURSE_TABLE
from blockstab.scenario import LESSON

from ..controls import ExplorerState
from ..examples import markdown_text, side_name
from ..numbers import fixed, vector_text
from ..text import Text
from .block import stage_label
from .exploration import Exploration


def course_table_matches(result: Exploration, state: ExplorerState) -> bool:
    """Is this the lesson's sentence, and does block 1's attention residual sum equal the course's
    table (to 3 decimals)? Other examples make no claim about the course."""
    if state.example != LESSON:
        return False
    values = result.trace.stage("attention_residual")[0, :, LESSON.action]
    return all(np.round(values[row], 3).tolist() == list(COURSE_TABLE[s]) for row, s in enumerate(state.scenarios))


def stage_rows(state: ExplorerState, result: Exploration, t: Text) -> list[dict]:
    """The shown block's stages as table rows: one column of vectors per scenario."""
    block = state.shown_block - 1
    rows = []
    for i, stage in enumerate(result.trace.stages):
        row = {t("table.stage"): stage_label(stage, result.trace.config, t)}
        for b, scenario in enumerate(state.scenarios):
            v = result.trace.values[block, i, b, state.example.action]
            name = side_name(state.example, scenario, t)
            row[name] = vector_text(v)
            row[t("table.length") + " · " + name] = fixed(float(np.hypot(*v)))
        rows.append(row)
    return rows


def columns_and_rows(rows: list[dict]) -> dict:
    """Rows (column -> text) as a table a browser draws: its column names and each row's cells."""
    return {"columns": list(rows[0]) if rows else [], "rows": [list(row.values()) for row in rows]}


def markdown_table(rows: list[dict]) -> str:
    """Rows (column -> text) as a Markdown table. ``st.markdown`` draws it with the page's own
    fonts (so projector mode scales it) and without the 1.7 MB of data-grid JavaScript that
    ``st.dataframe`` makes a cold page load (docs/benchmarks.md). Every cell is escaped
    (:func:`~ui.examples.markdown_text`): a typed label shows as typed, never as a link or image."""
    def cell(value) -> str:
        return markdown_text(str(value))

    columns = list(rows[0]) if rows else []
    lines = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def stage_csv(state: ExplorerState, result: Exploration) -> str:
    """Every stage of every block for the action token, full precision, language-neutral columns."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    axes = state.example.axes if state.example.preset else ("axis_1", "axis_2")  # typed names stay out
    writer.writerow(["scenario", "block", "stage", *axes])
    for b, scenario in enumerate(state.scenarios):
        for block in range(result.trace.values.shape[0]):
            for i, stage in enumerate(result.trace.stages):
                v = result.trace.values[block, i, b, state.example.action]
                writer.writerow([scenario, block + 1, stage, repr(float(v[0])), repr(float(v[1]))])
    return out.getvalue()


def course_case_rows(result: Exploration, state: ExplorerState, t: Text) -> list[dict]:
    """The course's worked case: the action token after block 1's attention residual, computed,
    beside the published figure and the reading of each scenario (those two only for the lesson)."""
    values = result.trace.stage("attention_residual")[0, :, state.example.action]
    rows = []
    for row, scenario in enumerate(state.scenarios):
        cells = {t("case.col.scenario"): side_name(state.example, scenario, t),
                 t("case.col.computed"): vector_text(values[row])}
        if state.example == LESSON:
            cells[t("case.col.course")] = vector_text(COURSE_TABLE[scenario])
            cells[t("case.col.reading")] = t("case.reading." + scenario)
        rows.append(cells)
    return rows


DEVICES = ("residual", "normalization")


def device_rows(t: Text) -> list[dict]:
    """The course's summary: each stabiliser, the problem it prevents and the intuition to keep."""
    return [{t("case.col.device"): t(f"device.{d}"), t("case.col.problem"): t(f"case.device.{d}.problem"),
             t("case.col.intuition"): t(f"case.device.{d}.intuition")} for d in DEVICES]


THREE_STAGES = ("attention", "attention_residual", "attention_norm")


def three_stage_rows(result: Exploration, state: ExplorerState, t: Text) -> list[dict]:
    """Only new computation / after the residual / after normalization, live, in block 1."""
    rows = []
    for stage in THREE_STAGES:
        row = {t("case.col.stage"): t("case.stage." + stage)}
        for b, scenario in enumerate(state.scenarios):
            v = result.trace.stage(stage)[0, b, state.example.action]
            row[side_name(state.example, scenario, t)] = vector_text(v)
        row[t("case.col.question")] = t("case.question." + stage)
        row[t("case.col.without")] = t("case.without." + stage)
        rows.append(row)
    return rows
