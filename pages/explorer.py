"""Explorer: switch the stabilisers off and watch the action token."""

import streamlit as st

from ui.examples import sentence_caption
from ui.text import Text
from ui.verdicts import verdict
from ui.views.tables import course_table_matches, markdown_table, stage_csv, stage_rows
from ui.widgets import explore_cached, explorer_controls, figure_cached, language

t = Text(language())
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}

projector = st.session_state.get("projector_on", False)
if not projector:
    st.title(t("explorer.title"))
    caption = st.empty()
    with st.container(key="phone_hint"):  # shown at phone width only (APP_CSS)
        st.caption(t("explorer.phone_hint"))
verdict_box = st.empty()
state = explorer_controls(t, projector)
if not projector:
    caption.caption(sentence_caption(state.example, t))
result = explore_cached(state)

verdict_box.info(verdict(state, result, t, compact=projector), icon=":material/explore:")
if state.norm_used == "layernorm":
    st.warning(t("explorer.layernorm_2d"), icon=":material/warning:")
    st.page_link("pages/norm_geometry.py", label=t("explorer.why_link"))
elif state.norm_used == "rmsnorm" and not projector:
    st.caption(t("explorer.rmsnorm_note"))
if state.block > state.depth:
    st.caption(t("explorer.block_clamped", block=state.block, depth=state.depth))

with st.container(key="figure_pair"):  # one under the other where two would be too narrow (APP_CSS)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(figure_cached("block", state, t.lang), key="block_figure", config=PLOT_CONFIG)
        if state.shown_block == 1 and course_table_matches(result, state):
            st.success(t("explorer.course_match"), icon=":material/check_circle:")
    with right:
        st.plotly_chart(figure_cached("depth", state, t.lang), key="depth_figure", config=PLOT_CONFIG)
st.plotly_chart(figure_cached("readouts", state, t.lang), key="readouts_figure", config=PLOT_CONFIG)

st.subheader(t("explorer.numbers", block=state.shown_block))
st.markdown(markdown_table(stage_rows(state, result, t)))
st.download_button(t("download.csv"), stage_csv(state, result), file_name="blockstab-action-token.csv",
                   mime="text/csv", key="download_csv")
