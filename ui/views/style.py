"""What every figure shares: colours, sizes for the screen and the projector, the 2-D plane's
axes and log axes that tick whole powers of ten."""

from __future__ import annotations

import copy
import functools
import re
import unicodedata

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from blockstab.scenario import LESSON

from ..controls import ExplorerState
from ..examples import axis_names, plotly_text
from ..numbers import LARGE, vector_text
from ..text import Text

# Okabe-Ito: distinguishable with every common colour-vision deficiency (tests/views/test_colours.py);
# the two sentences also differ without colour: in marker shape and, along depth, in line dash.
SCENARIO_COLOURS = {"confirmed": "#0072B2", "not_confirmed": "#D55E00"}
SCENARIO_SYMBOLS = {"confirmed": "circle", "not_confirmed": "diamond"}
SCENARIO_DASHES = {"confirmed": "solid", "not_confirmed": "dashdot"}
OTHER_TOKENS = "#999999"
TARGET = "#009E73"
PLOTLY_WHITE = pio.templates["plotly_white"].to_plotly_json()
# Text is drawn darker than lines where a line colour would fall below WCAG AA (4.5:1 on white):
# projectors wash light text out. INK is Streamlit's own text colour.
INK = "#262730"
TEXT_COLOURS = {"#D55E00": "#B34700", OTHER_TOKENS: "#595959", TARGET: "#007A5A"}
# The most a chart title's line may hold, in Latin letters (a Chinese character counts as two):
# what fits the narrowest chart the app draws (a column on a 1024 px screen, a 390 px phone).
LINE_WIDTH = 32
SUM = re.compile(r"(?<=[\w)]) \+ (?=\w)")  # "x + F(x)": its spaces do not break a line
RIGHT_MARGIN = 20  # px


def text_colour(colour: str) -> str:
    """The colour to write text in for things drawn in ``colour``."""
    return TEXT_COLOURS.get(colour, colour)


def style(state: ExplorerState) -> dict:
    """Font, line and marker sizes and a figure's height: bigger in projector mode; on a desktop a figure is
    450 px high, so that a 1280×720 screen holds the Explorer's planes under its controls and verdict."""
    big = state.projector
    return {"font": 20 if big else 14, "line": 5 if big else 3, "marker": 16 if big else 10,
            "height": 420 if big else 480 if state.phone else 450}


def wrap(text: str, width: int = LINE_WIDTH) -> str:
    """``text`` broken into chart lines (``<br>``) of at most ``width`` columns: Latin words stay
    whole, Chinese may break between any two characters, and a wide character takes two columns; a
    sum such as ``x + F(x)`` is kept on one line."""
    lines, line, spaced = [], "", False  # spaced: the last break was at a space
    for piece in _pieces(SUM.sub("\u00a0+\u00a0", text)):
        if columns(line + piece) > width and line.strip():
            lines.append(line.rstrip())
            line, spaced = piece.lstrip(), piece.startswith(" ")
        else:
            line += piece
    if lines and columns(line.strip()) <= 2:  # never a lone "①" on a line of its own
        line = lines.pop() + (" " if spaced else "") + line
    return "<br>".join([*lines, line.rstrip()])


@functools.lru_cache(maxsize=4096)  # label placement measures the same names many times
def columns(text: str) -> int:
    """How many columns ``text`` takes: a wide (Chinese) character two, anything else one."""
    return sum(2 if _wide(c) else 1 for c in text)


def _wide(c: str) -> bool:
    return unicodedata.east_asian_width(c) in "WF"


def _pieces(text: str) -> list[str]:
    """Where a line may break: before a space or a wide character, never before closing
    punctuation, after an opening bracket, nor beside a no-break space."""
    pieces: list[str] = []
    for c in text:
        starts = c == " " or _wide(c) or (pieces and _wide(pieces[-1][-1]))
        opened = pieces and unicodedata.category(pieces[-1][-1]) in ("Ps", "Pi")
        glued = c == "\u00a0" or (pieces and pieces[-1][-1] == "\u00a0")  # a sum's no-break spaces
        if not pieces or (starts and not opened and not glued and unicodedata.category(c) not in ("Pe", "Po")):
            pieces.append(c)
        else:
            pieces[-1] += c
    return pieces


def xy_hover(points, before: str) -> dict:
    """A trace's hover for its points (n x 2) after ``before``, as the course writes a vector:
    ``[1.026, 1.978]`` by Plotly's own format, or, once a coordinate reaches 10⁴, each point
    written by :func:`ui.numbers.vector_text` (``[-7.89 × 10⁷⁸, 6.93 × 10⁷⁷]``): Plotly's format would
    write out all 79 digits. Trace properties."""
    points = np.asarray(points, dtype=float)
    if np.all(np.abs(points) < LARGE):
        return {"hovertemplate": before + "[%{x:.3f}, %{y:.3f}]<extra></extra>"}
    return {"customdata": [vector_text(p) for p in points], "hovertemplate": before + "%{customdata}<extra></extra>"}


def log_axis(values: np.ndarray, floor: float) -> dict:
    """A log axis over ``values`` (floored) that ticks whole powers of ten, written 10ⁿ: at least
    one decade, at most about six labels."""
    finite = values[np.isfinite(values)]
    finite = np.maximum(finite, floor) if finite.size else np.array([floor, 1.0])
    low = np.floor(np.log10(finite.min()))
    high = max(np.ceil(np.log10(finite.max())), low + 1)
    return {"type": "log", "range": [low - 0.1, high + 0.1], "dtick": max(1, int(np.ceil((high - low) / 6))),
            "exponentformat": "power", "showexponent": "all"}


def unvalidated(spec: dict) -> go.Figure:
    """A figure from plain dicts (``data``, ``layout``, ``frames``) without Plotly's per-property validation,
    which took longer than computing the numbers it draws (tests/views/test_unvalidated.py checks that
    validating each view accepts it and changes nothing), on :data:`PLOTLY_WHITE` unless its layout names a
    template (Plotly would validate its default template into the figure)."""
    return go.Figure({**spec, "layout": {"template": PLOTLY_WHITE, **spec.get("layout", {})}}, skip_invalid=False,
                     _validate=False)


def subplot_grid(rows: int, cols: int, titles: tuple[str, ...], vertical_spacing: float,
                 horizontal_spacing: float) -> dict:
    """A layout of panels as ``make_subplots`` lays them out (axes, domains, titles as annotations; no
    template): a copy of its own, since the grid is computed once per shape and language."""
    return copy.deepcopy(_grid(rows, cols, titles, vertical_spacing, horizontal_spacing))


@functools.lru_cache(maxsize=64)
def _grid(rows: int, cols: int, titles: tuple[str, ...], vertical_spacing: float, horizontal_spacing: float) -> dict:
    grid = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=vertical_spacing,
                         horizontal_spacing=horizontal_spacing).to_plotly_json()["layout"]
    grid.pop("template", None)
    return grid


def layout(fig: go.Figure, state: ExplorerState, t: Text, title: str) -> go.Figure:
    s = style(state)
    title = wrap(title)
    size, pad = s["font"] + 2, title_pad(state, title)
    fig.update_layout(
        title={"text": title, "font": {"size": size}, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": pad}},
        font={"size": s["font"]}, height=s["height"],
        margin={"l": 60, "r": RIGHT_MARGIN, "t": top_margin(state, title), "b": bottom_margin(state)},
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
    )
    fig.layout.template = PLOTLY_WHITE  # the template itself: an unvalidated figure would keep a name
    ink(fig)
    return fig


def bottom_margin(state: ExplorerState) -> int:
    """The room under a plot for its axis's tick labels and title (about four font sizes), and at
    least 80 px: a legend row."""
    return max(80, 4 * style(state)["font"] + 4)


def top_margin(state: ExplorerState, title: str) -> int:
    """The room above the plot for a (wrapped) title."""
    size, lines = style(state)["font"] + 2, title.count("<br>") + 1
    return max(50, title_pad(state, title) + int(1.3 * size * lines) + 12)


def title_pad(state: ExplorerState, title: str) -> int:
    """Plotly lifts a title's lines above a top anchor by about a line each."""
    return 8 + (style(state)["font"] + 2) * title.count("<br>")


def ink(fig: go.Figure) -> go.Figure:
    """Every piece of chart text not given a colour of its own in :data:`INK`, set on the figure
    itself: Streamlit's chart theme would otherwise draw ticks and axis titles in a light grey."""
    fig.update_layout(font_color=INK, title_font_color=INK, legend_font_color=INK)
    fig.update_xaxes(tickfont_color=INK, title_font_color=INK)
    fig.update_yaxes(tickfont_color=INK, title_font_color=INK)
    for annotation in fig.layout.annotations:
        if annotation.font.color is None:
            annotation.font.color = INK
    for slider in fig.layout.sliders:
        slider.font.color = INK
        slider.currentvalue.font.color = INK
    return fig


def ink_layout(layout: dict) -> dict:
    """:func:`ink` on a plain layout dict, for a figure built without Plotly's validation: the same
    colours set on the same keys (every axis the layout names, at least ``xaxis`` and ``yaxis``)."""
    layout.setdefault("font", {})["color"] = INK
    for key in ("title", "legend"):
        layout.setdefault(key, {}).setdefault("font", {})["color"] = INK
    layout.setdefault("xaxis", {})
    layout.setdefault("yaxis", {})
    for key in [key for key in layout if re.fullmatch(r"[xy]axis\d*", key)]:
        layout[key].setdefault("tickfont", {})["color"] = INK
        layout[key].setdefault("title", {}).setdefault("font", {})["color"] = INK
    for annotation in layout.get("annotations", ()):
        annotation.setdefault("font", {}).setdefault("color", INK)
    for slider in layout.get("sliders", ()):
        slider.setdefault("font", {})["color"] = INK
        slider.setdefault("currentvalue", {}).setdefault("font", {})["color"] = INK
    return layout


def plane_reach(points: np.ndarray) -> float:
    """How far the 2-D plane's axes reach each way from 0: every finite point, with room to spare."""
    finite = points[np.all(np.isfinite(points), axis=-1)]
    return max(1.6, float(np.abs(finite).max()) * 1.3) if finite.size else 2.0


def plane_axes(fig: go.Figure, t: Text, points: np.ndarray, example=LESSON, **where) -> None:
    reach = plane_reach(points)
    across, up = (plotly_text(name) for name in axis_names(example, t))
    fig.update_xaxes(title_text=across, range=[-reach, reach], zeroline=True, **where)
    fig.update_yaxes(title_text=up, range=[-reach, reach], zeroline=True,
                     scaleanchor="x" if not where else None, **where)
