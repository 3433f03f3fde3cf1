"""Explorer: switch the stabilisers off and watch the action token.

The switches, the depth, the verdict and the three figures are the instant Explorer
(``ui/instant_explorer.py``): they change in the browser. The sentence, the block and stage in
focus, and the numbers below are Streamlit's, kept in step by the view the browser reports; a
report reruns only the fragment that shows them."""

from dataclasses import replace
from functools import partial

import streamlit as st

from ui.controls import Control, ExplorerState
from ui.examples import sentence_caption
from ui.instant_explorer import instant_explorer
from ui.text import Text
from ui.views.tables import markdown_table, stage_rows
from ui.widgets import explore_cached, explored_csv, explorer_controls, language, with_reported_view

t = Text(language())


@st.fragment
def switched(state: ExplorerState, instant: list[Control]) -> None:
    """What the instant Explorer's view decides: the component, the URL and the numbers."""
    state = with_reported_view(state, instant)
    instant_explorer(state, instant, t)
    # The stack repeats one block: its first blocks are the shallower stack's (tests/test_readouts.py).
    up_to_shown = explore_cached(replace(state, depth=state.shown_block))
    st.subheader(t("explorer.numbers", block=state.shown_block))
    st.markdown(markdown_table(stage_rows(state, up_to_shown, t)))
    st.download_button(t("download.csv"), partial(explored_csv, state), file_name="blockstab-action-token.csv",
                       mime="text/csv", key="download_csv")  # written when clicked


projector = st.session_state.get("projector_on", False)
if not projector:
    st.title(t("explorer.title"))
    caption = st.empty()
    with st.container(key="phone_hint"):  # shown at phone width only (APP_CSS)
        st.caption(t("explorer.phone_hint"))
state, instant = explorer_controls(t, projector)
if not projector:
    caption.caption(sentence_caption(state.example, t))
switched(state, instant)
