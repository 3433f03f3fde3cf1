"""For teachers: a ten-minute script, ready-made links, and classroom links that hide controls."""

import streamlit as st

from blockstab.papers import PAPERS
from ui.controls import CONTROLS, explorer_query
from ui.lessons import PRESETS, lesson_facts
from ui.text import Text
from widgets.chrome import example_in_link, explorer_link, language
from widgets.controls import open_in_explorer

t = Text(language())

st.title(t("teach.title"))
st.markdown(t("teach.script", **lesson_facts()))

st.header(t("teach.live_title"))
st.markdown(t("teach.live_intro"))
if st.button(t("teach.live_start"), key="teach_live", icon=":material/co_present:", type="primary"):
    st.session_state["class_start_now"] = True  # the class page starts one on arrival
    st.switch_page("pages/live_class.py", query_params={"lang": t.lang})

st.header(t("teach.presets"))
for preset in PRESETS:
    with st.container(border=True):
        text, go = st.columns([4, 1])
        text.markdown(t(f"preset.{preset.id}", **lesson_facts()))
        query = explorer_query(preset.view, lang=t.lang, sc=example_in_link())
        text.code(explorer_link(query), language=None)
        if go.button(t("teach.open"), key=f"preset_{preset.id}", icon=":material/open_in_new:"):
            open_in_explorer(preset.view)

st.header(t("teach.hide_title"))
st.markdown(t("teach.hide_intro"))
keep = st.multiselect(t("teach.hide_pick"), [c.key for c in CONTROLS], default=["residual", "norm", "depth"],
                      format_func=lambda key: t("control." + key), key="teach_show")
if keep:
    st.code(explorer_link(explorer_query({}, lang=t.lang, show=tuple(keep))), language=None, wrap_lines=True)

st.header(t("teach.lab_title"))
st.markdown(t("teach.lab_intro"))
for paper in PAPERS:
    st.page_link("pages/depth_lab.py", label=t(f"paper.{paper}.title"), icon=":material/stacked_line_chart:",
                 query_params={"lab_show": paper, "lang": t.lang})
