"""The only Streamlit glue outside the pages: language, projector mode, URL checks, and the
generic rendering of the control table."""

from __future__ import annotations

import streamlit as st

from .controls import APP_CONTROLS, CONTROLS, Control, ExplorerState, check_query
from .text import LANGUAGES, Text, language_for_locale

PROJECTOR_CSS = """<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stCaptionContainer"], label p { font-size: 21px !important; }
[data-testid="stMainBlockContainer"] { padding: 3.2rem 1.2rem 1rem 1.2rem; max-width: 100%; }
[data-testid="stVerticalBlock"] { gap: 0.4rem; }
[data-testid="stAlertContainer"] { padding: 0.45rem 0.9rem; }
h1 { font-size: 1.9rem !important; padding: 0 !important; } h2, h3 { font-size: 1.5rem !important; }
[data-testid="stHeader"] { background: transparent; }
</style>"""


def language() -> str:
    """The URL's ``lang`` if valid, else the browser's language; written back to the URL."""
    lang = st.query_params.get("lang")
    if lang not in LANGUAGES:
        lang = language_for_locale(st.context.locale)
    st.query_params["lang"] = lang
    return lang


def _set_language() -> None:
    st.query_params["lang"] = st.session_state["lang_choice"]


def app_chrome(t: Text) -> bool:
    """Sidebar language switch and projector toggle; returns whether projector mode is on."""
    with st.sidebar:
        st.radio(t("control.lang"), LANGUAGES, index=LANGUAGES.index(t.lang), key="lang_choice",
                 format_func=lambda code: t("lang." + code), horizontal=True, on_change=_set_language)
        projector = st.toggle(t("control.projector"), value=APP_CONTROLS[1].default, key="projector",
                              bind="query-params")
    if projector:
        st.html(PROJECTOR_CSS)
    return projector


def warn_about_url(t: Text, problems: list[tuple[str, str]]) -> None:
    """Say which URL parameters were ignored (the widgets would drop them silently)."""
    for key, value in problems:
        shown = value if len(value) <= 40 else value[:40] + "…"
        st.warning(t("url.ignored", key=key[:40], value=shown), icon=":material/link_off:")


def render_control(control: Control, t: Text):
    """One widget from its table row, bound to the URL under its key."""
    label = t("control." + control.key)
    common = {"key": control.key, "bind": "query-params", "help": t("help." + control.key)}
    if control.kind == "toggle":
        return st.toggle(label, value=control.default, **common)
    if control.kind == "choice":
        return st.radio(label, control.options, index=control.options.index(control.default), horizontal=True,
                        format_func=lambda option: t(f"option.{control.key}.{option}"), **common)
    return st.slider(label, control.low, control.high, value=control.default, **common)


def explorer_controls(t: Text, projector: bool) -> ExplorerState:
    """Render the Explorer's controls (in projector mode the primary ones in a row above the
    figures, the rest in the sidebar) and return the resulting state."""
    values = {}
    in_row = [c for c in CONTROLS if projector and c.primary]
    for control, column in zip(in_row, st.columns([4, 3, 3, 3]) if in_row else [], strict=True):
        with column:
            values[control.key] = render_control(control, t)
    with st.sidebar:
        st.subheader(t("explorer.controls"))
        for control in CONTROLS:
            if control not in in_row:
                values[control.key] = render_control(control, t)
    return ExplorerState(**{c.key: values[c.key] for c in CONTROLS}, projector=projector)
