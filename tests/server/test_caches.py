"""A tour step's figures built ahead for a live class, and a cached figure that hands Streamlit its dict
made once (``server.caches.kept_as_built``): the same figure as before, and ``st.plotly_chart`` really
takes it from there (a Streamlit or Plotly upgrade that reads the figure another way fails here, not
silently slower)."""

from unittest import mock

import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit as st

from server import caches
from server.caches import explore_cached, figure_cached, kept_as_built
from ui.controls import ExplorerState
from ui.lessons import TOUR
from ui.text import LANGUAGES, Text
from ui.tour_step import figures_ahead
from ui.views import FIGURES


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_figure_kept_as_built_is_the_figure_it_was(name):
    state = ExplorerState(depth=12)
    fresh = FIGURES[name](state, explore_cached(state), Text("en"))
    kept = kept_as_built(FIGURES[name](state, explore_cached(state), Text("en")))
    assert pio.to_json(kept.to_dict(), validate=False) == pio.to_json(fresh.to_dict(), validate=False)


def test_streamlit_draws_a_kept_figure_from_its_dict_made_once():
    kept = kept_as_built(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])))
    built = kept.to_dict()
    spy = mock.Mock(wraps=kept.to_dict)
    kept.to_dict = spy
    with mock.patch("plotly.io.to_json", wraps=pio.to_json) as to_json:
        st.plotly_chart(kept)
    spy.assert_called_once_with()
    assert to_json.call_args.args[0] is built  # the dict kept, not a copy made anew


@pytest.mark.parametrize(("projector", "lang"), [(False, "en"), (True, "zh")])
def test_a_tour_step_built_ahead_is_drawn_by_every_page_of_a_class_without_building(projector, lang, monkeypatch):
    step = TOUR[6]
    ahead = figures_ahead(step, projector, lang)
    assert ahead[0][2] == lang and len(ahead) == len(set(ahead)) == (3 if projector else 2) * len(LANGUAGES)
    caches._built_figure.clear()
    for figure in ahead:
        figure_cached(*figure)
    monkeypatch.setitem(caches.FIGURES, step.figure, mock.Mock(side_effect=AssertionError("built again")))
    for each in LANGUAGES:
        for shown in (step.state(projector), step.state(), step.state(phone=True)):
            assert figure_cached(step.figure, shown, each) is not None
