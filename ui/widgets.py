"""The Streamlit glue outside the pages (the instant Explorer's is ``instant_explorer``): language,
the active example, projector mode, URL checks, and the generic rendering of the control table."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from functools import partial
from urllib.parse import urlencode, urlsplit

import numpy as np
import streamlit as st
from PIL import Image
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.state import query_params as streamlit_query
from threadpoolctl import threadpool_limits

from blockstab.ablations import Ablation, Comparison, LayerReadouts, compare, layer_readouts
from blockstab.block import StackConfig
from blockstab.lab import MAX_SECONDS
from blockstab.pretrained import MAX_CHARS, ModelUnavailable, TrainedModel, load_model, sentence_problem
from blockstab.scenario import LESSON, Scenario, decode, encode

from .controls import (
    APP_CONTROLS,
    BY_KEY,
    CONTROLS,
    LAB_CONTROLS,
    REAL_CONTROLS,
    Control,
    ExplorerState,
    check_query,
    explorer_query,
)
from .examples import literal, markdown_text, problems_text, side_option
from .instant_explorer import reported_view
from .lab_worker import OverTime, WorkerCrashed, in_worker
from .real_views import layers_figure, meaning_figure, projection_figure
from .shared_runs import Replaced, SharedRuns, Waiting
from .text import LANGUAGES, Text, language_for_locale
from .views import FIGURES, explore, figure_state
from .views.tables import stage_csv

# Bounded caches shared by every page and session. Engine results are read-only arrays; figures
# are only read by st.plotly_chart. Building a figure (Plotly's validation) costs far more than
# the engine, so a class clicking through the same views pays for each figure once.
explore_cached = st.cache_resource(max_entries=256, show_spinner=False)(explore)


def figure_cached(name: str, state: ExplorerState, lang: str):
    """The view ``name`` of ``state`` in language ``lang``, built once for all the states that show
    the same figure (a depth change keeps the block view; a block or stage change, the others)."""
    return _built_figure(name, figure_state(name, state), lang)


@st.cache_resource(max_entries=96, show_spinner=False)
def _built_figure(name: str, state: ExplorerState, lang: str):
    return FIGURES[name](state, explore_cached(state), Text(lang))


def _stacked_blocks_icon(size: int = 32) -> Image.Image:
    """The app's favicon, drawn here so nothing is fetched: three stacked blocks (Okabe-Ito)."""
    icon = np.full((size, size, 3), 255, dtype=np.uint8)
    for row, colour in enumerate(((0, 114, 178), (0, 158, 115), (213, 94, 0))):
        top = 3 + row * 9
        icon[top:top + 8, 3:size - 3] = colour
    return Image.fromarray(icon)


APP_ICON = _stacked_blocks_icon()

# Every page: the tour's clicker buttons (PageDown / PageUp) stay out of sight; on a phone a table
# scrolls inside its own box (never the page, never breaking a vector or a Chinese word), and the
# Explorer says where its controls are. The uploader states its own limit (16 KB): Streamlit's hint
# would say "1MB per file", its smallest setting. A page link in the page (a paper's title) wraps
# rather than end in "…". A page's pair of planes (the Explorer's, the own example's) go one under
# the other where side by side each would be too narrow to read (1024 px with the sidebar open: the
# Explorer's depth plane was 50 px wide).
APP_CSS = """<style>
.st-key-figure_pair { container-type: inline-size; }
@container (max-width: 800px) {
  .st-key-figure_pair [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
  .st-key-figure_pair [data-testid="stColumn"] { flex: 1 1 100% !important; width: 100% !important; }
}
.st-key-tour_clicker, .st-key-phone_hint { display: none; }
.st-key-editor_upload [data-testid="stFileUploaderDropzoneInstructions"] { display: none; }
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] span { white-space: normal; }
@media (max-width: 640px) {
  .st-key-phone_hint { display: block; }
  [data-testid="stMarkdownContainer"] table { display: block; max-width: 100%; overflow-x: auto; }
  [data-testid="stMarkdownContainer"] td, [data-testid="stMarkdownContainer"] th { white-space: nowrap; }
}
</style>"""
PROJECTOR_CSS = """<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stCaptionContainer"], label p { font-size: 21px !important; }
[data-testid="stMainBlockContainer"] { padding: 3.2rem 1.2rem 1rem 1.2rem; max-width: 100%; }
[data-testid="stVerticalBlock"] { gap: 0.4rem; }
[data-testid="stAlertContainer"] { padding: 0.45rem 0.9rem; }
h1 { font-size: 1.9rem !important; padding: 0 0 0.3rem 0 !important; line-height: 1.25 !important; }
h2, h3 { font-size: 1.5rem !important; }
[data-testid="stHeader"] { background: transparent; }
.modebar-container { display: none !important; }
</style>"""


def language() -> str:
    """The URL's ``lang`` if valid, else this session's choice (the sidebar's page links drop the
    query string), else the browser's language; written back to the URL."""
    lang = st.query_params.get("lang")
    if lang not in LANGUAGES:
        lang = st.session_state.get("lang") or language_for_locale(st.context.locale)
    st.query_params["lang"] = st.session_state["lang"] = lang
    return lang


def active_example() -> Scenario:
    """The URL's ``sc`` if usable (a bad one falls back to the lesson; the router said why), else
    this session's example (the sidebar's page links drop the query string), else the lesson."""
    raw = st.query_params.get("sc")
    if raw is None:
        example = st.session_state.get("example", LESSON)
    else:
        decoded = decode(raw)
        example = decoded if isinstance(decoded, Scenario) else LESSON
    use_example(example)
    return example


def use_example(example: Scenario) -> None:
    """Make ``example`` this session's and put it in the URL (the lesson leaves the URL clean)."""
    st.session_state["example"] = example
    if example == LESSON:
        st.query_params.pop("sc", None)
    else:
        st.query_params["sc"] = encode(example)


def _set_language() -> None:
    st.query_params["lang"] = st.session_state["lang_choice"]


def app_chrome(t: Text) -> bool:
    """Sidebar language switch and projector toggle; returns whether projector mode is on."""
    with st.sidebar:
        st.radio(t("control.lang"), LANGUAGES, index=LANGUAGES.index(t.lang), key="lang_choice",
                 format_func=lambda code: t("lang." + code), horizontal=True, on_change=_set_language)
        projector = st.toggle(t("control.projector"), value=APP_CONTROLS[1].default, key="projector",
                              bind="query-params")
    st.html(APP_CSS + (PROJECTOR_CSS if projector else ""))
    return projector


def query_problems() -> list[tuple[str, str]]:
    """The URL's unusable (parameter, value) pairs (see ``check_query``); a query Streamlit dropped
    whole for its size is one pair, ``("", "")``."""
    ctx = get_script_run_ctx()
    raw = ctx.query_string if ctx else ""
    if raw and not streamlit_query.sanitize_query_string(raw):
        return [("", "")]
    return check_query(st.query_params.to_dict())


def warn_about_url(t: Text, problems: list[tuple[str, str]], most: int = 5) -> None:
    """Say which URL parameters were ignored (the widgets would drop them silently), in one
    notice naming at most ``most``; the link's text is quoted as code, never read as Markdown."""
    if problems == [("", "")]:
        st.warning(t("url.dropped", fields=streamlit_query.CLIENT_STATE_QUERY_STRING_MAX_FIELDS,
                     kib=streamlit_query.CLIENT_STATE_QUERY_STRING_MAX_LENGTH // 1024), icon=":material/link_off:")
        return
    for key, value in problems:
        if key == "sc":
            st.warning(t("url.bad_example") + "\n\n" + problems_text(decode(value), t), icon=":material/link_off:")
    settings = [literal(f"{key}={value}", limit=60) for key, value in problems if key != "sc"]
    if len(settings) == 1:
        st.warning(t("url.ignored", setting=settings[0]), icon=":material/link_off:")
    elif settings:
        more = len(settings) - most
        listed = ", ".join(settings[:most]) + (" " + t("url.more", count=more) if more > 0 else "")
        st.warning(t("url.ignored_list", settings=listed), icon=":material/link_off:")


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


def on_phone() -> bool:
    """Whether the page is open in a phone's browser: every phone browser's User-Agent says "Mobi"."""
    return "Mobi" in (st.context.headers.get("User-Agent") or "")


def explorer_controls(t: Text, projector: bool) -> tuple[ExplorerState, list[Control]]:
    """Render the Explorer's Streamlit controls (on a phone the sentence above the figures, the
    rest in the sidebar) and return the resulting state, and the visible controls the instant
    Explorer draws in the browser (their values here: the URL's, or one set by "open in Explorer";
    :func:`with_reported_view` then takes the browser's). Controls left out of a teacher's
    ``show=`` list are not drawn and keep the link's value."""
    example, phone = active_example(), on_phone()
    shown = url_value(BY_KEY["show"]) or tuple(c.key for c in CONTROLS)
    visible = [c for c in CONTROLS if c.key in shown and not c.instant]
    values = {c.key: url_value(c) for c in CONTROLS if c.key not in shown}
    instant = [c for c in CONTROLS if c.key in shown and c.instant]
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


def explored_csv(state: ExplorerState) -> str:
    """:func:`~ui.views.tables.stage_csv` of ``state``'s run (a download button calls it when
    clicked, on a thread of its own)."""
    return stage_csv(state, explore_cached(state))


def with_reported_view(state: ExplorerState, instant: list[Control]) -> ExplorerState:
    """``state`` with the ``instant`` controls' values as the browser last reported them (before
    its first report, ``state``'s own), each kept in the URL."""
    reported = reported_view() or {}
    values = {c.key: reported.get(c.key, getattr(state, c.key)) for c in instant}
    for control in instant:
        _write_to_url(control, values[control.key])
    return replace(state, **values)


def open_in_explorer(view: dict) -> None:
    """Switch to the Explorer showing ``view`` (every other control back to its default) on this
    session's example."""
    for control in CONTROLS:
        st.session_state[control.key] = view.get(control.key, control.default)
    query = explorer_query(view, lang=st.query_params.get("lang"), sc=example_in_link())
    st.switch_page("pages/explorer.py", query_params=query)


def app_address() -> str:
    """The app's address as this browser reaches it (scheme, host and port), for full links a
    teacher can copy; empty when the browser named none."""
    parts = urlsplit(st.context.url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""


def explorer_link(query: dict[str, str]) -> str:
    """A full link that opens the Explorer with ``query`` (its documented path, /explore)."""
    return f"{app_address()}/explore?{urlencode(query)}"


def example_in_link() -> Scenario | None:
    """This session's example for a link (``None``: the lesson, left out of the link)."""
    example = st.session_state.get("example", LESSON)
    return None if example == LESSON else example


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


def one_blas_thread() -> None:
    """BLAS on one thread where the Real model page computes: two threads were ten times slower on
    a loaded 2-core machine (the Depth lab's worker processes pin their own, ``ui.lab_worker``).
    OpenBLAS has one thread count for the whole process, so it is set and never restored (a session
    restoring its old count would unpin another's run). threadpoolctl lets one live Python thread
    set it and ignores the others, and a session's script thread ends with its run, so the count is
    set at every computation (0.3 ms), not once per process: the first thread to compute takes
    control and pins it (tests/app/test_real_page.py reads the count inside the computation)."""
    threadpool_limits(limits=1, user_api="blas")


@st.cache_resource(show_spinner=False)
def trained_model() -> TrainedModel | ModelUnavailable:
    """all-MiniLM-L6-v2, read and checked once per process (or why it cannot be used)."""
    one_blas_thread()
    try:
        return load_model()
    except ModelUnavailable as unavailable:
        return unavailable


# A sentence run keeps 7 layers of 384 float32 per token: 0.18 MB for the default sentence, at most
# ~0.65 MB (200 characters). A sentence has about 60 views and 120 runs; the caches hold one's.
@st.cache_resource(max_entries=160, show_spinner=False)
def _sentence_run(text: str, cfg: StackConfig) -> LayerReadouts:
    one_blas_thread()
    return layer_readouts(trained_model().stream(text, cfg))


@st.cache_resource(max_entries=96, show_spinner=False)
def real_comparison(sentence: str, ablation: Ablation) -> Comparison:
    one_blas_thread()  # the projection's SVD (LAPACK) runs here, besides the forward passes
    return compare(trained_model(), sentence, ablation, _sentence_run)


@st.cache_resource(max_entries=96, show_spinner=False)
def real_figures(sentence: str, ablation: Ablation, lang: str, projector: bool, phone: bool) -> tuple:
    """The page's three figures, built once for a class (about 2 ms: they skip Plotly's validation)."""
    c, t = real_comparison(sentence, ablation), Text(lang)
    return (layers_figure(c, t, projector, phone), meaning_figure(c, t, projector),
            projection_figure(c, t, projector, phone))


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


@st.cache_resource
def _lab_runs() -> SharedRuns:
    """One run per core, each in its own low-priority worker process (``ui.lab_worker``)."""
    return SharedRuns(size=64, workers=max(1, min(4, os.cpu_count() or 1)))


def _client() -> str:
    """Who asks for a run: the student's computer (all its tabs), or this session on localhost."""
    return st.context.ip_address or get_script_run_ctx().session_id


def computed_with_progress(key, job, t: Text):
    """``job(progress)`` (picklable, see :func:`ui.lab_worker.in_worker`) run once for every session
    (see ``ui.shared_runs``) in a worker process, with a progress bar while it runs or while this
    session waits for it. Changing a control meanwhile stops the run or the wait: Streamlit ends
    the script at the bar's next update, which ends the worker."""
    runs = _lab_runs()
    found = runs.get(key)
    if found is not None:
        return found
    bar = st.progress(0.0, text=t("lab.running"))

    def run_in_worker(report):
        last = [0.0, time.monotonic()]

        def progress(fraction: float) -> None:  # at most ~20 bar updates a second over the websocket
            report(fraction)
            if fraction - last[0] >= 0.01 and time.monotonic() - last[1] >= 0.05:
                last[:] = fraction, time.monotonic()
                bar.progress(min(fraction, 1.0), text=t("lab.running"))

        return in_worker(job, MAX_SECONDS, progress)

    def show(waiting: Waiting) -> None:
        text = t("lab.queued", ahead=waiting.ahead) if waiting.ahead else t("lab.running")
        bar.progress(min(waiting.fraction, 1.0), text=text)

    try:
        found = runs.run(key, run_in_worker, show, owner=_client())
    except (OverTime, Replaced, WorkerCrashed) as stopped:
        bar.empty()
        if isinstance(stopped, WorkerCrashed):
            st.error(t("lab.worker_crashed"), icon=":material/error:")
        else:
            message = t("lab.over_time_none", seconds=f"{MAX_SECONDS:.0f}") if isinstance(stopped, OverTime) \
                else t("lab.replaced")
            st.warning(message, icon=":material/timer_off:")
        st.stop()
    bar.empty()
    return found
