"""Live class (the teacher's page, on the projector): start a class, show how to join, lead it through
tour steps, Explorer views and questions, and reveal what the class answered."""

from urllib.parse import urlencode

import streamlit as st

from server.class_files import build_ahead_for
from server.class_store import STARTS_PER_HOUR, class_store
from ui.chrome import app_address, chart, language
from ui.class_views import answers_description, answers_figure, join_code_svg
from ui.classroom import act, class_state, client_address, explanation, follow, join_link, question_text
from ui.controls import BY_KEY, ExplorerState, explorer_query
from ui.instant_explorer import INSTANT, instant_explorer, reported_view
from ui.lessons import LIVE_SCRIPT, QUESTIONS, TOUR
from ui.live_class import (
    ACTIVITIES,
    LiveClass,
    Refused,
    ask,
    check_teacher,
    close,
    explore_freely,
    follow_me,
    new_code,
    new_key,
    next_in_script,
    reveal,
    script_position,
    show_me,
    show_step,
    show_view,
    start,
)
from ui.text import Text
from ui.tour_step import tour_step
from ui.widgets import url_value

t = Text(language())
projector = st.session_state.get("projector_on", False)
store = class_store()
CODE, KEY = "class_code", "class_key"  # this session's class and the teacher's key (never in a student's page)
LED = "class_led"  # how many times the class's Explorer view was set here, not in the browser (show me)
REPORTED = "class_reported"  # the view the teacher's browser last reported


def start_class() -> None:
    if not store.allow(f"start:{client_address()}", STARTS_PER_HOUR, 3600):
        st.error(t("class.too_many_starts"), icon=":material/block:")
        return
    key = new_key()
    for _ in range(5):  # a code another class has: draw again
        record = start(new_code(), key, t.lang)
        try:
            if store.create(record):
                st.session_state.update({CODE: record.code, KEY: key})
                st.query_params["class"] = record.code
                build_ahead_for(t.lang)  # (the students' "show me": ready by the time it is asked for)
                return
        except Refused as refused:
            st.error(t(refused.key), icon=":material/block:")
            return


def resume_from_link() -> None:
    """A teacher link (``class`` and ``key``) hands this session the class; the key leaves the address bar."""
    code, key = url_value(BY_KEY["class"]), url_value(BY_KEY["key"])
    st.query_params.pop("key", None)
    if code is None or key is None:
        return
    record = store.read(code)
    try:
        if record is None:
            raise Refused("class.ended")
        check_teacher(record, key)
    except Refused as refused:
        st.error(t(refused.key), icon=":material/block:")
        return
    st.session_state.update({CODE: code, KEY: key})


def teach(change, led: bool = False, **args) -> LiveClass | None:
    """``change(record, **args)`` applied to this session's class, if its key is the teacher's; ``led``:
    it sets the Explorer's view (the teacher's browser then takes it)."""
    key = st.session_state[KEY]

    def as_teacher(record: LiveClass) -> LiveClass:
        check_teacher(record, key)
        return change(record, **args)

    if led:
        st.session_state[LED] = st.session_state.get(LED, 0) + 1
    return act(t, st.session_state[CODE], as_teacher)


def activity_change(activity: str):
    """What choosing ``activity`` does to the class: the tour at its step, the Explorer on its view, or
    its question asked (again: a new question)."""
    return {"tour": lambda c: show_step(c, c.step), "explorer": lambda c: show_view(c, dict(c.view)),
            "question": lambda c: ask(c, c.question)}[activity]


def end_class() -> None:
    if teach(lambda c: c) is not None:
        store.end(st.session_state[CODE])
    for key in (CODE, KEY):
        st.session_state.pop(key, None)
    st.query_params.pop("class", None)


def status(record: LiveClass) -> None:
    """How many students are in, and during a question how many answered (never what)."""
    students = len(record.students)
    line = t("class.one_student") if students == 1 else t("class.students", count=students)
    if record.activity == "question":
        line += " · " + t("class.answered", answered=len(record.answers), students=students)
    st.subheader(line)
    if record.activity == "question" and record.refused:
        st.warning(t("class.refused", count=record.refused), icon=":material/block:")


@st.fragment
def explorer(state: ExplorerState) -> None:
    """The Explorer with its controls: what the teacher's browser reports becomes the class's view."""
    reported = reported_view()
    if reported is not None and reported != st.session_state.get(REPORTED):
        st.session_state[REPORTED] = reported
        if any(getattr(state, k) != v for k, v in reported.items()):
            teach(show_view, view=explorer_query({"scenario": state.scenario, **reported}))
    instant_explorer(state, list(INSTANT), t, lead=st.session_state.get(LED, 0))


def question(record: LiveClass) -> None:
    """The question, its choices (the right one marked once revealed), and what to do next with it."""
    asked = QUESTIONS[record.question]
    pick, go = st.columns([5, 1], vertical_alignment="bottom")
    chosen = pick.selectbox(t("class.question"), range(len(QUESTIONS)), index=record.question,
                            key=f"class_question_{record.asked}",
                            format_func=lambda i: f"{i + 1}. {t(f'ex.{QUESTIONS[i].id}.prompt')}")
    go.button(t("class.ask"), key="class_ask", on_click=teach, args=(ask,), kwargs={"question": chosen},
              icon=":material/help:", use_container_width=True)
    shut, show, explore, _ = st.columns([2, 2, 3, 2])
    shut.button(t("class.close"), key="class_close", disabled=record.phase != "open", on_click=teach, args=(close,),
                icon=":material/lock:", use_container_width=True)
    show.button(t("class.reveal"), key="class_reveal", disabled=record.phase == "revealed", on_click=teach,
                args=(reveal,), icon=":material/bar_chart:", type="primary", use_container_width=True)
    explore.button(t("ex.show_me"), key="class_show_me", disabled=record.phase != "revealed", on_click=teach,
                   args=(show_me,), kwargs={"led": True}, icon=":material/visibility:", use_container_width=True)
    question_text(record, t)
    if record.phase != "revealed":
        st.markdown("\n".join(f"{n}. {t(asked.choice_key(choice))}" for n, choice in enumerate(asked.choices, 1)))
        return
    chart(answers_figure(record, t, projector), t, "class_answers", answers_description(record, t))
    explanation(record, t)


def lead(record: LiveClass) -> None:
    """How to join, how many are in, and the controls of what the class sees; followed as a student's
    page is, never run by a timer (docs/live-class.md says why)."""
    follow(record)
    link, reachable = join_link(record.code, t.lang)
    # Keyed: an expander with no key is made anew, folded, whenever the elements before it change (a new
    # activity), and the teacher's own folding or unfolding of it was lost.
    with st.expander(t("class.how_to_join"), expanded=True, icon=":material/qr_code_2:", key="class_how_to_join"):
        words, code = st.columns([3, 2])
        with words:
            with st.container(key="class_code"):  # (its type: APP_CSS)
                st.markdown(f"{t('class.code_label')}  \n**{record.code}**")
            st.code(link, language=None)
            if not reachable:
                st.warning(t("class.local_only", command="bash scripts/start.sh --lan"), icon=":material/wifi_off:")
        code.image(join_code_svg(link, projector), alt=t("class.qr_title"))
    status(record)

    # Buttons, not stateful widgets: a widget whose value the class sets, and which leaves the page with
    # its activity, would report a stale value as a change when it came back.
    *activities, free, end = st.columns([2, 2, 2, 3, 3], vertical_alignment="bottom")
    for column, activity in zip(activities, ACTIVITIES, strict=True):
        current = record.activity == activity and record.following
        column.button(t(f"class.activity.{activity}"), key=f"class_show_{activity}", disabled=current,
                      type="primary" if current else "secondary", on_click=teach, args=(activity_change(activity),),
                      kwargs={"led": activity == "explorer"}, use_container_width=True)
    if record.following:
        free.button(t("class.free"), key="class_free", on_click=teach, args=(explore_freely,),
                    icon=":material/explore:", use_container_width=True)
    else:
        free.button(t("class.follow_me"), key="class_follow", on_click=teach, args=(follow_me,), type="primary",
                    icon=":material/co_present:", use_container_width=True)
    with end.popover(t("class.end"), icon=":material/stop_circle:", use_container_width=True):
        st.button(t("class.end_confirm"), key="class_end", on_click=end_class, type="primary")

    st.button(t("class.next_in_script"), key="class_script_next", on_click=teach, args=(next_in_script,),
              disabled=script_position(record) == len(LIVE_SCRIPT) - 1, icon=":material/skip_next:")
    if record.activity == "tour":
        back, forward, _ = st.columns([1, 1, 2])
        back.button(t("tour.previous"), key="class_previous", disabled=record.step == 0, on_click=teach,
                    args=(show_step,), kwargs={"step": record.step - 1}, use_container_width=True)
        forward.button(t("tour.next"), key="class_next", disabled=record.step == len(TOUR) - 1, on_click=teach,
                       args=(show_step,), kwargs={"step": record.step + 1}, use_container_width=True)
        tour_step(TOUR[record.step], t, projector, explorer_button=False, key="class_figure")
    elif record.activity == "explorer":
        explorer(class_state(record, projector))
    else:
        question(record)

    if not projector:  # the key stays off the projector
        with st.expander(t("class.resume"), icon=":material/devices:", key="class_resume"):
            st.caption(t("class.resume_note"))
            query = urlencode({"class": record.code, "key": st.session_state[KEY], "lang": t.lang})
            st.code(f"{app_address()}/class?{query}", language=None)


st.title(t("class.title"))
resume_from_link()
if st.session_state.pop("class_start_now", False) and st.session_state.get(CODE) is None:  # from For teachers
    start_class()
code = st.session_state.get(CODE)
record = store.read(code) if code else None
if code and record is None:
    st.info(t("class.ended"), icon=":material/door_front:")
    for key in (CODE, KEY):
        st.session_state.pop(key, None)
if record is not None:
    lead(record)
else:
    linked = url_value(BY_KEY["class"])
    if linked and store.read(linked) is not None:
        st.info(t("class.resume_needed", code=linked), icon=":material/devices:")
    st.markdown(t("class.intro"))
    if not join_link("", t.lang)[1]:
        st.warning(t("class.local_only", command="bash scripts/start.sh --lan"), icon=":material/wifi_off:")
    st.button(t("class.start"), key="class_start", on_click=start_class, type="primary", icon=":material/co_present:")
