"""Where each point's name goes on a 2-D plane, so that no name is printed over another name, a
point or an arrow: a greedy choice among Plotly's eight text positions around a point, measured
in screen pixels (the plane's axes are equal, so one scale serves both) on the narrowest plot the
app draws."""

from __future__ import annotations

import numpy as np

from ..controls import ExplorerState
from .style import columns, style

# Plotly's text positions around a marker, in the order they are tried, with the direction each
# moves the text's box: (-1, 0, 1) across for left / centre / right, the same up.
POSITIONS = {"top center": (0, 1), "bottom center": (0, -1), "middle right": (1, 0), "middle left": (-1, 0),
             "top right": (1, 1), "top left": (-1, 1), "bottom right": (1, -1), "bottom left": (-1, -1)}
CHAR_WIDTH = 0.55  # a Latin letter's width, in font sizes (a wide character counts as two letters)
LINE_HEIGHT = 1.25  # in font sizes
GAP = 3  # px between a marker's edge and its text
PROJECTOR_WIDER = 2.2  # a plane's plot in projector mode, wide over high, at 1024 px or more
AXIS_ROOM = 3.2  # font sizes under a plot for its tick labels and axis title
LINE_WEIGHT = 0.2  # a name over a line is still read; over a name or a marker, it is not
LEGEND_ROW = 1.6  # a legend row's height, in font sizes
LEGEND_SYMBOL = 45  # px a legend entry takes besides its text (the line sample, gaps)
LEGEND_WIDTH = {"projector": 560, "phone": 330, "desktop": 300}  # px: the narrowest a column's legend gets


def plane_frame(state: ExplorerState, reach: float, top: int, bottom: int, phone_width: int,
                height: int | None = None) -> tuple[float, tuple]:
    """Pixels per unit of a plane drawn ``[-reach, reach]`` on equal axes in a figure ``height``
    high (else the style's) with these margins, and the box (pixels, around the origin) its labels
    should stay in (the plot, which clips them). The figure must keep its margins (no
    legend or slider may make Plotly grow them: a browser test checks). The server does not know
    the browser's width: the plot is taken as ``phone_width`` wide (at most as wide as high), the
    narrowest it is drawn (a phone, a lesson's column in a 1024 px window), and the box is that
    plot's square, so a name placed for it also fits a wider plot; in projector mode the plot is
    :data:`PROJECTOR_WIDER` times its height, whose scale no wider window changes."""
    height = (height or style(state)["height"]) - top - bottom
    if state.projector:
        width = height * PROJECTOR_WIDER
        return height / (2 * reach), (-width / 2, -height / 2, width / 2, height / 2)
    # A wider plot (up to as wide as high) draws the points farther out, up and down too, while a
    # name keeps its size: a name inside the narrowest plot's square stays inside every such plot.
    width = min(height, phone_width)
    return width / (2 * reach), (-width / 2, -width / 2, width / 2, width / 2)


def text_box(text: str, font: float) -> tuple[float, float]:
    """A label's width and height in pixels (lines broken by ``<br>``)."""
    lines = text.split("<br>")
    return max(map(columns, lines)) * CHAR_WIDTH * font, len(lines) * LINE_HEIGHT * font


def label_positions(points: np.ndarray, texts: list[str], font: float, markers: float | np.ndarray,
                    obstacles: np.ndarray | None = None, bounds: tuple | None = None,
                    lines: np.ndarray | None = None) -> list[str]:
    """One text position per point (pixels, y up; ``markers``: each point's marker size). Labels
    are placed one at a time, each at the first position that overlaps no label already placed, no
    other marker and no ``obstacles`` (boxes: left, bottom, right, top) and stays inside
    ``bounds`` (a box), else where it overlaps (or sticks out) least; ``lines`` (boxes along a
    line a name may cross, as it stays readable) count :data:`LINE_WEIGHT` of their overlap. Of
    four orders (as given, the widest label first, and both reversed) the one with the least
    overlap in all wins, and then each label moves while moving lowers the overlap. An empty text
    keeps "top center" and takes no room."""
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    halves = np.broadcast_to(np.asarray(markers, dtype=float) / 2, len(points))
    marker_boxes = np.column_stack([points - halves[:, None], points + halves[:, None]])
    fixed = np.asarray(obstacles, dtype=float).reshape(-1, 4) if obstacles is not None else np.empty((0, 4))
    candidates = {}  # label index -> its boxes at every position, and their overlap with what stays put
    for i, ((x, y), text) in enumerate(zip(points, texts, strict=True)):
        if text:
            width, height = text_box(text, font)
            boxes = np.array([_box(x, y, width, height, halves[i] + GAP, *way) for way in POSITIONS.values()])
            cost = _overlap(boxes, np.vstack([np.delete(marker_boxes, i, axis=0), fixed])).sum(axis=1)
            if lines is not None:
                cost += LINE_WEIGHT * _overlap(boxes, np.reshape(lines, (-1, 4))).sum(axis=1)
            if bounds is not None:
                cost += np.prod(boxes[:, 2:] - boxes[:, :2], axis=1) - _overlap(boxes, np.array([bounds]))[:, 0]
            candidates[i] = boxes, cost
    widest_first = sorted(candidates, key=lambda i: -text_box(texts[i], font)[0])
    orders = (list(candidates), widest_first, widest_first[::-1], list(candidates)[::-1])
    tries = [_place_in_order(order, candidates) for order in orders]
    best = _settle(min(tries, key=lambda tried: tried[1])[0], candidates)
    names = list(POSITIONS)
    return [names[best[i]] if i in best else "top center" for i in range(len(points))]


def _place_in_order(order: list[int], candidates: dict) -> tuple[dict, float]:
    """Each label in ``order`` at its least overlapping position (the first, of equals) given those
    placed before it; the choice and its total overlap."""
    placed, chosen, total = [], {}, 0.0
    for i in order:
        boxes, cost = candidates[i]
        overlap = cost + (_overlap(boxes, np.vstack(placed)).sum(axis=1) if placed else 0)
        chosen[i] = int(np.argmin(overlap))
        total += overlap[chosen[i]]
        placed.append(boxes[chosen[i]][None])
    return chosen, total


def _settle(chosen: dict, candidates: dict, rounds: int = 4) -> dict:
    """Move each label, one at a time, to its least overlapping position given all the others,
    while that lowers the overlap (a few rounds)."""
    chosen = dict(chosen)
    for _ in range(rounds):
        moved = False
        for i, (boxes, cost) in candidates.items():
            others = [candidates[j][0][k][None] for j, k in chosen.items() if j != i]
            overlap = cost + (_overlap(boxes, np.vstack(others)).sum(axis=1) if others else 0)
            best = int(np.argmin(overlap))
            if overlap[best] < overlap[chosen[i]] - 1e-9:
                chosen[i], moved = best, True
        if not moved:
            break
    return chosen


def segment_boxes(starts: np.ndarray, ends: np.ndarray, step: float = 6.0) -> np.ndarray:
    """Small boxes along straight lines (pixels), for a label to keep off an arrow: ``count`` evenly
    spaced points on each line, ends included (as ``np.linspace``), all lines at once."""
    a, b = np.reshape(starts, (-1, 2)), np.reshape(ends, (-1, 2))
    counts = np.maximum(2, (np.hypot(*(b - a).T) // step).astype(int) + 1)
    line = np.repeat(np.arange(len(a)), counts)
    fraction = (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)) / (counts[line] - 1)
    points = np.where(fraction[:, None] == 1, b[line], a[line] + (b - a)[line] * fraction[:, None])
    return np.column_stack([points - 1.5, points + 1.5])


def _box(x: float, y: float, width: float, height: float, off: float, across: int, up: int) -> list[float]:
    left = x - width / 2 if across == 0 else (x + off if across > 0 else x - off - width)
    bottom = y - height / 2 if up == 0 else (y + off if up > 0 else y - off - height)
    return [left, bottom, left + width, bottom + height]


def _overlap(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Area shared by each of ``boxes`` with each of ``others`` (both rows of left, bottom, right, top)."""
    if not len(others):
        return np.zeros((len(boxes), 1))
    across = np.minimum(boxes[:, None, 2], others[None, :, 2]) - np.maximum(boxes[:, None, 0], others[None, :, 0])
    up = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(boxes[:, None, 1], others[None, :, 1])
    return np.clip(across, 0, None) * np.clip(up, 0, None)


def legend_rows(names: list[str], font: float, width: float) -> int:
    """How many rows a horizontal legend of ``names`` takes ``width`` pixels wide."""
    rows, used = 1, 0.0
    for name in names:
        entry = text_box(name, font)[0] + LEGEND_SYMBOL
        if used and used + entry > width:
            rows, used = rows + 1, 0.0
        used += entry
    return rows


def legend_below(names: list[str], height: int, top: int, state: ExplorerState) -> dict:
    """The layout that puts a horizontal legend of ``names`` just under a plot's x axis's title, in
    a bottom margin that holds all its rows at the narrowest width the app draws it (the figure
    ``height`` px high, ``top`` px of it above the plot): placed from pixels, so a taller title or
    note (a lower plot) never lifts it onto the axis title, and Plotly never grows the margin."""
    font = style(state)["font"]
    width = LEGEND_WIDTH["projector" if state.projector else "phone" if state.phone else "desktop"]
    axis = int(AXIS_ROOM * font) + 4
    bottom = axis + int(legend_rows(names, font, width) * LEGEND_ROW * font) + 8
    return {"margin": {"b": bottom}, "legend": {"y": -axis / (height - top - bottom), "yanchor": "top"}}
