"""Labels on the 2-D plane: each name where it covers no other name, marker or arrow."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.controls import ExplorerState
from ui.text import Text
from ui.views import explore
from ui.views.block import PHONE_PLANE, tokens_figure
from ui.views.depth import PHONE_PLANE as DEPTH_PHONE_PLANE
from ui.views.depth import depth_bottom, depth_figure
from ui.views.labels import (
    GAP,
    LINE_HEIGHT,
    POSITIONS,
    _box,
    _overlap,
    label_positions,
    plane_frame,
    segment_boxes,
    text_box,
)
from ui.views.style import style

FONT, MARKER = 14, 10


def boxes_of(points, texts, positions, font=FONT, markers=MARKER):
    """The box each label takes at its chosen position (the same geometry the placement uses)."""
    halves = np.broadcast_to(np.asarray(markers, dtype=float) / 2, len(points))
    return np.array([_box(x, y, *text_box(text, font), half + GAP, *POSITIONS[where])
                     for (x, y), text, where, half in zip(points, texts, positions, halves, strict=True) if text])


def ink(boxes, font):
    """The letters' part of each label's box: a line's box (1.25 font sizes) holds a quarter of a
    font size of spacing, and a letter's side bearing is about a pixel."""
    return boxes + np.array([1, (LINE_HEIGHT - 1) / 2 * font, -1, -(LINE_HEIGHT - 1) / 2 * font])


def overlapping_pairs(boxes, sliver=0.0):
    """How many pairs of boxes overlap by more than ``sliver`` pixels both ways."""
    across = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(boxes[:, None, 0], boxes[None, :, 0])
    up = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(boxes[:, None, 1], boxes[None, :, 1])
    hit = (across > sliver) & (up > sliver)
    np.fill_diagonal(hit, False)
    return int(np.count_nonzero(hit)) // 2


def test_two_neighbours_with_a_free_side_each_do_not_collide():
    # Centred labels on two points 30 px apart would overlap; each has room on its own side.
    points = np.array([[0.0, 0.0], [30.0, 0.0]])
    texts = ["after deploy", "errors"]
    positions = label_positions(points, texts, FONT, MARKER)
    assert overlapping_pairs(boxes_of(points, texts, positions)) == 0
    markers = np.column_stack([points - MARKER / 2, points + MARKER / 2])
    assert _overlap(boxes_of(points, texts, positions), markers).sum() == 0


def test_a_label_keeps_off_an_arrow():
    tip = np.array([[100.0, 10.0]])  # a long, nearly flat arrow from the origin
    where = label_positions(tip, ["not confirmed"], FONT, MARKER, obstacles=segment_boxes(np.zeros((1, 2)), tip))
    box = boxes_of(tip, ["not confirmed"], where)
    assert _overlap(box, segment_boxes(np.zeros((1, 2)), tip)).sum() == 0
    assert where != ["middle left"]  # (which lies on the arrow itself)


def test_a_label_stays_inside_its_bounds_when_it_can():
    point = np.array([[95.0, 0.0]])  # near the right edge of a 200 px wide plot
    where = label_positions(point, ["rollback"], FONT, MARKER, bounds=(-100, -100, 100, 100))
    left, bottom, right, top = boxes_of(point, ["rollback"], where)[0]
    assert left >= -100 and right <= 100 and bottom >= -100 and top <= 100


def test_a_line_break_makes_a_label_narrower_and_taller():
    one, two = text_box("errors = after deploy", FONT), text_box("errors<br>= after deploy", FONT)
    assert two[0] < one[0] and two[1] == 2 * one[1]
    assert text_box("回滚", FONT)[0] == text_box("abcd", FONT)[0]  # a wide character takes two columns


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), min_size=1, max_size=8, unique=True),
       st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=12), min_size=8, max_size=8))
def test_labels_on_points_far_enough_apart_never_overlap(cells, names):
    """On a grid whose spacing exceeds any label's reach, every first choice is free: no two labels
    overlap, and none covers a marker."""
    spacing = 2 * (text_box("x" * 12, FONT)[0] + MARKER + GAP)
    points = np.array(cells, dtype=float) * spacing
    texts = names[:len(points)]
    positions = label_positions(points, texts, FONT, MARKER)
    assert all(p in POSITIONS for p in positions) and len(positions) == len(points)
    boxes = boxes_of(points, texts, positions)
    assert overlapping_pairs(boxes) == 0
    assert _overlap(boxes, np.column_stack([points - MARKER / 2, points + MARKER / 2])).sum() == 0


@pytest.mark.parametrize("state", [ExplorerState(projector=True), ExplorerState(), ExplorerState(phone=True),
                                   ExplorerState(residual=False), ExplorerState(norm=False),
                                   ExplorerState(norm_kind="layernorm", projector=True)],
                         ids=["projector", "screen", "phone", "no-residual", "no-norm", "layernorm"])
def test_the_lesson_s_token_names_never_overlap(state):
    """At the scale the figures expect (their own margins and axis range): on the sentence before
    any block, and at every block of the depth view, no name covers another."""
    s, result = style(state), explore(state)
    fig = tokens_figure(state, result, Text("en"))
    scale = plane_frame(state, fig.layout.yaxis.range[1], fig.layout.margin.t, fig.layout.margin.b, PHONE_PLANE)[0]
    tips = np.array([[tr.x[1], tr.y[1]] for tr in fig.data]) * scale
    texts = [tr.text[1] for tr in fig.data]
    boxes = boxes_of(tips, texts, [tr.textposition for tr in fig.data], s["font"], s["marker"])
    assert overlapping_pairs(ink(boxes, s["font"])) == 0

    fig = depth_figure(state, result, Text("en"))
    scale = plane_frame(state, fig.layout.yaxis.range[1], fig.layout.margin.t, depth_bottom(s["font"])[1],
                         DEPTH_PHONE_PLANE, height=fig.layout.height)[0]
    for frame in fig.frames:
        points = np.vstack([np.column_stack([tr.x, tr.y]) for tr in frame.data]) * scale
        texts = [text.strip() for tr in frame.data for text in tr.text]  # (a blank names no point)
        positions = [where for tr in frame.data for where in tr.textposition]
        sizes = [s["marker"] * (1 if i % 2 == 0 else 2) for i, tr in enumerate(frame.data) for _ in tr.text]
        boxes = boxes_of(points, texts, positions, s["font"] - 2, np.array(sizes))
        assert overlapping_pairs(ink(boxes, s["font"] - 2)) == 0, (frame.name, [t for t in texts if t], positions)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("state", [ExplorerState(residual=False, projector=True), ExplorerState(projector=True),
                                   ExplorerState(norm=False, projector=True)],
                         ids=["no-residual", "all-on", "no-norm"])
def test_the_projector_s_depth_view_keeps_names_off_the_paths_and_within_the_plot_s_width(state, lang):
    """In projector mode, on the figure's opening block, no name lies on a sentence's path (its
    line, its markers) and no name is wider than the plot: with the residual off, the merged
    five-name label crossed the path and ran behind the colour bar. (In a narrow plot a name may
    have to cross a line: the placement prefers that to covering a name or a marker.)"""
    s = style(state)
    fig = depth_figure(state, explore(state), Text(lang))
    scale, bounds = plane_frame(state, fig.layout.yaxis.range[1], fig.layout.margin.t, depth_bottom(s["font"])[1],
                                DEPTH_PHONE_PLANE, height=fig.layout.height)
    paths = [np.column_stack([tr.x, tr.y]) * scale for tr in fig.data[:len(state.scenarios)]]
    lines = np.vstack([segment_boxes(p[:-1], p[1:]) for p in paths])
    dots = np.vstack(paths)
    dots = np.column_stack([dots - s["marker"] * 0.3, dots + s["marker"] * 0.3])
    frame = fig.frames[-1]
    points = np.vstack([np.column_stack([tr.x, tr.y]) for tr in frame.data]) * scale
    texts = [text.strip() for tr in frame.data for text in tr.text]
    positions = [where for tr in frame.data for where in tr.textposition]
    sizes = [s["marker"] * (1 if i % 2 == 0 else 2) for i, tr in enumerate(frame.data) for _ in tr.text]
    boxes = ink(boxes_of(points, texts, positions, s["font"] - 2, np.array(sizes)), s["font"] - 2)
    assert _overlap(boxes, np.vstack([lines, dots])).sum() == 0, [t for t in texts if t]
    assert np.all(boxes[:, 2] - boxes[:, 0] <= bounds[2] - bounds[0]), [t for t in texts if t]
