"""Inside one block: the action token's arrows stage by stage, and the sentence before any block."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from blockstab.block import StackConfig, Trace
from blockstab.geometry import layernorm_points_2d, rmsnorm_circle
from blockstab.lesson import lesson_params
from blockstab.sublayers import feed_forward_hidden

from ..controls import ExplorerState
from ..examples import plotly_text, side_name, token_labels
from ..numbers import vector_text
from ..text import Text
from .cut import apply_cut
from .exploration import Exploration
from .labels import label_positions, legend_below, plane_frame, segment_boxes
from .style import (
    INK,
    OTHER_TOKENS,
    SCENARIO_COLOURS,
    SCENARIO_SYMBOLS,
    TARGET,
    bottom_margin,
    layout,
    plane_axes,
    plane_reach,
    style,
    text_colour,
    title_pad,
    top_margin,
    unvalidated,
    wrap,
    xy_hover,
)

PHONE_PLANE = 270  # px: the plot's width on a 390 px phone


def stage_label(stage: str, cfg: StackConfig, t: Text) -> str:
    """A stage's name as the switches make it: with the residual off the sum x + F(x) is only
    F(x), and with normalization off a "normalized" stage is an unchanged copy."""
    if not cfg.residual and stage in ("attention_residual", "ffn_residual"):
        return t(f"stage.{stage}.no_residual")
    if cfg.norm == "none" and stage in ("attention_norm", "ffn_norm"):
        return t(f"stage.{stage}.off")
    return t("stage." + stage)


def stage_segments(state: ExplorerState, trace: Trace, row: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(stage, start, end) arrows of the action token inside the shown block.

    A branch output (attention, feed-forward) is drawn tip-to-tail from the kept input when the
    residual is on, so the residual sum x + F(x) is visibly the two arrows added.
    """
    block = state.shown_block - 1
    cfg = trace.config
    vec = {name: trace.values[block, i, row, state.example.action] for i, name in enumerate(cfg.stages)}
    kept = {"post": {"attention": "input", "feed_forward": "attention_norm"},
            "pre": {"attention": "input", "feed_forward": "attention_residual"}}[cfg.placement]
    origin = np.zeros(2)
    segments = []
    for name in cfg.stages:
        if name in kept:
            start = cfg.skip_scale * vec[kept[name]]
            segments.append((name, start, start + cfg.branch_scale * vec[name]))
        else:
            segments.append((name, origin, vec[name]))
        if name == state.focus:
            break
    return segments


def memory_note(state: ExplorerState, trace: Trace, t: Text) -> str:
    """What the feed-forward memory wrote for the action token in the shown block: the stored
    directions whose keys fired, per sentence (a key-value memory, Geva et al. 2021)."""
    block = state.shown_block - 1
    reads = trace.stage("attention_norm" if trace.config.placement == "post" else "ffn_norm")[block]
    memory = lesson_params().block(block).feed_forward
    fired = feed_forward_hidden(reads[:, state.example.action], memory)  # (batch, keys)
    notes = []
    for row, side in enumerate(state.scenarios):
        keys = np.nonzero(fired[row] > 0)[0]
        name = plotly_text(side_name(state.example, side, t))
        if not keys.size:
            notes.append(t("fig.block.memory_silent", sentence=name))
            continue
        angles = np.degrees(np.arctan2(memory.w_out[keys, 1], memory.w_out[keys, 0]))
        notes.append(t("fig.block.memory_wrote", sentence=name,
                       directions=", ".join(f"{a:.0f}°" for a in np.sort(angles))))
    return "<br>".join(wrap(note, 44) for note in notes)


def block_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """Inside one block: the action token's arrows stage by stage, for each scenario (the frame
    every block and stage shares, with the block and stage in focus cut into it)."""
    return apply_cut(block_frame(state, t), block_cut(state, result, t))


def block_frame(state: ExplorerState, t: Text) -> go.Figure:
    """What the block view keeps from block to block and stage to stage: the normalization's
    target, the layout and the axes' names (their reach is the cut's)."""
    s = style(state)
    data = []
    if state.norm_used == "rmsnorm":
        circle = rmsnorm_circle()
        data.append({"type": "scatter", "x": circle[:, 0], "y": circle[:, 1], "mode": "lines",
                     "name": t("legend.rms_target"), "line": {"color": TARGET, "dash": "dash", "width": 2},
                     "hoverinfo": "skip"})
    elif state.norm_used == "layernorm":
        pts = layernorm_points_2d()
        data.append({"type": "scatter", "x": pts[:, 0], "y": pts[:, 1], "mode": "markers",
                     "name": t("legend.ln_target"),
                     "marker": {"color": TARGET, "size": s["marker"] + 6, "symbol": "x"}})
    fig = unvalidated({"data": data})
    layout(fig, state, t, "")
    plane_axes(fig, t, np.zeros((1, 2)), state.example)
    return fig


def block_cut(state: ExplorerState, result: Exploration, t: Text) -> dict:
    """The block and stage in focus as a cut of :func:`block_frame` (``ui.views.cut``, plain data):
    the arrows up to the stage in focus (the one in focus drawn solid, with its values), the title,
    the axes' reach, the feed-forward memory's note and the legend's place."""
    s = style(state)
    cfg = result.trace.config
    traces, ends, tips = [], [np.zeros(2)], {}  # tips: stage -> [(tip, value, colour)] of each sentence
    for row, scenario in enumerate(state.scenarios):
        colour = SCENARIO_COLOURS[scenario]
        for stage, start, end in stage_segments(state, result.trace, row):
            focused = stage == state.focus
            label = f"{plotly_text(side_name(state.example, scenario, t))} · {stage_label(stage, cfg, t)}"
            traces.append({
                "type": "scatter", "x": [float(start[0]), float(end[0])], "y": [float(start[1]), float(end[1])],
                "mode": "lines+markers", "name": label, "legendgroup": scenario, "showlegend": focused,
                "line": {"color": colour, "width": s["line"] * (1.6 if focused else 0.6),
                         "dash": "solid" if focused else "dot"},
                "marker": {"size": [0, s["marker"] if focused else s["marker"] / 2], "color": colour,
                           "symbol": SCENARIO_SYMBOLS[scenario]},
                "meta": label, **xy_hover([start, end], "%{meta}<br>"),
            })
            if focused:  # one value per sentence: more would print over each other on a small chart
                value = result.trace.values[state.shown_block - 1, cfg.stages.index(stage), row, state.example.action]
                tips.setdefault(stage, []).append((end, vector_text(value), colour))
            ends += [start, end]
    notes = _value_labels(tips, s["font"])
    title = wrap(t("fig.block.title", block=state.shown_block, stage=stage_label(state.focus, cfg, t)))
    top, height = top_margin(state, title), s["height"]
    if state.focus == "feed_forward":  # above the plane, under the title: it never hides an arrow's value
        note = memory_note(state, result.trace, t)
        notes.append({"text": note, "xref": "paper", "yref": "paper", "x": 0, "y": 1, "yshift": 6, "xanchor": "left",
                      "yanchor": "bottom", "showarrow": False, "align": "left",
                      "font": {"size": s["font"] - 2, "color": INK}})
        lines = int(1.35 * (s["font"] - 2) * (note.count("<br>") + 1))
        top, height = top + lines, height + lines
    reach = plane_reach(np.array(ends))
    target = {"rmsnorm": [t("legend.rms_target")], "layernorm": [t("legend.ln_target")]}.get(state.norm_used, [])
    legend = legend_below(target + [trace["name"] for trace in traces if trace["showlegend"]], height, top, state)
    return {"traces": traces, "notes": notes,
            "layout": {"title": {"text": title, "pad": {"t": title_pad(state, title)}}, "height": height,
                       "margin": {"t": top, **legend["margin"]}, "legend": legend["legend"],
                       "xaxis": {"range": [-reach, reach]}, "yaxis": {"range": [-reach, reach]}}}


def _value_labels(tips: dict, font: int) -> list[dict]:
    """Each value beside its arrow's tip, towards the chart's middle (never past its edge), on white: a
    line showing through would read as a mark in the number; of one stage's two sentences the higher tip
    is labelled above it, the lower one below."""
    notes = []
    for labels in tips.values():
        highest = max(end[1] for end, _, _ in labels)
        for end, text, colour in labels:
            above = end[1] >= highest
            notes.append({"x": float(end[0]), "y": float(end[1]), "text": text, "showarrow": False,
                          "bgcolor": "white", "xanchor": "right" if end[0] > 0 else "left",
                          "yanchor": "bottom" if above else "top", "xshift": -6 if end[0] > 0 else 6,
                          "yshift": 4 if above else -4, "font": {"color": text_colour(colour), "size": font}})
    return notes


def tokens_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """The sentence before any block: every token's embedding as an arrow from the origin, named
    at its tip where the name covers no other name, tip or arrow."""
    s = style(state)
    x = result.trace.stream[0]  # (batch, tokens, 2)
    example = state.example
    arrows = []  # (name, vector, colour, width)
    for row, scenario in enumerate(state.scenarios):
        for i, name in enumerate(token_labels(example, scenario, t)):
            shared = i != example.context_slot
            if shared and row > 0:
                continue
            colour = "#000000" if i == example.action else (OTHER_TOKENS if shared else SCENARIO_COLOURS[scenario])
            arrows.append((plotly_text(name), x[row, i], colour, s["line"] * (1.4 if i == example.action else 0.8)))
    title = t("fig.tokens.title")
    scale, bounds = plane_frame(state, plane_reach(x.reshape(-1, 2)), top_margin(state, wrap(title)),
                                bottom_margin(state), PHONE_PLANE)  # names inside the plot, which clips them
    tips = np.array([v for _, v, _, _ in arrows]) * scale
    where = label_positions(tips, [name for name, *_ in arrows], s["font"], s["marker"],
                            obstacles=segment_boxes(np.zeros_like(tips), tips), bounds=bounds)
    fig = unvalidated({"data": [
        {"type": "scatter", "x": [0, v[0]], "y": [0, v[1]], "mode": "lines+markers+text", "name": name,
         "text": ["", name], "textposition": position, "line": {"color": colour, "width": width},
         "marker": {"size": [0, s["marker"]], "color": colour},
         "textfont": {"color": text_colour(colour), "size": s["font"]}, "showlegend": False,
         "meta": name, "hovertemplate": "%{meta}: [%{x:.3f}, %{y:.3f}]<extra></extra>"}
        for (name, v, colour, width), position in zip(arrows, where, strict=True)]})
    layout(fig, state, t, title)
    plane_axes(fig, t, x.reshape(-1, 2), example)
    return fig
