"""The Explorer's views skip Plotly's validation (``ui.views.style.unvalidated``): validated, each figure
is accepted and sends the same JSON."""

import json

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockstab.scenario import PRESETS
from ui.bundle import SETTINGS
from ui.controls import MAX_EXPLORER_DEPTH, STAGE_FOCUS, ExplorerState
from ui.text import Text
from ui.views import explore
from ui.views.block import block_figure, tokens_figure
from ui.views.depth import depth_figure, readouts_figure
from ui.views.style import unvalidated


def test_unvalidated_skips_plotlys_validation():
    """``unvalidated`` rests on Plotly's private ``_validate``: a Plotly without it fails here, at once."""
    spec = {"data": [{"type": "scatter", "nosuchproperty": 1}], "layout": {"nosuchproperty": 2}}
    with pytest.raises(ValueError):
        go.Figure(spec)
    assert unvalidated(spec).to_dict()["layout"]["nosuchproperty"] == 2


@settings(max_examples=12, deadline=None)
@given(setting=st.sampled_from(SETTINGS), depth=st.integers(1, MAX_EXPLORER_DEPTH), block=st.integers(1, 24),
       focus=st.sampled_from(STAGE_FOCUS), lang=st.sampled_from(("en", "zh")), projector=st.booleans(),
       phone=st.booleans(), scenario=st.sampled_from(("both", "confirmed", "not_confirmed")),
       example=st.sampled_from(sorted(PRESETS)))
def test_each_view_validated_is_accepted_and_unchanged(setting, depth, block, focus, lang, projector, phone,
                                                        scenario, example):
    state = ExplorerState(depth=depth, block=min(block, depth), focus=focus, projector=projector, phone=phone,
                          scenario=scenario, example=PRESETS[example], **setting)
    t, result = Text(lang), explore(state)
    for view in (depth_figure, readouts_figure, block_figure, tokens_figure):
        fig = view(state, result, t)
        validated = go.Figure(fig.to_dict())  # raises on any property Plotly does not know
        assert json.loads(validated.to_json()) == json.loads(fig.to_json()), view.__name__
