"""Join a live class (a phone first): the class code, then whatever the teacher shows, followed within
seconds; a question to answer; the Explorer to try when the teacher lets the class explore."""

from dataclasses import replace
from functools import partial

import streamlit as st

from server.class_store import ANSWERS_PER_ADDRESS, JOINS_PER_MINUTE, STUDENTS_PER_CLASS, class_store
from ui.chrome import language
from ui.classroom import act, class_state, client_address, explanation, follow, question_text
from ui.controls import BY_KEY, ExplorerState
from ui.instant_explorer import INSTANT, instant_explorer, reported_view
from ui.lessons import QUESTIONS, TOUR
from ui.live_class import LiveClass, answer, join, new_student
from ui.text import Text
from ui.tour_step import tour_step
from ui.widgets import url_value

t = Text(language())
projector = st.session_state.get("projector_on", False)
store = class_store()


def use_typed_code() -> None:
    st.query_params["class"] = "".join(st.session_state["class_typed"].split()).upper()


def joined(code: str, me: str) -> bool:
    """Whether ``me`` is in the class (joined once per session; join attempts are limited per address)."""
    if st.session_state.get("class_joined") == (code, me):
        return True
    if not store.allow(f"join:{client_address()}", JOINS_PER_MINUTE, 60):
        st.error(t("class.too_many_tries"), icon=":material/block:")
        return False
    if act(t, code, partial(join, student=me, most=STUDENTS_PER_CLASS)) is None:
        return False
    st.session_state["class_joined"] = code, me
    return True


def send_answer(code: str, me: str, key: str, asked: int) -> None:
    """Send the choice in ``key``, if the question it answers (``asked``) is still the class's."""
    record, choice = store.read(code), st.session_state.get(key)
    if record is None or record.asked != asked or record.activity != "question" or choice is None:
        return
    changed = act(t, code, partial(answer, student=me, address=client_address(), choice=choice,
                                   per_address=ANSWERS_PER_ADDRESS))
    if changed is not None and me not in changed.answers:
        st.warning(t("class.answer_refused"), icon=":material/block:")


def question(record: LiveClass, me: str) -> None:
    """The question to answer (a choice may change until the teacher closes it); once revealed, whether
    this student's counted answer was right, and why."""
    asked = QUESTIONS[record.question]
    question_text(record, t)
    key, mine = f"class_answer_{record.code}_{record.asked}", record.answers.get(me)
    if key not in st.session_state and mine is not None:  # a reload, or another tab of this student's
        st.session_state[key] = mine.choice
    right = t(asked.choice_key(asked.answer))
    if record.phase == "open":
        st.radio(t("join.your_answer"), asked.choices, index=None, key=key,
                 format_func=lambda c: t(asked.choice_key(c)), on_change=send_answer,
                 args=(record.code, me, key, record.asked))
        st.caption(t("join.open"))
        return
    if mine is not None:
        st.markdown(t("join.you_chose", choice=t(asked.choice_key(mine.choice))))
    if record.phase == "closed":
        st.info(t("join.closed"), icon=":material/hourglass_top:")
    elif mine is None:
        st.info(t("join.not_counted", answer=right))
    elif mine.choice == asked.answer:
        st.success(t("ex.right", answer=right))
    else:
        st.error(t("ex.wrong", answer=right))
    if record.phase == "revealed":
        explanation(record, t)


@st.fragment
def explorer(state: ExplorerState, free: bool, lead: int | None) -> None:
    """The Explorer on the class's view: read-only while following, the student's own when ``free``."""
    if free:
        state = replace(state, **(reported_view() or {}))
    instant_explorer(state, list(INSTANT) if free else [], t, lead=lead)


def follow_class(code: str) -> None:
    me = url_value(BY_KEY["me"]) or st.session_state.get("class_me") or new_student()
    st.session_state["class_me"] = me
    if st.query_params.get("me") != me:  # a reload keeps the student's one answer (written once: every poll reruns)
        st.query_params["me"] = me
    st.caption(t("join.in_class", code=code))
    record = store.read(code) if joined(code, me) else None
    if record is None:
        if st.session_state.get("class_joined") == (code, me):
            st.info(t("class.ended"), icon=":material/door_front:")
        return
    follow(record, me)  # first: the browser then waits on what this run shows while it runs
    if not record.following:
        st.info(t("join.explore_freely"), icon=":material/explore:")
        explorer(class_state(record, projector), True, None)
    elif record.activity == "tour":
        tour_step(TOUR[record.step], t, projector, explorer_button=False, key="class_figure")
    elif record.activity == "explorer":
        explorer(class_state(record, projector), False, record.version)
    else:
        question(record, me)


st.title(t("join.title"))
code = url_value(BY_KEY["class"])
if code is None:
    if "class" in st.query_params:
        st.error(t("class.bad_code"), icon=":material/error:")
    st.text_input(t("join.code"), key="class_typed", max_chars=12, on_change=use_typed_code,
                  help=t("join.code_help"))
else:
    follow_class(code)
