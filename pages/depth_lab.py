"""Depth lab: the same engine at realistic width and depth, and the papers it reproduces."""

from functools import partial

import streamlit as st

from blockstab.lab import compared_setups
from blockstab.shipped import differences, shipped
from server.lab_runs import LAB_SECONDS, computed_with_progress
from server.lab_worker import paper_run, stack_curves
from ui.controls import ExplorerState
from ui.lab_views import (
    chart_notes,
    curves_description,
    curves_figure,
    finding_rows,
    lab_setup,
    layer_zero,
    published_description,
    published_figure,
    published_notes,
    run_reading,
    summary_rows,
)
from ui.text import Text
from ui.views.describe import geometry_2d_description, geometry_3d_description
from ui.views.geometry import geometry_2d_figure, geometry_3d_figure
from ui.views.tables import markdown_table
from widgets.chrome import chart, language, on_phone
from widgets.controls import lab_controls

t = Text(language())
projector = st.session_state.get("projector_on", False)

st.title(t("lab.title"))
if not projector:
    st.caption(t("lab.intro"))
values = lab_controls(t)
shown = values["lab_show"]

if shown == "stack":
    setup, notes = lab_setup(values)
    for key, fields in notes:
        st.warning(t(key, **fields), icon=":material/tune:")
    setups = compared_setups(setup, values["lab_compare"])
    gradients = values["lab_gradients"]

    pairs = tuple(setups.items())
    curves = computed_with_progress(("stack", pairs, gradients), partial(stack_curves, pairs, gradients), t)
    if len(curves) < len(setups):
        st.warning(t("lab.over_time", shown=len(curves), total=len(setups), seconds=f"{LAB_SECONDS:.0f}"),
                   icon=":material/timer_off:")
    chart(curves_figure(curves, t, projector, on_phone()), t, "lab_curves", curves_description(curves, t))
    for note in chart_notes(curves, t):
        st.caption(note)
    st.markdown("\n".join(f"- {run_reading(variant, run, t)}" for variant, run in curves.items()))
    st.caption(t("lab.readouts_note"))
    st.markdown(markdown_table(summary_rows(curves, t)))
else:
    st.subheader(t(f"paper.{shown}.title"))
    st.markdown(t(f"paper.{shown}.setup"))
    again = f"lab_again.{shown}"  # this session asked for the preset to be computed here
    if st.session_state.get(again):
        paper = computed_with_progress(("paper", shown), partial(paper_run, shown), t)
        changed = differences(paper, shipped(shown))
        st.caption(t("lab.recomputed_differs", count=len(changed)) if changed else t("lab.recomputed_same"))
    else:
        paper = shipped(shown)
        st.caption(t("lab.shipped"))
        st.button(t("lab.run_again"), key="lab_run_again", icon=":material/replay:",
                  on_click=st.session_state.__setitem__, args=(again, True))
    if paper.passed:
        st.success(t("lab.all_pass"), icon=":material/check_circle:")
    else:
        st.error(t("lab.some_fail"), icon=":material/cancel:")
    st.markdown(markdown_table(finding_rows(paper, t)))
    st.info(t(f"paper.{shown}.reading"), icon=":material/menu_book:")
    if paper.published:
        chart(published_figure(paper, t, projector), t, "paper_published", published_description(paper, t))
        for note in published_notes(paper, t):
            st.caption(note)
        st.caption(t(f"paper.{shown}.figure_note", **layer_zero(paper.published)))
        st.caption(t(f"paper.{shown}.definition"))
    if paper.curves:
        chart(curves_figure(paper.curves, t, projector, on_phone()), t, "paper_curves",
              curves_description(paper.curves, t))
        for note in chart_notes(paper.curves, t):
            st.caption(note)
    else:
        state = ExplorerState(projector=projector, phone=on_phone())
        chart(geometry_2d_figure(state, t), t, "paper_geometry_2d", geometry_2d_description(t))
        chart(geometry_3d_figure(state, t), t, "paper_geometry_3d", geometry_3d_description(t))
st.caption(t("lab.init_note"))
