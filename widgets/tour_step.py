"""One step of the guided tour as /walk shows it and a live class follows it: its title, its text and
its figure (described in words)."""

import streamlit as st

from blockstab.scenario import LESSON, Scenario
from server.caches import description, figure_cached
from ui.lessons import TourStep, lesson_facts
from ui.text import Text

from .chrome import chart, on_phone
from .controls import open_in_explorer


def tour_step(step: TourStep, t: Text, projector: bool, example: Scenario = LESSON, explorer_button: bool = True,
              key: str = "tour_figure") -> None:
    """``step`` on ``example``: its title, its text beside its figure (``key``), and "open in Explorer"
    if ``explorer_button``."""
    st.subheader(t(f"tour.{step.id}.title"))
    text, figure = st.columns([2, 3])
    with text:
        st.markdown(t(f"tour.{step.id}.body", **lesson_facts()))
        if explorer_button and st.button(t("tour.open_in_explorer"), key="tour_open", icon=":material/open_in_new:"):
            open_in_explorer(step.view)
    with figure:
        state = step.state(projector, example, on_phone())
        chart(figure_cached(step.figure, state, t.lang), t, key, description(step.figure, state, t.lang))
        if example != LESSON:
            st.caption(t("example.text_is_the_lesson"))
