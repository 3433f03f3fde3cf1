"""Exercises: predict, then reveal, then see it in the Explorer; and the self-check list."""

import streamlit as st

from ui.lessons import CHECKLIST, QUESTIONS, lesson_facts
from ui.text import Text
from widgets.chrome import language
from widgets.controls import open_in_explorer

t = Text(language())


def answer_key(question) -> str:
    return f"answer_{question.id}"


def first_key(question) -> str:
    return f"first_answer_{question.id}"


def kept_key(question) -> str:
    return f"kept_answer_{question.id}"


def remember(question) -> None:
    """The score counts a student's first choice; later choices only show their feedback. The
    latest is kept apart too: Streamlit forgets a widget's value on a page the student left."""
    choice = st.session_state[answer_key(question)]
    st.session_state.setdefault(first_key(question), choice)
    st.session_state[kept_key(question)] = choice


def reset() -> None:
    for question in QUESTIONS:
        for key in (answer_key(question), first_key(question), kept_key(question)):
            st.session_state.pop(key, None)


first = {q.id: st.session_state.get(first_key(q)) for q in QUESTIONS}
answered = [q for q in QUESTIONS if first[q.id] is not None]
right = sum(first[q.id] == q.answer for q in answered)

st.title(t("ex.title"))
score, reset_column = st.columns([2, 1])  # the button's words fit a 1024 px screen
score.metric(t("ex.score", total=len(QUESTIONS)), t("ex.score_value", right=right, answered=len(answered)))
reset_column.button(t("ex.reset"), key="ex_reset", on_click=reset, icon=":material/restart_alt:")

for exercise in (1, 2):
    st.header(t(f"ex.{exercise}.title"))
    st.caption(t(f"ex.{exercise}.intro"))
    for question in (q for q in QUESTIONS if q.exercise == exercise):
        with st.container(border=True):
            if answer_key(question) not in st.session_state and kept_key(question) in st.session_state:
                st.session_state[answer_key(question)] = st.session_state[kept_key(question)]  # back on the page
            choice = st.radio(t(f"ex.{question.id}.prompt"), question.choices, index=None,
                              key=answer_key(question), format_func=lambda c, q=question: t(q.choice_key(c)),
                              on_change=remember, args=(question,))
            if choice is None:
                continue
            verdict = "ex.right" if choice == question.answer else "ex.wrong"
            feedback = st.success if choice == question.answer else st.error
            feedback(t(verdict, answer=t(question.choice_key(question.answer))))
            st.markdown(t(f"ex.{question.id}.explain", **lesson_facts()))
            if st.button(t("ex.show_me"), key=f"show_{question.id}", icon=":material/visibility:"):
                open_in_explorer(question.show_me)
    if all(first[q.id] is not None for q in QUESTIONS if q.exercise == exercise):
        st.info(t(f"ex.{exercise}.rule"))  # the take-away, once every prediction is in

st.header(t("check.title"))
for item in CHECKLIST:
    text, demo = st.columns([2, 1])
    text.markdown(t(f"check.{item.id}"))
    if demo.button(t("check.demo"), key=f"check_{item.id}", icon=":material/play_arrow:"):
        open_in_explorer(item.view)
st.success(t("check.summary"))
