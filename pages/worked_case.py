"""The course's worked case: the action token must not lose its original meaning."""

import streamlit as st

from blockstab.scenario import LESSON
from server.caches import explore_cached
from ui.controls import ExplorerState
from ui.text import Text
from ui.views.block import block_figure
from ui.views.describe import block_description
from ui.views.tables import course_case_rows, device_rows, markdown_table, three_stage_rows
from widgets.chrome import active_example, chart, language
from widgets.controls import open_in_explorer

t = Text(language())
# The figure stops at the residual add: its labels are the course table's values, beside it.
state = ExplorerState(depth=1, focus="attention_residual", projector=st.session_state.get("projector_on", False),
                      example=active_example())
result = explore_cached(state)

st.title(t("case.title"))
st.markdown(t("case.previous"))
st.info(t("case.core"), icon=":material/key:")
st.markdown(t("case.questions"))
st.subheader(t("case.devices_title"))
st.markdown(markdown_table(device_rows(t)))
st.markdown(t("case.intro"))
if state.example != LESSON:
    st.info(t("example.text_is_the_lesson"), icon=":material/edit_note:")
left, right = st.columns(2)  # the figure needs half the page on a 1024 px screen
with left:
    st.subheader(t("case.table_title"))
    st.markdown(markdown_table(course_case_rows(result, state, t)))
    st.markdown(t("case.reading"))
    st.markdown(t("case.misconception"))
with right:
    chart(block_figure(state, result, t), t, "case_figure", block_description(state, result, t))
    if st.button(t("tour.open_in_explorer"), key="case_open", icon=":material/open_in_new:"):
        open_in_explorer({"depth": 1, "focus": "attention_residual"})
st.subheader(t("case.stages_title"))
st.markdown(markdown_table(three_stage_rows(result, state, t)))
st.markdown(t("case.conclusion"))
