"""Figures and readings of one Explorer state: pure functions ``(state, result, text) -> value``.

Nothing here runs Streamlit; tests read the returned Plotly figures' data directly.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from blockstab.block import StackConfig, Trace, run_stack
from blockstab.geometry import layernorm_plane_coordinates, layernorm_points_2d, rmsnorm_circle
from blockstab.lesson import COURSE_TABLE, lesson_params
from blockstab.readouts import Readouts, readouts, token_groups
from blockstab.scenario import LESSON
from blockstab.sublayers import NormParams, feed_forward_hidden, layer_norm, rms_norm

from .controls import ExplorerState
from .examples import axis_names, markdown_text, plotly_text, side_name, token_labels
from .numbers import readable, vector_text
from .text import Text
from .verdicts import OWN_DIRECTION, VANISHED

# Okabe-Ito: distinguishable with every common colour-vision deficiency.
SCENARIO_COLOURS = {"confirmed": "#0072B2", "not_confirmed": "#D55E00"}
OTHER_TOKENS = "#999999"
TARGET = "#009E73"
ANGLE_FLOOR = 1e-9  # degrees: a smaller angle between two tokens is drawn at this floor (same vector)
PLOTLY_WHITE = pio.templates["plotly_white"].to_plotly_json()


@dataclass(frozen=True)
class Exploration:
    """The engine's answer for one state: the full trace and its readouts."""

    trace: Trace
    readouts: Readouts


def explore(state: ExplorerState) -> Exploration:
    cfg = StackConfig(depth=state.depth, residual=state.residual, norm=state.norm_used,
                      placement=state.placement)
    trace = run_stack(state.example.embeddings(state.scenarios), lesson_params(), cfg)
    return Exploration(trace, readouts(trace, state.example.action))


def _style(state: ExplorerState) -> dict:
    big = state.projector
    return {"font": 20 if big else 14, "line": 5 if big else 3, "marker": 16 if big else 10,
            "height": 420 if big else 480}


def stage_label(stage: str, cfg: StackConfig, t: Text) -> str:
    """A stage's name as the switches make it: with the residual off the sum x + F(x) is only
    F(x), and with normalization off a "normalized" stage is an unchanged copy."""
    if not cfg.residual and stage in ("attention_residual", "ffn_residual"):
        return t(f"stage.{stage}.no_residual")
    if cfg.norm == "none" and stage in ("attention_norm", "ffn_norm"):
        return t(f"stage.{stage}.off")
    return t("stage." + stage)


def log_axis(values: np.ndarray, floor: float) -> dict:
    """A log axis over ``values`` (floored) that ticks whole powers of ten, written 10ⁿ: at least
    one decade, at most about six labels."""
    finite = values[np.isfinite(values)]
    finite = np.maximum(finite, floor) if finite.size else np.array([floor, 1.0])
    low = np.floor(np.log10(finite.min()))
    high = max(np.ceil(np.log10(finite.max())), low + 1)
    return {"type": "log", "range": [low - 0.1, high + 0.1], "dtick": max(1, int(np.ceil((high - low) / 6))),
            "exponentformat": "power", "showexponent": "all"}


def _layout(fig: go.Figure, state: ExplorerState, t: Text, title: str) -> go.Figure:
    s = _style(state)
    fig.update_layout(
        title={"text": title, "font": {"size": s["font"] + 2}},
        font={"size": s["font"]}, height=s["height"],
        margin={"l": 60, "r": 20, "t": 50, "b": 80},
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
    )
    fig.layout.template = PLOTLY_WHITE  # the template itself: an unvalidated figure would keep a name
    return fig


def _plane_axes(fig: go.Figure, t: Text, points: np.ndarray, example=LESSON, **where) -> None:
    finite = points[np.all(np.isfinite(points), axis=-1)]
    reach = max(1.6, float(np.abs(finite).max()) * 1.3) if finite.size else 2.0
    across, up = (plotly_text(name) for name in axis_names(example, t))
    fig.update_xaxes(title_text=across, range=[-reach, reach], zeroline=True, **where)
    fig.update_yaxes(title_text=up, range=[-reach, reach], zeroline=True,
                     scaleanchor="x" if not where else None, **where)


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
    return "<br>".join(notes)


def block_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """Inside one block: the action token's arrows stage by stage, for each scenario."""
    s = _style(state)
    cfg = result.trace.config
    fig = go.Figure()
    if state.norm_used == "rmsnorm":
        circle = rmsnorm_circle()
        fig.add_trace(go.Scatter(x=circle[:, 0], y=circle[:, 1], mode="lines", name=t("legend.rms_target"),
                                 line={"color": TARGET, "dash": "dash", "width": 2}, hoverinfo="skip"))
    elif state.norm_used == "layernorm":
        pts = layernorm_points_2d()
        fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers", name=t("legend.ln_target"),
                                 marker={"color": TARGET, "size": s["marker"] + 6, "symbol": "x"}))
    ends = [np.zeros(2)]
    for row, scenario in enumerate(state.scenarios):
        colour = SCENARIO_COLOURS[scenario]
        for stage, start, end in stage_segments(state, result.trace, row):
            focused = stage == state.focus
            label = f"{plotly_text(side_name(state.example, scenario, t))} · {stage_label(stage, cfg, t)}"
            fig.add_trace(go.Scatter(
                x=[start[0], end[0]], y=[start[1], end[1]], mode="lines+markers",
                name=label, legendgroup=scenario, showlegend=focused,
                line={"color": colour, "width": s["line"] * (1.6 if focused else 0.6),
                      "dash": "solid" if focused else "dot"},
                marker={"size": [0, s["marker"] if focused else s["marker"] / 2], "color": colour},
                meta=label, hovertemplate="%{meta}<br>[%{x:.3f}, %{y:.3f}]<extra></extra>",
            ))
            if focused or stage == "attention_residual":  # the stage's own value, at the arrow's tip
                value = result.trace.values[state.shown_block - 1, cfg.stages.index(stage), row, state.example.action]
                fig.add_annotation(x=end[0], y=end[1], text=vector_text(value), showarrow=False,
                                   xanchor="left" if row else "right", xshift=10 if row else -10,
                                   bgcolor="rgba(255,255,255,0.8)", font={"color": colour, "size": s["font"]})
            ends += [start, end]
    title = t("fig.block.title", block=state.shown_block, stage=stage_label(state.focus, cfg, t))
    _layout(fig, state, t, title)
    _plane_axes(fig, t, np.array(ends), state.example)
    if state.focus == "feed_forward":
        fig.add_annotation(text=memory_note(state, result.trace, t), xref="paper", yref="paper", x=0, y=1,
                           xanchor="left", yanchor="top", showarrow=False, align="left",
                           bgcolor="rgba(255,255,255,0.85)", font={"size": s["font"] - 2})
    return fig


def depth_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """Across depth: the action token's path; a slider and play button move through the blocks in
    the browser (Plotly frames), with every token of the sentence at the chosen block. Tokens that
    have merged (less than ``DISTINCT_DEGREES`` apart) share one label, "errors = after deploy",
    and the action token is a ring, so a token under it still shows.

    Built from plain dicts and wrapped without Plotly's per-property validation: validating
    ``depth + 1`` frames of traces cost 64 ms at depth 24 and 213 ms at depth 100
    (docs/benchmarks.md). Each frame carries only the moving traces' positions and labels; their
    names and style stay on the figure's traces (``frame.traces`` says which), and Plotly.animate
    keeps them.
    """
    s = _style(state)
    stream = result.trace.stream  # (depth + 1, batch, tokens, 2)
    depth = stream.shape[0] - 1
    action = state.example.action
    blocks = np.arange(depth + 1)
    data = []
    for row, scenario in enumerate(state.scenarios):
        path = stream[:, row, action]
        data.append({
            "type": "scatter", "x": path[:, 0], "y": path[:, 1], "mode": "lines+markers",
            "name": t("legend.path", scenario=plotly_text(side_name(state.example, scenario, t))),
            "line": {"color": SCENARIO_COLOURS[scenario], "width": s["line"] / 2},
            "marker": {"size": s["marker"] * 0.6, "color": blocks, "colorscale": "Viridis",
                       "showscale": row == 0, "colorbar": {"title": {"text": t("legend.block")}, "x": 1.02,
                                                           "tick0": 0, "dtick": max(1, int(np.ceil(depth / 5)))}},
            "customdata": blocks,
            "hovertemplate": t("hover.block") + " %{customdata}: [%{x:.3f}, %{y:.3f}]<extra></extra>",
        })
    moving = list(range(len(data), len(data) + 2 * len(state.scenarios)))
    names = [[plotly_text(n) for n in token_labels(state.example, side, t)] for side in state.scenarios]
    # The moving traces at the last block, with their style: the figure opens there.
    for row, scenario in enumerate(state.scenarios):  # the second sentence labels below its dots
        data.append({"type": "scatter", "mode": "markers+text", "hoverinfo": "text",
                     "textposition": "bottom center" if row else "top center",
                     "marker": {"color": OTHER_TOKENS, "size": s["marker"], "opacity": 0.8},
                     "textfont": {"color": SCENARIO_COLOURS[scenario], "size": s["font"] - 2},
                     "name": t("legend.other_tokens"), "showlegend": False})
        data.append({"type": "scatter", "mode": "markers", "name": t("legend.now"), "showlegend": False,
                     "marker": {"color": SCENARIO_COLOURS[scenario], "size": s["marker"] * 2, "symbol": "circle-open",
                                "line": {"width": 4}}})
    frames = [{"name": str(d), "traces": moving, "data": _moving_positions(stream, d, action, names)}
              for d in range(depth + 1)]
    for index, trace in zip(moving, frames[-1]["data"], strict=True):
        data[index].update(trace)
    layout = {
        "sliders": [{
            "active": depth, "currentvalue": {"prefix": t("legend.block") + ": "}, "y": -0.18, "x": 0.12,
            "len": 0.88,
            "pad": {"t": 30}, "font": {"size": s["font"] - 2},
            "steps": [{"label": str(d), "method": "animate",
                       "args": [[str(d)], {"mode": "immediate", "frame": {"duration": 0, "redraw": False},
                                           "transition": {"duration": 0}}]} for d in range(depth + 1)],
        }],
        "updatemenus": [{
            "type": "buttons", "x": 0, "y": -0.2, "xanchor": "left", "yanchor": "top", "direction": "left",
            "buttons": [{"label": "▶", "method": "animate",
                         "args": [None, {"frame": {"duration": 120, "redraw": False}, "fromcurrent": True,
                                         "transition": {"duration": 0}}]}],
        }],
    }
    fig = go.Figure({"data": data, "layout": layout, "frames": frames}, skip_invalid=False, _validate=False)
    _layout(fig, state, t, t("fig.depth.title", depth=depth))
    fig.update_layout(showlegend=False, margin={"b": 120})
    _plane_axes(fig, t, stream.reshape(-1, 2), state.example)
    return fig


def group_labels(vectors: np.ndarray, names: list[str]) -> list[str]:
    """One label per group of merged tokens ("errors = after deploy"), on the group's first token;
    the other members get none, so merged labels never print on top of each other."""
    groups = token_groups(vectors)
    return [" = ".join(n for j, n in enumerate(names) if groups[j] == i) if groups[i] == i else ""
            for i in range(len(names))]


def _moving_positions(stream: np.ndarray, d: int, action: int, names: list[list[str]]) -> list[dict]:
    """Block ``d``'s moving traces: per scenario, every token with its group's label, then the
    action token's ring. Plain float lists: Plotly converts each NumPy array through narwhals,
    which cost more than the rest of the frame; JSON keeps every float exactly (shortest repr)."""
    traces = []
    for row in range(stream.shape[1]):
        pts = stream[d, row]
        a = pts[action]
        traces.append({"type": "scatter", "x": pts[:, 0].tolist(), "y": pts[:, 1].tolist(),
                       "text": group_labels(pts, names[row]), "hovertext": names[row]})
        traces.append({"type": "scatter", "x": [float(a[0])], "y": [float(a[1])]})
    return traces


def _floored(values: np.ndarray, floor: float) -> list:
    """Values for a log axis: below ``floor`` drawn at the floor, non-finite left out (a gap)."""
    return [None if not np.isfinite(v) else max(float(v), floor) for v in values]


def readouts_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """Six readouts against depth that cannot hide a merge: the action token's size, its cosine to
    its start, its angle to the nearest other token, the angle between the two sentences, how many
    tokens are distinct, and the smallest angle between two tokens."""
    s = _style(state)
    r = result.readouts
    n = result.trace.stream.shape[2]
    blocks = np.arange(r.action_norm.shape[0])
    size_floor = VANISHED * float(r.action_norm[0].min())
    panels = ("norm", "nearest", "distinct", "cosine", "angle", "smallest")
    fig = make_subplots(rows=2, cols=3, vertical_spacing=0.22, horizontal_spacing=0.09,
                        subplot_titles=[t("fig.readouts." + p, n=n) for p in panels])
    for row, scenario in enumerate(state.scenarios):
        line = {"color": SCENARIO_COLOURS[scenario], "width": s["line"] / 1.5}
        common = {"name": plotly_text(side_name(state.example, scenario, t)), "legendgroup": scenario, "line": line,
                  "mode": "lines+markers", "marker": {"size": s["marker"] / 2.5}}  # a lone point still shows
        fig.add_trace(go.Scatter(x=blocks, y=_floored(r.action_norm[:, row], size_floor), **common), row=1, col=1)
        common["showlegend"] = False
        fig.add_trace(go.Scatter(x=blocks, y=r.action_nearest_angle[:, row], **common), row=1, col=2)
        fig.add_trace(go.Scatter(x=blocks, y=r.distinct_tokens[:, row], line_shape="hv", **common), row=1, col=3)
        fig.add_trace(go.Scatter(x=blocks, y=r.action_cosine_to_input[:, row], **common), row=2, col=1)
        fig.add_trace(go.Scatter(x=blocks, y=_floored(r.smallest_pairwise_angle[:, row], ANGLE_FLOOR), **common),
                      row=2, col=3)
    if state.norm_used != "none" and state.placement == "pre":  # what every sublayer reads
        reads = np.full(blocks.shape, float(np.sqrt(2)))
        fig.add_trace(go.Scatter(x=blocks, y=reads, name=t("legend.normalized_copy"),
                                 line={"color": TARGET, "dash": "dash", "width": s["line"] / 1.5}), row=1, col=1)
    if len(state.scenarios) == 2:
        angle = np.where(r.scenario_angle < ANGLE_FLOOR, 0.0, r.scenario_angle)  # float noise is zero
        fig.add_trace(go.Scatter(x=blocks, y=angle, name=t("legend.angle"),
                                 line={"color": "#000000", "width": s["line"] / 1.5}), row=2, col=2)
    else:
        fig.add_annotation(text=t("fig.readouts.angle_needs_two"), xref="x5 domain", yref="y5 domain", x=0.5,
                           y=0.5, showarrow=False, font={"size": s["font"] - 2, "color": "#555555"})
    fig.add_hline(y=OWN_DIRECTION, line={"color": "#555555", "dash": "dot", "width": 1}, row=1, col=2)
    fig.update_yaxes(**log_axis(r.action_norm.ravel(), size_floor), row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=2)
    fig.update_yaxes(range=[0, n + 0.5], dtick=1 if n <= 8 else 2, row=1, col=3)
    fig.update_yaxes(range=[-1.05, 1.05], row=2, col=1)
    top = float(np.nanmax(np.concatenate([r.scenario_angle, [5.0]])))
    fig.update_yaxes(range=[0, top * 1.1], row=2, col=2)
    fig.update_yaxes(**log_axis(r.smallest_pairwise_angle.ravel(), ANGLE_FLOOR), row=2, col=3)
    fig.update_xaxes(title_text=t("legend.block"), row=2)  # a top-row title would run into the panel titles
    fig.update_annotations(font_size=s["font"])
    _layout(fig, state, t, t("fig.readouts.title"))
    fig.update_layout(height=s["height"] + (200 if state.projector else 60))
    notes = []
    if np.any(r.action_norm < size_floor) or np.any(r.smallest_pairwise_angle < ANGLE_FLOOR):
        notes.append(t("fig.readouts.floor", size=readable(VANISHED), angle=readable(ANGLE_FLOOR)))
    undefined = np.nonzero(np.any(np.isnan(r.action_cosine_to_input), axis=1))[0]
    if undefined.size:
        notes.append(t("fig.readouts.undefined", block=int(undefined[0])))
    if notes:
        fig.add_annotation(text="<br>".join(notes), xref="paper", yref="paper", x=0, y=-0.22, xanchor="left",
                           yanchor="top", align="left", showarrow=False,
                           font={"size": s["font"] - 2, "color": "#333333"})
    return fig


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
            row[t("table.length") + " · " + name] = f"{np.hypot(*v):.3f}"
        rows.append(row)
    return rows


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


def geometry_2d_figure(state: ExplorerState, t: Text, samples: int = 60, seed: int = 0) -> go.Figure:
    """Random 2-D vectors and where each normalization sends them (computed, not drawn by hand)."""


    s = _style(state)
    x = np.random.default_rng(seed).normal(scale=1.5, size=(samples, 2))
    identity = NormParams.identity(2)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t("geometry.rms_panel"), t("geometry.ln_panel")))
    for col, out in enumerate(
        (rms_norm(x, identity, 1e-5), layer_norm(x, identity, 1e-5)), start=1
    ):
        fig.add_trace(go.Scatter(x=x[:, 0], y=x[:, 1], mode="markers", name=t("geometry.inputs"),
                                 marker={"color": OTHER_TOKENS, "size": s["marker"] * 0.7}, showlegend=col == 1),
                      row=1, col=col)
        fig.add_trace(go.Scatter(x=out[:, 0], y=out[:, 1], mode="markers", name=t("geometry.outputs"),
                                 marker={"color": TARGET, "size": s["marker"]}, showlegend=col == 1),
                      row=1, col=col)
        _plane_axes(fig, t, x, row=1, col=col)
    _layout(fig, state, t, t("geometry.title_2d"))
    return fig


def geometry_3d_figure(state: ExplorerState, t: Text, samples: int = 200, seed: int = 0) -> go.Figure:
    """3-D LayerNorm outputs seen in the plane orthogonal to (1, 1, 1): a circle of radius sqrt(3)."""



    s = _style(state)
    x = np.random.default_rng(seed).normal(scale=1.5, size=(samples, 3))
    plane = layernorm_plane_coordinates(layer_norm(x, NormParams.identity(3), 1e-5))
    fig = go.Figure(go.Scatter(x=plane[:, 0], y=plane[:, 1], mode="markers", name=t("geometry.outputs"),
                               marker={"color": TARGET, "size": s["marker"] * 0.8}))
    _layout(fig, state, t, t("geometry.title_3d"))
    fig.update_xaxes(title_text=t("geometry.plane_u"), range=[-2.2, 2.2])
    fig.update_yaxes(title_text=t("geometry.plane_v"), range=[-2.2, 2.2], scaleanchor="x")
    return fig


def tokens_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """The sentence before any block: every token's embedding as an arrow from the origin."""
    s = _style(state)
    x = result.trace.stream[0]  # (batch, tokens, 2)
    example = state.example
    fig = go.Figure()
    for row, scenario in enumerate(state.scenarios):
        for i, name in enumerate(token_labels(example, scenario, t)):
            shared = i != example.context_slot
            if shared and row > 0:
                continue
            colour = "#000000" if i == example.action else (OTHER_TOKENS if shared else SCENARIO_COLOURS[scenario])
            v = x[row, i]
            name = plotly_text(name)
            fig.add_trace(go.Scatter(x=[0, v[0]], y=[0, v[1]], mode="lines+markers+text", name=name,
                                     text=["", name], textposition="top center",
                                     line={"color": colour, "width": s["line"] * (1.4 if i == example.action else 0.8)},
                                     marker={"size": [0, s["marker"]], "color": colour},
                                     textfont={"color": colour, "size": s["font"]}, showlegend=False,
                                     meta=name, hovertemplate="%{meta}: [%{x:.3f}, %{y:.3f}]<extra></extra>"))
    _layout(fig, state, t, t("fig.tokens.title"))
    _plane_axes(fig, t, x.reshape(-1, 2), example)
    return fig


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


FIGURES = {"tokens": tokens_figure, "block": block_figure, "depth": depth_figure, "readouts": readouts_figure}


def figure_state(name: str, state: ExplorerState) -> ExplorerState:
    """``state`` reduced to what view ``name`` reads, so that states showing the same figure share
    one cache entry: the block view reads no block after the one it opens (a block's stages do not
    depend on later blocks), the depth and readouts views read neither the block nor the stage in
    focus, and the tokens view only the sentence."""
    if name == "block":
        return replace(state, depth=state.shown_block, block=state.shown_block)
    if name in ("depth", "readouts"):
        return replace(state, block=1, focus=ExplorerState.focus)
    if name == "tokens":
        return replace(state, depth=1, block=1, focus=ExplorerState.focus)
    raise ValueError(f"{name!r} is not one of {tuple(FIGURES)}")
