"""A live class (``ui.live_class``) on the teacher's page (/class; a student's page is not a Streamlit page:
``server.class_routes``): starting a class or taking it over by the teacher's link, each change the teacher
makes (checked against the teacher's key, refused in words), how to join, who is in, what the class sees
(a tour step, the Explorer, a question and its reveal), the poll that follows the class, and once it has
ended its summary."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from server import passphrase
from server.class_files import build_ahead_for
from server.class_store import class_store
from server.client_address import client, trusted
from server.lan import students_address
from server.policy import POLICY
from server.routes import CLASS_VERSION, PROCESS
from ui.class_views import answers_description, answers_figure, link_code_svg, summary_csv, summary_rows
from ui.controls import BY_KEY, INSTANT, ExplorerState, explorer_query
from ui.lessons import ASKABLE, LIVE_SCRIPT, POLLS, TOUR, lesson_facts
from ui.live_class import (
    ACTIVITIES,
    TIMER_SECONDS,
    LiveClass,
    Refused,
    ask,
    check_teacher,
    close,
    end,
    explore_freely,
    follow_me,
    lock,
    new_code,
    new_key,
    next_in_script,
    pause,
    phase_at,
    recent,
    remove_recent,
    reveal,
    script_position,
    show_me,
    show_step,
    show_view,
    start,
    teacher_token,
    teacher_view,
    view_state,
    vote_again,
)
from ui.study_page import Opened, address, view_of
from ui.text import Text

from .chrome import app_address, chart, on_phone
from .controls import url_value
from .explorer import instant_explorer, reported_view
from .tour_step import tour_step

CODE, TEACHER_KEY = "class_code", "class_key"  # this session's class and the teacher's key (never in a student's page)
PASSPHRASE = "class_passphrase"  # the passphrase field's value (cleared as soon as it is read)
REMOVED = "class_removed"  # how many seats "remove the last minute's joins" removed, said once
TIMER = "class_timer"  # the "Timer (seconds)" field beside Ask
LED = "class_led"  # how many times the class's Explorer view was set here, not in the browser (show me)
REPORTED = "class_reported"  # the view the teacher's browser last reported
POLL_SECONDS = 1.0  # how often, on average, the page asks whether the class moved on (followed within 2 s)
POLL_SPREAD = 0.3  # the page waits POLL_SECONDS ± this share (several teachers' tabs do not ask at once)
RETRY_SECONDS = 3.0  # a page that asked for a run and got none (asked while its socket was down) asks again

ASKED = [n for n, question in enumerate(ASKABLE) if question not in POLLS]  # the list beside Ask (polls: their own)
FOLLOW_JS = Path(__file__).parent / "follow.js"
follower = st.components.v2.component("blockstab.follow", js=FOLLOW_JS.read_text(encoding="utf-8"))


def client_address() -> str:
    """The computer the page's connection came from, as the per-address limits count it (its pseudonym), by the
    rule the app's routes follow too (``server.client_address``), from the headers of the page's WebSocket."""
    return client(st.context.ip_address, st.context.headers.get_all, trusted())


def act(t: Text, code: str, change: Callable[[LiveClass], LiveClass]) -> LiveClass | None:
    """``change`` applied to the class in the store; a refusal is shown as its message (``None``)."""
    try:
        return class_store().update(code, change)
    except Refused as refused:
        st.error(t(refused.key), icon=":material/block:")
        return None


def for_phones(path: str) -> tuple[str, bool]:
    """``path`` (with its query) as the class's phones reach this server, and whether phones on the LAN can."""
    public = os.environ.get("BLOCKSTAB_PUBLIC_ADDRESS")  # host:port, in front of this process (the cluster)
    host, port = public.rsplit(":", 1) if public else (st.get_option("server.address") or "",
                                                       st.get_option("server.port"))
    address, reachable = students_address(host, int(port), app_address())
    return address + path, reachable


def join_link(code: str, lang: str) -> tuple[str, bool]:
    """The class's join link in ``lang`` (a student's default), and whether phones on the LAN can open it."""
    return for_phones(f"/join?{urlencode({'class': code, 'lang': lang})}")


def homework(record: LiveClass, t: Text, projector: bool) -> None:
    """The lesson for one person (``/study``), opened on the class's Explorer view: its link and QR code."""
    link, _ = for_phones(address(Opened("tour", 1, view_of(class_explorer(record, projector))), t.lang))
    with st.expander(t("study.homework"), icon=":material/phone_iphone:", key="class_homework"):
        words, code = st.columns([3, 2])
        words.markdown(t("study.homework_intro"))
        words.code(link, language=None)
        code.image(link_code_svg(link, projector), alt=t("study.qr_title"))


def class_explorer(c: LiveClass, projector: bool) -> ExplorerState:
    """The Explorer's state on the class's view, on this page."""
    return view_state(c.view, projector, on_phone())


def question_text(c: LiveClass, t: Text) -> None:
    """The class's question: its exercise's title (or "Quick poll") and its prompt."""
    question = ASKABLE[c.question]
    st.subheader(t(f"ex.{question.exercise}.title"))
    st.markdown(t(f"ex.{question.id}.prompt"))


def explanation(c: LiveClass, t: Text) -> None:
    """Why the answer is right (a poll has none)."""
    if ASKABLE[c.question].explained:
        st.markdown(t(f"ex.{ASKABLE[c.question].id}.explain", **lesson_facts(), value=c.value))


def follow(c: LiveClass) -> None:
    """The teacher's page follows the class: the browser polls what the page shows of it over HTTP
    (``widgets/follow.js``, with the teacher's token, which acts on nothing) and runs the page again when that
    changed (the class moved on, a student joined or answered, or the class ended) or when another server
    process answers (this one is gone: a cluster's replica died). Mounted first in a run: the browser then
    waits on what this run shows while it runs."""
    token = teacher_token(c)
    url = CLASS_VERSION.format(code=c.code) + "?" + urlencode({"me": token})
    data = {"url": url, "seen": teacher_view(c, token, time.time()), "process": PROCESS, "every": POLL_SECONDS,
            "spread": POLL_SPREAD, "retry": RETRY_SECONDS}
    follower(key="class_follower", data=data, on_moved_change=lambda: None)


def proven(t: Text) -> bool:
    """Whether this start may go on: no passphrase is set, or the one typed (then cleared from the page) is
    it. A wrong one counts against the computer's tries an hour, and past them none is compared."""
    if not passphrase.required():
        return True
    given, st.session_state[PASSPHRASE] = st.session_state.get(PASSPHRASE, ""), ""
    tries = f"passphrase:{client_address()}"
    if not class_store().allow(tries, POLICY["PASSPHRASE_TRIES_PER_HOUR"], 3600):
        st.error(t("class.too_many_passphrases"), icon=":material/block:")
        return False
    if not passphrase.matches(given):
        st.error(t("class.wrong_passphrase"), icon=":material/key_off:")
        return False
    class_store().refund(tries, 3600)
    return True


def start_class(t: Text) -> None:
    if not proven(t):
        return
    if not class_store().allow(f"start:{client_address()}", POLICY["STARTS_PER_HOUR"], 3600):
        st.error(t("class.too_many_starts"), icon=":material/block:")
        return
    key = new_key()
    for _ in range(5):  # a code another class has: draw again
        record = start(new_code(), key, t.lang)
        try:
            if class_store().create(record):
                st.session_state.update({CODE: record.code, TEACHER_KEY: key})
                st.query_params["class"] = record.code
                build_ahead_for(t.lang)  # (the students' "show me": ready by the time it is asked for)
                return
        except Refused as refused:
            st.error(t(refused.key), icon=":material/block:")
            return


def resume_from_link(t: Text) -> None:
    """A teacher link (``class`` and ``key``) hands this session the class; the key leaves the address bar."""
    code, key = url_value(BY_KEY["class"]), url_value(BY_KEY["key"])
    st.query_params.pop("key", None)
    if code is None or key is None:
        return
    record = class_store().read(code)
    try:
        if record is None:
            raise Refused("class.ended")
        check_teacher(record, key)
    except Refused as refused:
        st.error(t(refused.key), icon=":material/block:")
        return
    st.session_state.update({CODE: code, TEACHER_KEY: key})


def teach(t: Text, change, led: bool = False, **args) -> LiveClass | None:
    """``change(record, **args)`` applied to this session's class, if its key is the teacher's; ``led``:
    it sets the Explorer's view (the teacher's browser then takes it)."""
    key = st.session_state[TEACHER_KEY]

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


def end_class(t: Text) -> None:
    """The class over for every phone; this page shows its summary (:func:`class_summary`)."""
    teach(t, end)


def leave_class() -> None:
    """This page done with its class (ended: its summary stays in the store until the class expires)."""
    for key in (CODE, TEACHER_KEY):
        st.session_state.pop(key, None)
    st.query_params.pop("class", None)


def class_summary(record: LiveClass, t: Text) -> None:
    """An ended class: each question's round, how many answered, the counts and the share right; the same as a
    CSV file; and a new class."""
    st.subheader(t("class.summary_title"))
    rows = summary_rows(record, t)
    if rows:
        st.table(rows)
    else:
        st.info(t("class.summary_none"), icon=":material/info:")
    st.caption(t("class.summary_kept"))
    st.download_button(t("class.download"), summary_csv(record, t), file_name=f"blockstab-class-{record.code}.csv",
                       mime="text/csv", key="class_download", icon=":material/download:", on_click="ignore")
    st.button(t("class.new"), key="class_new", on_click=leave_class, type="primary", icon=":material/co_present:")


def status(record: LiveClass, t: Text) -> None:
    """How many seats are taken (a room of 30 that shows 230 is seen), whether joining is locked and the phones
    paused, and during a question how many answered (never what); the lock, the removal of the last minute's
    seats, and Pause."""
    seats = len(record.seats)
    line = t("class.one_student") if seats == 1 else t("class.students", count=seats)
    if record.locked:
        line += " · " + t("class.locked_status")
    if record.paused:
        line += " · " + t("class.paused_status")
    if record.activity == "question":
        line += " · " + t("class.answered", answered=len(record.answers), students=seats)
    st.subheader(line)
    locking, removing, pausing = st.columns([2, 3, 2])
    locking.button(t("class.unlock" if record.locked else "class.lock"), key="class_lock", on_click=teach,
                   args=(t, lock), kwargs={"locked": not record.locked}, use_container_width=True,
                   icon=":material/lock_open:" if record.locked else ":material/lock:")
    removing.button(t("class.remove_recent"), key="class_remove_recent", on_click=remove_last_minute, args=(t,),
                    icon=":material/group_remove:", use_container_width=True)
    pausing.button(t("class.unpause" if record.paused else "class.pause"), key="class_pause", on_click=teach,
                   args=(t, pause), kwargs={"paused": not record.paused}, use_container_width=True,
                   type="primary" if record.paused else "secondary",
                   icon=":material/play_arrow:" if record.paused else ":material/pause:")
    if (removed := st.session_state.pop(REMOVED, None)) is not None:
        st.info(t("class.removed", count=removed), icon=":material/group_remove:")


def remove_last_minute(t: Text) -> None:
    """The seats of the last minute removed (their answers too); how many, said on the page."""
    now, gone = time.time(), []

    def removed(c: LiveClass) -> LiveClass:
        gone[:] = recent(c, now)
        return remove_recent(c, now)

    if teach(t, removed) is not None:
        st.session_state[REMOVED] = len(gone)


@st.fragment
def explorer(state: ExplorerState, t: Text) -> None:
    """The Explorer with its controls: what the teacher's browser reports becomes the class's view."""
    reported = reported_view()
    if reported is not None and reported != st.session_state.get(REPORTED):
        st.session_state[REPORTED] = reported
        if any(getattr(state, k) != v for k, v in reported.items()):
            teach(t, show_view, view=explorer_query({"scenario": state.scenario, **reported}))
    instant_explorer(state, list(INSTANT), t, lead=st.session_state.get(LED, 0))


def question(record: LiveClass, t: Text, projector: bool) -> None:
    """The question, its choices (the right one marked once revealed), and what to do next with it."""
    asked = ASKABLE[record.question]
    phase = phase_at(record, time.time())
    pick, timing, go, poll = st.columns([7, 2, 2, 2], vertical_alignment="bottom")
    chosen = pick.selectbox(t("class.question"), ASKED, index=ASKED.index(record.question) if record.question in ASKED
                            else 0, key=f"class_question_{record.asked}",
                            format_func=lambda i: f"{i + 1}. {t(f'ex.{ASKABLE[i].id}.prompt')}")
    timing.number_input(t("class.timer"), min_value=TIMER_SECONDS[0], max_value=TIMER_SECONDS[1], value=None,
                        step=5, key=TIMER, help=t("class.timer_help"))
    go.button(t("class.ask"), key="class_ask", on_click=ask_now, args=(t, chosen), icon=":material/help:",
              use_container_width=True)
    with poll.popover(t("class.quick_poll"), help=t("class.quick_poll_help"), icon=":material/how_to_vote:",
                      use_container_width=True):
        for each in POLLS:
            st.button(t(f"class.poll.{each.id}"), key=f"class_{each.id}", on_click=ask_now,
                      args=(t, ASKABLE.index(each)), use_container_width=True)
    shut, again, show, explore = st.columns([2, 2, 2, 3])
    shut.button(t("class.close"), key="class_close", disabled=phase != "open", on_click=teach, args=(t, close),
                icon=":material/lock:", use_container_width=True)
    again.button(t("class.vote_again"), key="class_vote_again", help=t("class.vote_again_help"),
                 disabled=record.round != 1 or record.phase == "revealed" or not record.answers,
                 on_click=vote_again_now, args=(t,), icon=":material/replay:", use_container_width=True)
    show.button(t("class.reveal"), key="class_reveal", disabled=record.phase == "revealed", on_click=teach,
                args=(t, reveal), icon=":material/bar_chart:", type="primary", use_container_width=True)
    explore.button(t("ex.show_me"), key="class_show_me", disabled=record.phase != "revealed" or not asked.show_me,
                   on_click=teach, args=(t, show_me), kwargs={"led": True}, icon=":material/visibility:",
                   use_container_width=True)
    if record.round == 2:
        st.caption(t("class.second_round"))
    if record.timer and phase == "open":
        st.caption(t("class.timed", seconds=record.timer))
    question_text(record, t)
    if record.phase != "revealed":
        if asked.choices:
            st.markdown("\n".join(f"{n}. {t(asked.choice_key(c))}" for n, c in enumerate(asked.choices, 1)))
        if not projector:  # the teacher's own screen: the split so far, folded (never on the projector)
            with st.expander(t("class.private_look"), icon=":material/visibility_lock:", key="class_private_look"):
                st.caption(t("class.private_look_note"))
                chart(answers_figure(record, t), t, "class_private_answers", answers_description(record, t))
        return
    chart(answers_figure(record, t, projector), t, "class_answers", answers_description(record, t))
    explanation(record, t)


def ask_now(t: Text, question: int) -> None:
    """Ask ``question``, with the timer the field holds (if any), from the server's clock now."""
    teach(t, ask, question=question, timer=timer_set(), now=time.time())


def vote_again_now(t: Text) -> None:
    """The question's second round, timed as :func:`ask_now` times a question."""
    teach(t, vote_again, timer=timer_set(), now=time.time())


def timer_set() -> int:
    """The seconds the "Timer (seconds)" field holds (0: empty, no timer)."""
    return int(st.session_state.get(TIMER) or 0)


def class_page(record: LiveClass, t: Text, projector: bool) -> None:
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
        code.image(link_code_svg(link, projector), alt=t("class.qr_title"))
    homework(record, t, projector)
    status(record, t)

    # Buttons, not stateful widgets: a widget whose value the class sets, and which leaves the page with
    # its activity, would report a stale value as a change when it came back.
    *activities, free, end = st.columns([2, 2, 2, 3, 3], vertical_alignment="bottom")
    for column, activity in zip(activities, ACTIVITIES, strict=True):
        current = record.activity == activity and record.following
        column.button(t(f"class.activity.{activity}"), key=f"class_show_{activity}", disabled=current,
                      type="primary" if current else "secondary", on_click=teach, args=(t, activity_change(activity)),
                      kwargs={"led": activity == "explorer"}, use_container_width=True)
    if record.following:
        free.button(t("class.free"), key="class_free", on_click=teach, args=(t, explore_freely),
                    icon=":material/explore:", use_container_width=True)
    else:
        free.button(t("class.follow_me"), key="class_follow", on_click=teach, args=(t, follow_me), type="primary",
                    icon=":material/co_present:", use_container_width=True)
    with end.popover(t("class.end"), icon=":material/stop_circle:", use_container_width=True):
        st.button(t("class.end_confirm"), key="class_end", on_click=end_class, args=(t,), type="primary")

    st.button(t("class.next_in_script"), key="class_script_next", on_click=teach, args=(t, next_in_script),
              disabled=script_position(record) == len(LIVE_SCRIPT) - 1, icon=":material/skip_next:")
    if record.activity == "tour":
        back, forward, _ = st.columns([1, 1, 2])
        back.button(t("tour.previous"), key="class_previous", disabled=record.step == 0, on_click=teach,
                    args=(t, show_step), kwargs={"step": record.step - 1}, use_container_width=True)
        forward.button(t("tour.next"), key="class_next", disabled=record.step == len(TOUR) - 1, on_click=teach,
                       args=(t, show_step), kwargs={"step": record.step + 1}, use_container_width=True)
        tour_step(TOUR[record.step], t, projector, explorer_button=False, key="class_figure")
    elif record.activity == "explorer":
        explorer(class_explorer(record, projector), t)
    else:
        question(record, t, projector)

    if not projector:  # the key stays off the projector
        with st.expander(t("class.resume"), icon=":material/devices:", key="class_resume"):
            st.caption(t("class.resume_note"))
            query = urlencode({"class": record.code, "key": st.session_state[TEACHER_KEY], "lang": t.lang})
            st.code(f"{app_address()}/class?{query}", language=None)


def current_class(t: Text) -> LiveClass | None:
    """This session's class: taken over by a teacher's link, started from "For teachers", or kept from before
    (``None``, said in words, once it has ended)."""
    resume_from_link(t)
    if st.session_state.pop("class_start_now", False) and st.session_state.get(CODE) is None \
            and not passphrase.required():  # from For teachers (with a passphrase, it is asked for here first)
        start_class(t)
    code = st.session_state.get(CODE)
    record = class_store().read(code) if code else None
    if code and record is None:
        st.info(t("class.ended"), icon=":material/door_front:")
        for key in (CODE, TEACHER_KEY):
            st.session_state.pop(key, None)
    return record


def invitation(t: Text) -> None:
    """With no class: what a live class is, and the button that starts one."""
    linked = url_value(BY_KEY["class"])
    if linked and class_store().read(linked) is not None:
        st.info(t("class.resume_needed", code=linked), icon=":material/devices:")
    st.markdown(t("class.intro"))
    if not join_link("", t.lang)[1]:
        st.warning(t("class.local_only", command="bash scripts/start.sh --lan"), icon=":material/wifi_off:")
    if passphrase.required():
        st.text_input(t("class.passphrase"), type="password", key=PASSPHRASE, max_chars=200,
                      autocomplete="current-password")
    st.button(t("class.start"), key="class_start", on_click=start_class, args=(t,), type="primary",
              icon=":material/co_present:")
