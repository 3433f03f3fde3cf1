"""A cached figure that hands Streamlit its dict made once (``server.caches.kept_as_built``): the same
figure as before, and ``st.plotly_chart`` really takes it from there (a Streamlit or Plotly upgrade that
reads the figure another way fails here, not silently slower)."""

from unittest import mock

import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit as st

from server.caches import explore_cached, kept_as_built
from ui.controls import ExplorerState
from ui.text import Text
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
