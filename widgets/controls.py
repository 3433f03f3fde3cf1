"""The table of controls (``ui.controls``) rendered as Streamlit widgets bound to the URL: the
Explorer's, the Depth lab's and the Real model page's, and "open in Explorer"."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import streamlit as st

from blockstab.ablations import Ablation
from blockstab.pretrained import MAX_CHARS, sentence_problem
from blockstab.scenario import LESSON, Scenario
from ui.controls import BY_KEY, CONTROLS, LAB_CONTROLS, REAL_CONTROLS, Control, ExplorerState, explorer_query
from ui.examples import markdown_text, side_option
from ui.text import Text

from .chrome import active_example, example_in_link, on_phone
from .explorer import reported_view


def render_control(control: Control, t: Text, compact: bool = False, example: Scenario = LESSON):
    """One widget from its table row, bound to the URL under its key (``compact``: one line high)."""
    label = t("control." + control.key)
    common = {"key": control.key, "bind": "query-params", "help": None if compact else t("help." + control.key)}
    # The table's default is also the binding's default: only other values go into the URL.
    # A value set by "open in Explorer" (session state) wins over it, as Streamlit documents.
    preset = control.key in st.session_state
    if control.kind == "toggle":
        return st.toggle(label, value=control.default, **common)
    if control.kind in ("choice", "steps"):  # Streamlit's binding would put the translated label in the URL
        if not preset:
            st.session_state[control.key] = url_value(control)
        if control.kind == "steps":
            value = st.select_slider(label, control.options, key=control.key, help=common["help"])
            _write_to_url(control, value)
            return value
        widget = st.selectbox if compact else partial(st.radio, horizontal=True)

        def names(option):
            if control.key == "scenario":  # the sentences are named by the active example, and a
                # radio's options are Markdown (a select box's are plain text)
                name = side_option(example, option, t)
                return name if compact else markdown_text(name)
            return t(f"option.{control.key}.{option}")

        value = widget(label, control.options, key=control.key, help=common["help"], format_func=names)
        _write_to_url(control, value)
        return value
    # Not bound to the URL: Streamlit's binding would read "1e1" or "2.9" that the app's check
    # refused, so the view would not be the one the notice names.
    if not preset:
        st.session_state[control.key] = url_value(control)
    if control.kind == "text":  # typed text goes into the URL only when the app can use it
        value = st.text_input(label, key=control.key, max_chars=MAX_CHARS, help=common["help"])
        if control.parse(value) is not None:
            _write_to_url(control, value)
        return value
    value = st.slider(label, control.low, control.high, key=control.key, help=common["help"])
    _write_to_url(control, value)
    return value


def _write_to_url(control: Control, value) -> None:
    """Keep a language-neutral id in the URL; a default value leaves the URL clean. Each write
    sends the browser a message, so a value already there is not written again."""
    text = control.format(value)
    if value == control.default:
        st.query_params.pop(control.key, None)
    elif st.query_params.get(control.key) != text:
        st.query_params[control.key] = text


def url_value(control: Control):
    """The control's value in the URL as the app's check reads it, else its default."""
    raw = st.query_params.get(control.key)
    parsed = None if raw is None else control.parse(raw)
    return control.default if parsed is None else parsed


def explorer_controls(t: Text, projector: bool) -> tuple[ExplorerState, list[Control]]:
    """Render the Explorer's Streamlit controls (on a phone the sentence above the figures, the
    rest in the sidebar) and return the resulting state, and the visible controls the instant
    Explorer draws in the browser (their values here: the URL's, or one set by "open in Explorer";
    :func:`with_reported_view` then takes the browser's). Controls left out of a teacher's
    ``show=`` list are not drawn and keep the link's value."""
    example, phone = active_example(), on_phone()
    listed = url_value(BY_KEY["show"]) or tuple(c.key for c in CONTROLS)  # (a teacher's link's show=)
    visible = [c for c in CONTROLS if c.key in listed and not c.instant]
    values = {c.key: url_value(c) for c in CONTROLS if c.key not in listed}
    instant = [c for c in CONTROLS if c.key in listed and c.instant]
    for control in instant:
        values[control.key] = st.session_state.get(control.key, url_value(control))
    # The instant Explorer's switches and depth are above the figures; on a phone the sentence too
    # (in projector mode it waits in the sidebar: above, it would push the figures off the screen).
    in_row = [c for c in visible if phone and c.primary]
    columns = st.columns([2.6 if c.kind == "choice" else 3.3 for c in in_row]) if in_row else []
    for control, column in zip(in_row, columns, strict=True):
        with column:
            values[control.key] = render_control(control, t, compact=True, example=example)
    sidebar = [c for c in visible if c not in in_row]
    if sidebar:
        with st.sidebar:
            st.subheader(t("explorer.controls"))
            for control in sidebar:
                values[control.key] = render_control(control, t, example=example)
    state = ExplorerState(**{c.key: values[c.key] for c in CONTROLS}, projector=projector, phone=phone,
                          example=example)
    return state, instant


def reported_state(state: ExplorerState, instant: list[Control]) -> ExplorerState:
    """``state`` with the ``instant`` controls' values as the browser last reported them (before its first
    report, ``state``'s own): the view lives in the browser, and the server reads it here only."""
    reported = reported_view() or {}
    return replace(state, **{c.key: reported.get(c.key, getattr(state, c.key)) for c in instant})


def with_reported_view(state: ExplorerState, instant: list[Control]) -> ExplorerState:
    """:func:`reported_state`, each of its ``instant`` values kept in the URL (a link to the view)."""
    reported = reported_state(state, instant)
    for control in instant:
        _write_to_url(control, getattr(reported, control.key))
    return reported


def open_in_explorer(view: dict) -> None:
    """Switch to the Explorer showing ``view`` (every other control back to its default) on this
    session's example."""
    for control in CONTROLS:
        st.session_state[control.key] = view.get(control.key, control.default)
    query = explorer_query(view, lang=st.query_params.get("lang"), sc=example_in_link())
    st.switch_page("pages/explorer.py", query_params=query)


def lab_controls(t: Text) -> dict:
    """Render the Depth lab's controls (``lab_show`` in the page, the stack's in the sidebar, only
    when the user's own stack is shown) and return every control's value."""
    show, *stack = LAB_CONTROLS
    values = {show.key: render_control(show, t)}
    if values[show.key] != "stack":
        return values | {c.key: url_value(c) for c in stack}
    with st.sidebar:
        st.subheader(t("lab.controls"))
        return values | {c.key: render_control(c, t) for c in stack}


def real_controls(t: Text) -> tuple[str, Ablation]:
    """Render the Real model page's controls (the sentence box, then the switches in a row) and
    return the sentence to run and the ablation. A sentence the page cannot run is named in a
    warning, and the last one that could (at first the default) is run instead."""
    text, *switches = REAL_CONTROLS
    typed = render_control(text, t)
    problem = sentence_problem(typed)
    if problem:
        reason, detail = problem
        st.warning(t(f"real.problem.{reason}", detail=detail, limit=MAX_CHARS), icon=":material/edit_off:")
    else:
        st.session_state["real_sentence"] = typed
    values = {}
    for control, column in zip(switches, st.columns([3, 3, 2, 3]), strict=True):
        with column:
            values[control.key] = render_control(control, t)
    ablation = Ablation(residual=values["real_residual"], norm=values["real_norm"], layer=values["real_layer"],
                        norm_off=values["real_norm_off"]).canonical
    return st.session_state.get("real_sentence", text.default), ablation
