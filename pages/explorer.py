"""Explorer: switch the stabilisers off and watch the action token.

The switches, the depth, the verdict and the three figures are the instant Explorer
(``ui/instant_explorer.py``): they change in the browser. The sentence, the block and stage in
focus, and the numbers below are Streamlit's, kept in step by the view the browser reports."""

import streamlit as st

from ui.examples import sentence_caption
from ui.instant_explorer import instant_explorer
from ui.text import Text
from ui.views.tables import markdown_table, stage_csv, stage_rows
from ui.widgets import explore_cached, explorer_controls, language

t = Text(language())

projector = st.session_state.get("projector_on", False)
if not projector:
    st.title(t("explorer.title"))
    caption = st.empty()
    with st.container(key="phone_hint"):  # shown at phone width only (APP_CSS)
        st.caption(t("explorer.phone_hint"))
state, instant = explorer_controls(t, projector)
if not projector:
    caption.caption(sentence_caption(state.example, t))
instant_explorer(state, instant, t)

result = explore_cached(state)
st.subheader(t("explorer.numbers", block=state.shown_block))
st.markdown(markdown_table(stage_rows(state, result, t)))
st.download_button(t("download.csv"), stage_csv(state, result), file_name="blockstab-action-token.csv",
                   mime="text/csv", key="download_csv")
