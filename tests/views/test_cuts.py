"""A view across depth cut from the deepest run draws what the view draws at that depth (ui.views.cut):
what lets the Explorer send one deep run per setting ahead and switch depth without the server."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockstab.scenario import PRESETS
from support.figures import plain
from ui.bundle import SETTINGS
from ui.controls import MAX_EXPLORER_DEPTH, STAGE_FOCUS, ExplorerState
from ui.text import Text
from ui.views import explore
from ui.views.block import block_cut, block_figure, block_frame
from ui.views.cut import apply_cut
from ui.views.depth import (
    depth_cut,
    depth_figure,
    depth_plane,
    readout_panels,
    readouts_cut,
    readouts_figure,
)
from ui.views.tables import stage_rows


def cut_views(state: ExplorerState, t: Text, n: int) -> tuple[dict, dict]:
    """The depth and readouts views of ``state``'s setting ``n`` blocks deep, cut from its deepest run."""
    deep = replace(state, depth=MAX_EXPLORER_DEPTH)
    result = explore(deep)
    return (plain(apply_cut(depth_plane(deep, result, t), depth_cut(deep, result, t, n))),
            plain(apply_cut(readout_panels(deep, result, t), readouts_cut(deep, result, t, n))))


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.parametrize("n", [1, 2, 3, 8, 24, 79, 80, 99])
def test_a_cut_of_the_deepest_run_draws_the_view_of_that_depth(setting, n):
    state = ExplorerState(depth=n, **setting)
    t = Text("en")
    result = explore(state)
    depth, readouts = cut_views(state, t, n)
    assert depth == plain(depth_figure(state, result, t))
    assert readouts == plain(readouts_figure(state, result, t))


@settings(max_examples=25, deadline=None)
@given(setting=st.sampled_from(SETTINGS), n=st.integers(1, MAX_EXPLORER_DEPTH), lang=st.sampled_from(("en", "zh")),
       projector=st.booleans(), phone=st.booleans(), scenario=st.sampled_from(("both", "confirmed", "not_confirmed")),
       example=st.sampled_from(sorted(PRESETS)))
def test_every_look_and_sentence_cuts_like_the_lesson(setting, n, lang, projector, phone, scenario, example):
    state = ExplorerState(depth=n, projector=projector, phone=phone, scenario=scenario, example=PRESETS[example],
                          **setting)
    t = Text(lang)
    result = explore(state)
    depth, readouts = cut_views(state, t, n)
    assert depth == plain(depth_figure(state, result, t))
    assert readouts == plain(readouts_figure(state, result, t))


@settings(max_examples=25, deadline=None)
@given(setting=st.sampled_from(SETTINGS), n=st.integers(1, MAX_EXPLORER_DEPTH), block=st.integers(1, 24),
       focus=st.sampled_from(STAGE_FOCUS), lang=st.sampled_from(("en", "zh")), example=st.sampled_from(sorted(PRESETS)))
def test_the_numbers_table_from_the_shown_blocks_own_depth_is_the_deep_runs(setting, n, block, focus, lang, example):
    """The numbers table sent with the block view (ui.bundle.block_range) runs the stack
    only as deep as the block it shows."""
    state = ExplorerState(depth=n, block=block, focus=focus, example=PRESETS[example], **setting)
    t = Text(lang)
    shallow = explore(replace(state, depth=state.shown_block))
    assert stage_rows(state, shallow, t) == stage_rows(state, explore(state), t)


@settings(max_examples=40, deadline=None)
@given(setting=st.sampled_from(SETTINGS), block=st.integers(1, MAX_EXPLORER_DEPTH), focus=st.sampled_from(STAGE_FOCUS),
       extra=st.integers(0, 9), lang=st.sampled_from(("en", "zh")), projector=st.booleans(), phone=st.booleans(),
       scenario=st.sampled_from(("both", "confirmed", "not_confirmed")), example=st.sampled_from(sorted(PRESETS)))
def test_the_block_view_is_its_frame_with_the_cut_of_a_deeper_run(setting, block, focus, extra, lang, projector, phone,
                                                                   scenario, example):
    """The block view a browser draws from what is sent ahead (the setting's frame and the cut of
    the block and stage in focus, from a run as deep as the last of the ten blocks sent) is the
    one the view draws from a run as deep as the block."""
    state = ExplorerState(block=block, depth=block, focus=focus, projector=projector, phone=phone, scenario=scenario,
                          example=PRESETS[example], **setting)
    t = Text(lang)
    deeper = replace(state, depth=min(block + extra, MAX_EXPLORER_DEPTH))
    cut = block_cut(deeper, explore(deeper), t)
    json.dumps(cut)  # plain numbers and text
    assert plain(apply_cut(block_frame(state, t), cut)) == plain(block_figure(state, explore(state), t))


@pytest.mark.parametrize("focus", STAGE_FOCUS)
def test_a_block_cut_draws_the_stages_up_to_the_one_in_focus(focus):
    """The cut adds one arrow per stage from the block's input up to the stage in focus, for each
    sentence; only the arrows in focus are in the legend, and only they carry a value."""
    state = ExplorerState(block=2, focus=focus)
    cut = block_cut(state, explore(state), Text("en"))
    upto = STAGE_FOCUS.index(focus) + 2  # the input's arrow, and each stage's
    assert len(cut["traces"]) == 2 * upto
    assert [trace["showlegend"] for trace in cut["traces"]] == ([False] * (upto - 1) + [True]) * 2
    assert len([note for note in cut["notes"] if note.get("xref") != "paper"]) == 2


def test_the_full_view_is_its_own_deepest_cut_with_the_animation():
    """The depth view at full depth keeps its slider, play button and one frame per block."""
    state = ExplorerState(depth=5)
    fig = depth_figure(state, explore(state), Text("en"))
    spec = plain(fig, animation=True)
    assert [frame["name"] for frame in spec["frames"]] == [str(d) for d in range(6)]
    assert [step["label"] for step in spec["layout"]["sliders"][0]["steps"]] == [str(d) for d in range(6)]
    moving = spec["frames"][-1]["traces"]
    assert [spec["data"][i]["x"] for i in moving] == [frame["x"] for frame in spec["frames"][-1]["data"]]


def test_a_cut_is_plain_data_and_names_what_it_keeps():
    state = ExplorerState(depth=MAX_EXPLORER_DEPTH, norm=False)  # overflows to NaN after block 79
    result = explore(state)
    for cut in (depth_cut(state, result, Text("zh"), 90), readouts_cut(state, result, Text("zh"), 90)):
        assert set(cut) == {"points", "along", "data", "layout", "notes"}
        assert cut["points"] == 91
        json.dumps(cut, default=lambda value: value.tolist())  # numbers and text only: no figure objects
