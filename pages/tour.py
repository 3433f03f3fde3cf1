"""Guided tour: one block, stage by stage, like slides a teacher drives from the projector."""

import streamlit as st

from blockstab.scenario import LESSON
from ui.controls import BY_KEY, ExplorerState
from ui.lessons import TOUR
from ui.study_page import Opened, address, view_of
from ui.text import Text
from widgets.chrome import active_example, language
from widgets.controls import url_value
from widgets.tour_step import tour_step

t = Text(language())
projector = st.session_state.get("projector_on", False)
example = active_example()


def current_step() -> int:
    """The 1-based step from the URL; the first for a value the router reported as unusable."""
    return url_value(BY_KEY["step"])


def go_to(step: int) -> None:
    st.query_params["step"] = str(step)


number = current_step()
st.query_params["step"] = str(number)
step = TOUR[number - 1]

st.title(t("tour.title"))
if example == LESSON:  # (the light page is the lesson's sentence's)
    with st.container(key="study_link"):  # seen at a phone's width only (APP_CSS)
        st.markdown(t("study.phone_link", href=address(Opened("tour", number, view_of(ExplorerState())), t.lang)))
st.progress(number / len(TOUR), text=t("tour.indicator", step=number, total=len(TOUR)))
back, forward, _ = st.columns([1, 1, 2])  # "Previous" fits a 1024 px screen
first, last = number == 1, number == len(TOUR)
# Arrow keys on the visible buttons; a clicker's PageUp / PageDown on twins that CSS hides (APP_CSS).
back.button(t("tour.previous"), key="tour_previous", disabled=first, on_click=go_to, args=(number - 1,),
            use_container_width=True, shortcut="Left")
forward.button(t("tour.next"), key="tour_next", disabled=last, on_click=go_to, args=(number + 1,),
               use_container_width=True, shortcut="Right")
with st.container(key="tour_clicker"):
    st.button(t("tour.previous"), key="tour_page_up", disabled=first, on_click=go_to, args=(number - 1,),
              shortcut="PageUp")
    st.button(t("tour.next"), key="tour_page_down", disabled=last, on_click=go_to, args=(number + 1,),
              shortcut="PageDown")

tour_step(step, t, projector, example)
