"""Each view in words (ui/views/describe.py) states the engine's numbers, per sentence: each number a
description gives is recomputed here from the run and found in it, and a failure (an overflow, a
stream gone to zero) is said, never hidden behind a dash."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockstab.scenario import PRESETS
from ui.bundle import SETTINGS
from ui.controls import MAX_EXPLORER_DEPTH, STAGE_FOCUS, ExplorerState
from ui.examples import side_name, token_labels
from ui.numbers import fixed, readable, vector_text
from ui.text import Text
from ui.views import explore
from ui.views.describe import (
    block_description,
    depth_description,
    geometry_2d_description,
    geometry_3d_description,
    readouts_description,
    tokens_description,
)
from ui.views.geometry import geometry_2d_figure, geometry_3d_figure

STATES = st.builds(lambda setting, depth, block, focus, scenario, example: ExplorerState(
    **setting, depth=depth, block=block, focus=focus, scenario=scenario, example=PRESETS[example]),
    st.sampled_from(SETTINGS), st.integers(1, MAX_EXPLORER_DEPTH), st.integers(1, 24), st.sampled_from(STAGE_FOCUS),
    st.sampled_from(("both", "confirmed", "not_confirmed")), st.sampled_from(sorted(PRESETS)))
LANGS = st.sampled_from(("en", "zh"))


def first_lost(stream: np.ndarray, row: int) -> int | None:
    bad = [d for d in range(stream.shape[0]) if not np.all(np.isfinite(stream[d, row]))]
    return bad[0] if bad else None


@settings(max_examples=60, deadline=None)
@given(state=STATES, lang=LANGS)
def test_the_block_view_says_where_each_action_token_is_at_the_stage_in_focus(state, lang):
    t, result = Text(lang), explore(state)
    text = block_description(state, result, t)
    stage = result.trace.stages.index(state.focus)
    assert f"{state.shown_block}" in text
    for row, side in enumerate(state.scenarios):
        v = result.trace.values[state.shown_block - 1, stage, row, state.example.action]
        said = text.split(f"“{side_name(state.example, side, t)}”")[1]
        assert said.count(vector_text(v)) >= 1 and fixed(float(math.hypot(*v))) in said
        if np.all(np.isfinite(v)) and np.any(v != 0):
            assert f"{math.degrees(math.atan2(v[1], v[0])):.0f}°" in said


@settings(max_examples=60, deadline=None)
@given(state=STATES, lang=LANGS)
def test_the_depth_view_says_where_each_trail_ends_or_from_which_block_it_overflowed(state, lang):
    t, result = Text(lang), explore(state)
    text = depth_description(state, result, t)
    stream = result.trace.stream
    for row, side in enumerate(state.scenarios):
        said = text.split(f"“{side_name(state.example, side, t)}”")[1]
        assert vector_text(stream[0, row, state.example.action]) in said
        lost = first_lost(stream, row)
        if lost is None:
            end = stream[-1, row, state.example.action]
            assert vector_text(end) in said and fixed(float(math.hypot(*end))) in said
            assert f"{int(result.readouts.distinct_tokens[-1, row])}" in said
        else:
            assert "—" not in said and str(lost) in said


@settings(max_examples=60, deadline=None)
@given(state=STATES, lang=LANGS)
def test_the_readouts_say_each_sentences_size_nearest_angle_and_distinct_tokens(state, lang):
    t, result = Text(lang), explore(state)
    text, r, stream = readouts_description(state, result, t), result.readouts, result.trace.stream
    for row, side in enumerate(state.scenarios):
        said = text.split(f"“{side_name(state.example, side, t)}”")[1]
        size = r.action_norm[:, row]
        assert readable(float(size[0])) in said
        lost = first_lost(stream, row)
        if lost is not None:
            assert readable(float(size[lost - 1])) in said and str(lost) in said and "—" not in said
        else:
            assert readable(float(size[-1])) in said
            if size[-1] > 0:
                assert readable(float(r.action_nearest_angle[-1, row])) in said
                assert str(int(r.distinct_tokens[-1, row])) in said
    if len(state.scenarios) == 2 and math.isfinite(r.scenario_angle[-1]):
        assert readable(float(r.scenario_angle[-1])) + "°" in text


@settings(max_examples=20, deadline=None)
@given(state=STATES, lang=LANGS)
def test_the_tokens_view_lists_every_token_of_the_sentence(state, lang):
    t, result = Text(lang), explore(state)
    text = tokens_description(state, result, t)
    x = result.trace.stream[0]
    for i, name in enumerate(token_labels(state.example, state.scenarios[0], t)):
        assert f"{name} {vector_text(x[0, i])}" in text


def test_a_stream_that_overflows_is_said_to_overflow_in_both_languages():
    state = ExplorerState(norm=False, depth=100)  # the lesson's stack without a norm overflows at block 80
    result = explore(state)
    assert first_lost(result.trace.stream, 0) == 80
    assert "block 80" in depth_description(state, result, Text("en"))
    assert "第 80 个 block" in readouts_description(state, result, Text("zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_geometry_descriptions_state_what_their_figures_draw(lang):
    """The lengths and LayerNorm's spots, recomputed from the points each figure draws."""
    t = Text(lang)
    fig = geometry_2d_figure(ExplorerState(), t)
    inputs, rms, _, ln = (np.column_stack([trace.x, trace.y]) for trace in fig.data)
    text = geometry_2d_description(t)
    for drawn in (inputs, rms):
        lengths = np.hypot(*drawn.T)
        assert fixed(float(lengths.min())) in text and fixed(float(lengths.max())) in text
    for spot in ([1, -1], [-1, 1]):
        near = np.linalg.norm(ln - spot, axis=1) < 0.01
        assert f"{vector_text(spot)}" in text and str(int(near.sum())) in text
    assert sum(np.sum(np.linalg.norm(ln - spot, axis=1) < 0.01) for spot in ([1, -1], [-1, 1])) == len(ln)
    (circle,) = geometry_3d_figure(ExplorerState(), t).data
    plane = np.column_stack([circle.x, circle.y])
    radius = np.hypot(*plane.T)
    text = geometry_3d_description(t)
    assert str(len(plane)) in text and fixed(float(radius.min())) in text and fixed(float(radius.max())) in text
