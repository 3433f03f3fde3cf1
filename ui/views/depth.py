"""Across depth: the tokens block by block (a slider and play button in the browser) and six
readouts that cannot hide a merge."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go

from blockstab.readouts import settled_block, token_groups

from ..controls import ExplorerState
from ..examples import plotly_text, side_name, token_labels
from ..numbers import readable, vector_text
from ..text import Text
from ..verdicts import OWN_DIRECTION, VANISHED
from .cut import apply_cut
from .exploration import Exploration
from .labels import label_positions, plane_frame, segment_boxes, text_box
from .style import (
    INK,
    OTHER_TOKENS,
    SCENARIO_COLOURS,
    SCENARIO_DASHES,
    SCENARIO_SYMBOLS,
    TARGET,
    layout,
    log_axis,
    plane_axes,
    plane_reach,
    style,
    subplot_grid,
    text_colour,
    title_pad,
    top_margin,
    unvalidated,
    wrap,
)

PHONE_PLANE = 210  # px: the plot's width on a 390 px phone, beside its colour bar
PROJECTOR_TALLER = 40  # px: the projector's plane is short and wide; a little more height fits the names
GROUP_JOINERS = (" = ", "<br>= ")  # "errors = after deploy": on one line in projector mode's wide
# plot, else a name a line ("errors / = after deploy"), as one line would not fit a narrow plot
VIRIDIS = plotly.colors.get_colorscale("Viridis")  # as validation writes it (Plotly.js's own has other stops)
PANEL_TITLE_WIDTH = 22  # a readouts panel title's line, in columns (ui.views.style.wrap)
BLANK = " "  # an unlabelled point's text: Plotly deletes the text node of an empty label for good, so a
# label that is empty in one frame of an animation would never come back in a later frame
AXIS_ROOM = 64  # px under a plot for its tick labels and axis title as Streamlit's chart theme draws them
# (12 px ticks, a 20 px stand-off, a 14 px title)
ANGLE_FLOOR = 1e-9  # degrees: a smaller angle between two tokens is drawn at this floor (same vector)


def depth_bottom(font: int) -> tuple[int, int]:
    """Pixels under the depth plane: to the play button and slider (its tick labels and axis
    title), and in all. Both are anchored in pixels below the plot, inside this margin, so Plotly
    never grows the margin, and the plot is as high as the label placement expects."""
    axis = int(2.6 * font) + 12
    return axis, axis + int(2.6 * font) + 50


def depth_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """Across depth: the action token's path; a slider and play button move through the blocks in
    the browser (Plotly frames), with every token of the sentence at the chosen block. Tokens that
    have merged (less than ``DISTINCT_DEGREES`` apart) share one label, "errors = after deploy",
    and the action token is a ring, so a token under it still shows.

    Drawn as every block's figure and its :func:`depth_cut` (``ui.views.cut``). Built from plain
    dicts and wrapped without Plotly's per-property validation: validating ``depth + 1`` frames of
    traces cost 64 ms at depth 24 and 213 ms at depth 100 (docs/benchmarks.md). Each frame carries
    only the moving traces' positions and labels; their names and style stay on the figure's
    traces (``frame.traces`` says which), and Plotly.animate keeps them.
    """
    s = style(state)
    stream = result.trace.stream  # (depth + 1, batch, tokens, 2)
    depth = stream.shape[0] - 1
    drawing = _drawing(state, stream, t)
    moving = list(range(len(state.scenarios), 3 * len(state.scenarios)))
    groups = token_groups(stream)  # every block at once
    frames = [{"name": str(d), "traces": moving,
               "data": _moving_positions(stream, groups, d, state.example.action, drawing)}
              for d in range(depth + 1)]
    axis = depth_bottom(s["font"])[0]
    controls = {
        "sliders": [{
            "active": depth, "currentvalue": {"prefix": t("legend.block") + ": "}, "x": 0.12, "len": 0.88,
            "y": 0, "yanchor": "top", "pad": {"t": axis, "b": 0}, "font": {"size": s["font"] - 2},
            "steps": [{"label": str(d), "method": "animate",
                       "args": [[str(d)], {"mode": "immediate", "frame": {"duration": 0, "redraw": False},
                                           "transition": {"duration": 0}}]} for d in range(depth + 1)],
        }],
        "updatemenus": [{
            "type": "buttons", "x": 0, "y": 0, "xanchor": "left", "yanchor": "top", "direction": "left",
            "pad": {"t": axis + int(1.6 * s["font"])},
            "buttons": [{"label": "▶", "method": "animate",
                         "args": [None, {"frame": {"duration": 120, "redraw": False}, "fromcurrent": True,
                                         "transition": {"duration": 0}}]}],
        }],
    }
    fig = depth_plane(state, result, t, frames, controls)
    return apply_cut(fig, _cut(state, stream, t, drawing, frames[-1]["data"]))


def depth_cut(state: ExplorerState, result: Exploration, t: Text, n: int) -> dict:
    """The depth view of ``result``'s first ``n`` blocks as a cut of the view of all its blocks
    (``ui.views.cut``; without the animation, whose frames only the full view carries)."""
    stream = result.trace.stream[:n + 1]
    groups = token_groups(stream[n:])
    return _cut(state, stream, t, drawing := _drawing(state, stream, t),
                _moving_positions(stream[n:], groups, 0, state.example.action, drawing))


def depth_plane(state: ExplorerState, result: Exploration, t: Text, frames: list = (),
                controls: dict | None = None) -> go.Figure:
    """The depth view of every block before its cut: each sentence's action-token path, and the
    style of the traces that show the tokens at one block (with the animation's ``frames`` and
    ``controls`` for the full view; without them the figure is shorter by the slider's room, its
    plot the same size, so every name is placed as in the full view)."""
    s = style(state)
    stream = result.trace.stream
    blocks = np.arange(stream.shape[0])
    data = []
    for row, scenario in enumerate(state.scenarios):
        path = stream[:, row, state.example.action]
        data.append({
            "type": "scatter", "x": path[:, 0], "y": path[:, 1], "mode": "lines+markers",
            "name": t("legend.path", scenario=plotly_text(side_name(state.example, scenario, t))),
            "line": {"color": SCENARIO_COLOURS[scenario], "width": s["line"] / 2, "dash": SCENARIO_DASHES[scenario]},
            "marker": {"size": _path_marker(state), "color": blocks, "colorscale": VIRIDIS,
                       "symbol": SCENARIO_SYMBOLS[scenario],
                       "showscale": row == 0, "colorbar": {"title": {"text": t("legend.block"), "font": {"color": INK}},
                                                           "tickfont": {"color": INK}, "x": 1.02, "tick0": 0}},
            # each block's vector written as the course writes it (ui.numbers: 7.89 × 10⁷⁸, not 79 digits)
            "customdata": [[int(b), vector_text(p)] for b, p in zip(blocks, path, strict=True)],
            "hovertemplate": t("hover.block") + " %{customdata[0]}: %{customdata[1]}<extra></extra>",
        })
    for scenario in state.scenarios:
        data.append({"type": "scatter", "mode": "markers+text", "hoverinfo": "text", "cliponaxis": False,
                     "marker": {"color": OTHER_TOKENS, "size": s["marker"], "opacity": 0.8},
                     "textfont": {"color": text_colour(SCENARIO_COLOURS[scenario]), "size": s["font"] - 2},
                     "name": t("legend.other_tokens"), "showlegend": False})
        data.append({"type": "scatter", "mode": "markers+text", "name": t("legend.now"), "showlegend": False,
                     "cliponaxis": False,
                     "textfont": {"color": text_colour(SCENARIO_COLOURS[scenario]), "size": s["font"] - 2},
                     "marker": {"color": SCENARIO_COLOURS[scenario], "size": s["marker"] * 2,
                                "symbol": f"{SCENARIO_SYMBOLS[scenario]}-open",
                                "line": {"width": 4}}})
    fig = unvalidated({"data": data, "layout": controls or {}, "frames": list(frames)})
    layout(fig, state, t, t("fig.depth.title", depth=stream.shape[0] - 1))
    axis, bottom = depth_bottom(s["font"])
    below = bottom if frames else max(axis, AXIS_ROOM)  # without the animation, no room for its slider
    # (the plot keeps its size)
    fig.update_layout(showlegend=False, margin={"b": below}, height=_plane_height(state) - (bottom - below))
    plane_axes(fig, t, stream.reshape(-1, 2), state.example)
    return fig


@dataclass(frozen=True)
class _Drawing:
    """How the depth view draws a stream's blocks: its note, the room above the plot, and the
    look and placement of the tokens' names (:func:`_moving_positions`)."""

    note: str
    top: int
    look: dict
    place: Callable


def _drawing(state: ExplorerState, stream: np.ndarray, t: Text) -> _Drawing:
    """How the depth view draws every block of ``stream`` (``(blocks, batch, tokens, 2)``)."""
    s = style(state)
    depth = stream.shape[0] - 1
    bottom = depth_bottom(s["font"])[1]
    height = _plane_height(state)
    paths, reach = stream[:, :, state.example.action], plane_reach(stream.reshape(-1, 2))
    # Whether the early blocks share one spot, at the scale of a plot under a two-line note (a taller
    # note only shrinks the plot, and the spot with it).
    crowded = crowded_until(paths, plane_frame(state, reach, 50 + int(2.5 * s["font"]), bottom, PHONE_PLANE,
                                               height=height)[0], _path_marker(state))
    note = _note(t, depth, settled_block(stream), crowded, lost_from(paths))
    title = wrap(t("fig.depth.title", depth=depth))
    top = 50 + int(1.25 * (note.count("<br>") + 1) * s["font"]) if note else top_margin(state, title)
    scale, bounds = plane_frame(state, reach, top, bottom, PHONE_PLANE, height=height)
    look = {"scale": scale, "marker": s["marker"], "font": s["font"] - 2, "joiner": GROUP_JOINERS[not state.projector],
            "width": 0.5 * (bounds[2] - bounds[0]),  # a wider name, on one line, leaves no room around it
            "inks": [text_colour(SCENARIO_COLOURS[scenario]) for scenario in state.scenarios],
            "names": [[plotly_text(n) for n in token_labels(state.example, side, t)] for side in state.scenarios]}
    place = functools.lru_cache(maxsize=None)(functools.partial(
        _label_positions, font=look["font"], bounds=bounds,
        lines=_path_boxes(paths * scale, _path_marker(state), bounds)))
    return _Drawing(note, top, look, place)


def _cut(state: ExplorerState, stream: np.ndarray, t: Text, drawing: _Drawing, tokens: list[dict]) -> dict:
    """The cut (``ui.views.cut``) that draws every block of ``stream``, its last block's ``tokens``
    (:func:`_moving_positions`) as :func:`_drawing` says."""
    depth, paths = stream.shape[0] - 1, len(state.scenarios)
    title, reach = wrap(t("fig.depth.title", depth=depth)), plane_reach(stream.reshape(-1, 2))
    font = style(state)["font"] - 2
    notes = [{"text": drawing.note, "xref": "paper", "yref": "paper", "x": 0, "y": 1, "xanchor": "left",
              "yanchor": "bottom", "showarrow": False, "align": "left", "font": {"size": font, "color": INK}}]
    return {
        "points": depth + 1, "along": list(range(paths)),
        "data": {**{row: {"marker": {"colorbar": {"dtick": max(1, int(np.ceil(depth / 5)))}}} for row in range(paths)},
                 **{paths + i: trace for i, trace in enumerate(tokens)}},
        "layout": {"title": {"text": title, "pad": {"t": title_pad(state, title)}}, "margin": {"t": drawing.top},
                   "xaxis": {"range": [-reach, reach]}, "yaxis": {"range": [-reach, reach]}},
        "notes": notes if drawing.note else [],  # (else the chart seems frozen, or blocks seem missing)
    }


def _path_marker(state: ExplorerState) -> float:
    return style(state)["marker"] * 0.6


def _plane_height(state: ExplorerState) -> int:
    return style(state)["height"] + PROJECTOR_TALLER * state.projector


def _note(t: Text, depth: int, settled: int, crowded: int, lost: int | None) -> str:
    """What the plane alone would hide, one fact a line: the later blocks look the same, the early
    ones share one spot, the last ones cannot be drawn ("" when none)."""
    notes = [t("fig.depth.settled", block=settled)] if settled < depth else []
    if crowded:
        notes.append(t("fig.depth.crowded", last=crowded))
    if lost is not None and lost < depth:
        notes.append(t("fig.depth.not_drawn", first=lost, last=depth))
    elif lost is not None:
        notes.append(t("fig.depth.not_drawn_one", first=lost))
    return "<br>".join(notes)


def crowded_until(paths: np.ndarray, scale: float, spot: float) -> int:
    """The last block up to which every sentence's action token is drawn within ``spot`` pixels
    of where it started (``paths``: ``(blocks, sentences, 2)``, ``scale`` pixels per unit) while a
    later block is over ten times as large, so the plane shows them as one point; 0 (no note)
    when fewer than three blocks share the spot."""
    sizes = np.hypot(paths[..., 0], paths[..., 1]).max(axis=1)  # (hypot: no overflow at 1e156)
    moved = paths - paths[0]
    near = np.all(np.hypot(moved[..., 0], moved[..., 1]) * scale <= spot, axis=1)
    last = int(np.argmin(near)) - 1 if not near.all() else len(near) - 1
    return last if last >= 2 and np.nanmax(sizes) > 10 * sizes[:last + 1].max() else 0


def lost_from(paths: np.ndarray) -> int | None:
    """The first block whose action token (``paths``: ``(blocks, sentences, 2)``) is not finite in
    some sentence, if no later block is finite either (the figure cannot draw them); else ``None``."""
    finite = np.isfinite(paths).all(axis=(1, 2))
    if finite.all():
        return None
    first = int(np.argmin(finite))
    return first if not finite[first:].any() else None


def group_labels(groups: np.ndarray, names: list[str], joiner: str = GROUP_JOINERS[0]) -> list[str]:
    """One label per group of merged tokens ("errors = after deploy"), on the
    group's first token (``groups``: one sentence's :func:`~blockstab.readouts.token_groups`); the
    other members get none, so merged labels never print on top of each other."""
    return [joiner.join(n for j, n in enumerate(names) if groups[j] == i) if groups[i] == i else ""
            for i in range(len(names))]


def _moving_positions(stream: np.ndarray, groups: np.ndarray, d: int, action: int, drawing: _Drawing) -> list[dict]:
    """Block ``d``'s moving traces: per scenario, every token with its group's label, then the
    action token's ring; each label where it overlaps no other (``drawing.place``, at ``look["scale"]``
    pixels per unit; a group's names joined by ``look["joiner"]``, a name a line if one line is wider
    than ``look["width"]``), in its sentence's text colour. A label the second sentence shares with
    the first, on the same spot, is written once, in the colour of the shared tokens. Plain float
    lists: Plotly converts each NumPy array through narwhals, which cost more than the rest of the
    frame; JSON keeps every float exactly."""
    look, names = drawing.look, drawing.look["names"]
    texts, points, sizes, inks = [], [], [], []
    for row in range(stream.shape[1]):
        labels = [_fitted(label, look) for label in group_labels(groups[d, row], names[row], look["joiner"])]
        alone = labels[action] == names[row][action]  # a lone action token is named beside its ring
        texts += [["" if alone and i == action else label for i, label in enumerate(labels)],
                  [names[row][action] if alone else ""]]
        points += [stream[d, row], stream[d, row, action][None]]
        sizes += [look["marker"]] * len(labels) + [2 * look["marker"]]  # the ring is twice a token's size
        inks += [[look["inks"][row]] * len(labels), [look["inks"][row]]]
    pixels = [np.round(pts * look["scale"]) for pts in points]
    for later in range(2, len(texts)):  # the second sentence's tokens, then its ring
        first = later % 2
        for i, text in enumerate(texts[later]):
            if text and text == texts[first][i] and np.array_equal(pixels[later][i], pixels[first][i]):
                texts[later][i], inks[first][i] = "", text_colour(OTHER_TOKENS)
    where = iter(drawing.place(tuple(np.vstack(pixels).ravel()), tuple(sum(texts, [])), tuple(sizes)))
    traces = []
    for text, pts, ink in zip(texts, points, inks, strict=True):
        traces.append({"type": "scatter", "x": pts[:, 0].tolist(), "y": pts[:, 1].tolist(),
                       "text": [label or BLANK for label in text], "textposition": [next(where) for _ in text],
                       "textfont": {"color": ink, "size": look["font"]}})
    for row, token_trace in enumerate(traces[::2]):
        token_trace["hovertext"] = names[row]
    return traces


def _fitted(label: str, look: dict) -> str:
    """A merged label on one line if it is at most ``look["width"]`` pixels wide, else a name a line."""
    if text_box(label, look["font"])[0] <= look["width"]:
        return label
    return label.replace(GROUP_JOINERS[0], GROUP_JOINERS[1])


def _path_boxes(paths: np.ndarray, marker: float, bounds: tuple) -> np.ndarray:
    """Boxes along each sentence's path (pixels, ``(blocks, sentences, 2)``; what leaves the plot
    ``bounds`` taken at its edge) and around its markers: a name kept off them stays readable
    where the path runs."""
    paths = np.clip(np.nan_to_num(paths, nan=0.0), bounds[:2], bounds[2:])
    lines = [segment_boxes(paths[:-1, row], paths[1:, row]) for row in range(paths.shape[1])]
    dots = paths.reshape(-1, 2)
    return np.vstack([*lines, np.column_stack([dots - marker / 2, dots + marker / 2])])


def _label_positions(pixels: tuple, texts: tuple, sizes: tuple, font: float, bounds: tuple,
                     lines: np.ndarray) -> tuple:
    """:func:`~ui.views.labels.label_positions` on hashable arguments, so a cache can serve the
    settled blocks, which repeat one frame."""
    return tuple(label_positions(np.reshape(pixels, (-1, 2)), list(texts), font, np.array(sizes),
                                 bounds=bounds, lines=lines))


def _floored(values: np.ndarray, floor: float) -> list:
    """Values for a log axis: below ``floor`` drawn at the floor, non-finite left out (a gap)."""
    return [None if not np.isfinite(v) else max(float(v), floor) for v in values]


def readouts_figure(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """Six readouts against depth that cannot hide a merge: the action token's size, its cosine to
    its start, its angle to the nearest other token, the angle between the two sentences, how many
    tokens are distinct, and the smallest angle between two tokens. Drawn as every block's panels
    and their :func:`readouts_cut` (``ui.views.cut``)."""
    depth = result.trace.stream.shape[0] - 1
    return apply_cut(readout_panels(state, result, t), readouts_cut(state, result, t, depth))


PANELS = ("norm", "nearest", "distinct", "cosine", "angle", "smallest")
PANEL_AXES = {p: "yaxis" + ("" if i == 0 else str(i + 1)) for i, p in enumerate(PANELS)}


def readout_panels(state: ExplorerState, result: Exploration, t: Text) -> go.Figure:
    """The readouts of every block before their cut: the panels, their traces and fixed axes."""
    s = style(state)
    r = result.readouts
    n = result.trace.stream.shape[2]
    blocks = np.arange(r.action_norm.shape[0])
    size_floor = _size_floor(result)
    # Two panels a row, whose titles (at most two lines) fit the tour's narrow column; on a phone
    # one a row.
    cols = 1 if state.phone else 2
    rows = len(PANELS) // cols
    titles = tuple(wrap(t("fig.readouts." + p, n=n), PANEL_TITLE_WIDTH) for p in PANELS)
    grid = subplot_grid(rows, cols, titles, min(0.3, 90 / (_panel_height(state) * rows)), 0.14)

    def on(panel: str, trace: dict) -> dict:  # the trace drawn in the panel's axes
        return {**trace, "xaxis": "x" + PANEL_AXES[panel][5:], "yaxis": "y" + PANEL_AXES[panel][5:]}

    data = []
    for row, scenario in enumerate(state.scenarios):
        line = {"color": SCENARIO_COLOURS[scenario], "width": s["line"] / 1.5, "dash": SCENARIO_DASHES[scenario]}
        common = {"type": "scatter", "x": blocks, "name": plotly_text(side_name(state.example, scenario, t)),
                  "legendgroup": scenario, "line": line, "mode": "lines+markers",
                  "marker": {"size": s["marker"] / 2.5, "symbol": SCENARIO_SYMBOLS[scenario]}}  # (a lone point shows)
        data += [
            on("norm", {**common, "y": _floored(r.action_norm[:, row], size_floor)}),
            on("nearest", {**common, "y": r.action_nearest_angle[:, row], "showlegend": False}),
            on("distinct", {**common, "y": r.distinct_tokens[:, row], "line": {**line, "shape": "hv"},
                            "showlegend": False}),
            on("cosine", {**common, "y": r.action_cosine_to_input[:, row], "showlegend": False}),
            on("smallest", {**common, "y": _floored(r.smallest_pairwise_angle[:, row], ANGLE_FLOOR),
                            "showlegend": False}),
        ]
    if state.norm_used != "none" and state.placement == "pre":  # what every sublayer reads
        data.append(on("norm", {"type": "scatter", "x": blocks, "y": np.full(blocks.shape, float(np.sqrt(2))),
                                "name": t("legend.normalized_copy"),
                                "line": {"color": TARGET, "dash": "dash", "width": s["line"] / 1.5}}))
    if len(state.scenarios) == 2:
        angle = np.where(r.scenario_angle < ANGLE_FLOOR, 0.0, r.scenario_angle)  # float noise is zero
        data.append(on("angle", {"type": "scatter", "x": blocks, "y": angle, "name": t("legend.angle"),
                                 "line": {"color": "#000000", "width": s["line"] / 1.5}}))
    else:
        grid["annotations"].append({"text": t("fig.readouts.angle_needs_two"), "xref": "x5 domain",
                                    "yref": "y5 domain", "x": 0.5, "y": 0.5, "showarrow": False,
                                    "font": {"color": "#555555"}})
    for annotation in grid["annotations"]:  # the panels' titles (and the note), a little smaller on a projector
        annotation["font"]["size"] = s["font"] - (2 if state.projector else 0)
    grid["shapes"] = [{"type": "line", "xref": "x2 domain", "yref": "y2", "x0": 0, "x1": 1, "y0": OWN_DIRECTION,
                       "y1": OWN_DIRECTION, "line": {"color": "#555555", "dash": "dot", "width": 1}}]  # own direction
    grid[PANEL_AXES["nearest"]]["rangemode"] = "tozero"
    grid[PANEL_AXES["distinct"]].update(range=[0, n + 0.5], dtick=1 if n <= 8 else 2)
    grid[PANEL_AXES["cosine"]]["range"] = [-1.05, 1.05]
    for panel in PANELS[-cols:]:  # the bottom row's: a higher title would run into the panel titles
        grid["x" + PANEL_AXES[panel][1:]]["title"] = {"text": t("legend.block")}
    fig = unvalidated({"data": data, "layout": grid})
    layout(fig, state, t, t("fig.readouts.title"))
    fig.update_layout(margin={"t": _readouts_top(state)}, legend={"y": -3.4 * s["font"] / _plot_height(state)})
    return fig


def readouts_cut(state: ExplorerState, result: Exploration, t: Text, n: int) -> dict:
    """The readouts of ``result``'s first ``n`` blocks as a cut of the readouts of all its blocks
    (``ui.views.cut``): their axes' ranges, and notes under the panels on what they draw at a floor
    or cannot draw."""
    s = style(state)
    r = result.readouts
    size_floor = _size_floor(result)
    norms, smallest = r.action_norm[:n + 1], r.smallest_pairwise_angle[:n + 1]
    notes = []
    if np.any(norms < size_floor) or np.any(smallest < ANGLE_FLOOR):
        notes.append(t("fig.readouts.floor", size=readable(VANISHED), angle=readable(ANGLE_FLOOR)))
    undefined = np.nonzero(np.any(np.isnan(r.action_cosine_to_input[:n + 1]), axis=1))[0]
    if undefined.size:
        notes.append(t("fig.readouts.undefined", block=int(undefined[0])))
    note = "<br>".join(wrap(n, 48) for n in notes)
    # Below the panels, in pixels: the axis title, the legend (two rows on a phone), then the notes.
    below_legend = (5.4 + 1.6 * state.phone) * s["font"]
    bottom = int(below_legend + 1.1 * s["font"] + 1.3 * (s["font"] - 2) * (note.count("<br>") + 1) * bool(note))
    plot_height = _plot_height(state)
    top = float(np.nanmax(np.concatenate([r.scenario_angle[:n + 1], [5.0]])))
    traces = (5 * len(state.scenarios) + (state.norm_used != "none" and state.placement == "pre")
              + (len(state.scenarios) == 2))  # as _readout_panels adds them
    return {
        "points": n + 1, "along": list(range(traces)), "data": {},
        "layout": {PANEL_AXES["norm"]: log_axis(norms.ravel(), size_floor),
                   PANEL_AXES["angle"]: {"range": [0, top * 1.1]},
                   PANEL_AXES["smallest"]: log_axis(smallest.ravel(), ANGLE_FLOOR),
                   "height": plot_height + _readouts_top(state) + bottom, "margin": {"b": bottom}},
        "notes": [{"text": note, "xref": "paper", "yref": "paper", "x": 0, "y": -below_legend / plot_height,
                   "xanchor": "left", "yanchor": "top", "align": "left", "showarrow": False,
                   "font": {"size": s["font"] - 2, "color": "#333333"}}] if note else [],
    }


def _size_floor(result: Exploration) -> float:
    """The action token's size below which the readouts draw it at the floor: vanished."""
    return VANISHED * float(result.readouts.action_norm[0].min())


def _panel_height(state: ExplorerState) -> int:
    return 230 if state.projector else 190  # the plot and its two-line title


def _plot_height(state: ExplorerState) -> int:
    return _panel_height(state) * len(PANELS) // (1 if state.phone else 2)


def _readouts_top(state: ExplorerState) -> int:
    return 50 + int(2.6 * style(state)["font"])  # the title clears the first panel titles
