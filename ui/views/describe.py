"""Each view in words, from the numbers it draws: a chart's accessible name, what a sighted student
reads off it. Pure functions ``(state, result, text) -> str``, one per view of ``ui.views.FIGURES``;
vectors and lengths are rounded as the numbers table rounds them, other values as the verdict does."""

from __future__ import annotations

import math

import numpy as np

from ..controls import ExplorerState
from ..examples import side_name, token_labels
from ..numbers import fixed, readable, value_range, vector_text
from ..text import Text
from .block import stage_label
from .exploration import Exploration
from .geometry import normalized_2d, normalized_3d_plane


def direction(v) -> str:
    """A 2-D vector's angle from the first axis, counter-clockwise, in whole degrees ("—" if it has none)."""
    x, y = float(v[0]), float(v[1])
    if not (math.isfinite(x) and math.isfinite(y)) or x == y == 0:
        return "—"
    return f"{math.degrees(math.atan2(y, x)):.0f}°"


def length(v) -> str:
    return fixed(float(np.hypot(*np.asarray(v, dtype=float))))


def count(x: float) -> str:
    """A count of tokens, "—" where the stream has overflowed (no direction left to count)."""
    return str(int(x)) if math.isfinite(x) else "—"


def tokens_description(state: ExplorerState, result: Exploration, t: Text) -> str:
    """The sentence before any block: every token's vector (the context word once per sentence)."""
    x = result.trace.stream[0]
    parts = [t("describe.tokens")]
    for row, side in enumerate(state.scenarios):
        names = token_labels(state.example, side, t)
        listed = [f"{name} {vector_text(x[row, i])}" for i, name in enumerate(names)
                  if row == 0 or i == state.example.context_slot]
        parts.append(t("describe.tokens.sentence", sentence=side_name(state.example, side, t),
                       tokens=t("describe.separator").join(listed)))
    return t.sentences(parts)


def block_description(state: ExplorerState, result: Exploration, t: Text) -> str:
    """Inside the shown block: the stage in focus, and where each sentence's action token is after it."""
    block, stage = state.shown_block, result.trace.stages.index(state.focus)
    parts = [t("describe.block", block=block, stage=stage_label(state.focus, result.trace.config, t))]
    for row, side in enumerate(state.scenarios):
        v = result.trace.values[block - 1, stage, row, state.example.action]
        parts.append(t("describe.token", sentence=side_name(state.example, side, t), vector=vector_text(v),
                       length=length(v), angle=direction(v)))
    return t.sentences(parts)


def lost_block(stream: np.ndarray, row: int) -> int | None:
    """The first block (0 = the input) from which sentence ``row``'s stream is no longer finite."""
    finite = np.isfinite(stream[:, row]).all(axis=(1, 2))
    return None if finite.all() else int(np.argmin(finite))


def depth_description(state: ExplorerState, result: Exploration, t: Text) -> str:
    """Across depth: each sentence's action token from the input to the last block, and how many of
    its tokens are still distinct there (or from which block it overflowed)."""
    stream, r = result.trace.stream, result.readouts
    depth, n = stream.shape[0] - 1, stream.shape[2]
    parts = [t("describe.depth", depth=depth)]
    for row, side in enumerate(state.scenarios):
        sentence = side_name(state.example, side, t)
        start, end = stream[0, row, state.example.action], stream[-1, row, state.example.action]
        lost = lost_block(stream, row)
        if lost is not None:
            parts.append(t("describe.trail_lost", sentence=sentence, start=vector_text(start), lost=lost))
            continue
        parts.append(t("describe.trail", sentence=sentence, start=vector_text(start), end=vector_text(end),
                       length=length(end), distinct=count(r.distinct_tokens[-1, row]), n=n))
    return t.sentences(parts)


def readouts_description(state: ExplorerState, result: Exploration, t: Text) -> str:
    """The readouts at the last block: per sentence the action token's size since the input, its angle
    to the nearest other token and the distinct tokens (or where the size overflowed or reached 0);
    the two sentences' angle."""
    r, stream = result.readouts, result.trace.stream
    depth, n = stream.shape[0] - 1, stream.shape[2]
    parts = [t("describe.readouts", depth=depth)]
    for row, side in enumerate(state.scenarios):
        sentence, size = side_name(state.example, side, t), r.action_norm[:, row]
        start, lost = readable(float(size[0])), lost_block(stream, row)
        if lost is not None:
            last = lost - 1  # (the input is always finite)
            parts.append(t("describe.readout_lost", sentence=sentence, start=start, last=readable(float(size[last])),
                           block=last, lost=lost))
        elif size[-1] == 0:
            parts.append(t("describe.readout_zero", sentence=sentence, start=start))
        else:
            parts.append(t("describe.readout", sentence=sentence, start=start, end=readable(float(size[-1])),
                           nearest=readable(float(r.action_nearest_angle[-1, row])),
                           distinct=count(r.distinct_tokens[-1, row]), n=n))
    if len(state.scenarios) == 2 and math.isfinite(r.scenario_angle[-1]):
        parts.append(t("describe.sentences", angle=readable(float(r.scenario_angle[-1]))))
    return t.sentences(parts)


def curve_text(values: np.ndarray, first: int, t: Text, unit: str = "block") -> str:
    """A curve in words: its value at the first and last block (or ``layer``), or from which one
    on it overflowed."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    if not finite.all():
        lost = int(np.argmin(finite))
        return t(f"describe.curve_lost.{unit}", start=readable(float(values[0])), at=lost + first)
    return t(f"describe.curve.{unit}", start=readable(float(values[0])), end=readable(float(values[-1])),
             last=len(values) - 1 + first)


def geometry_2d_description(t: Text) -> str:
    """The 2-D panels: the inputs' lengths; RMSNorm's outputs' lengths; the spots LayerNorm's outputs
    land on (outputs within 0.01 of each other share a spot on the chart) and how many on each."""
    x, rms, ln = normalized_2d()
    spots, which = np.unique(np.round(ln, 2), axis=0, return_inverse=True)
    landed = t("describe.separator").join(
        t("describe.landed", vector=vector_text(ln[which == i].mean(axis=0)), count=int(np.sum(which == i)))
        for i in range(len(spots)))
    return t.sentences([t("describe.geometry_2d", n=len(x), inputs=value_range(np.hypot(*x.T)),
                          rms=value_range(np.hypot(*rms.T))),
                        t("describe.geometry_2d_ln", points=len(spots), landed=landed)])


def geometry_3d_description(t: Text) -> str:
    """The 3-D panel: every LayerNorm output's distance from the centre of the plane it lies in."""
    plane = normalized_3d_plane()
    return t("describe.geometry_3d", n=len(plane), radius=value_range(np.hypot(*plane.T)))


DESCRIPTIONS = {"tokens": tokens_description, "block": block_description, "depth": depth_description,
                "readouts": readouts_description}
