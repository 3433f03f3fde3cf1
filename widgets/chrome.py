"""The page around every page's content: the favicon and CSS, the language, projector mode, the
active example, the URL's checks and the app's own address for full links."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import numpy as np
import streamlit as st
from PIL import Image

from blockstab.scenario import LESSON, Scenario, decode, encode
from server.streamlit_internals import QUERY_BYTES, QUERY_FIELDS, query_kept, query_string
from ui.controls import APP_CONTROLS, check_query
from ui.examples import ignored_settings, markdown_text, problems_text
from ui.text import LANG_TAGS, LANGUAGES, Text, language_for_locale, plotly_locale


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
# Explorer's depth plane was 50 px wide). A link to copy (For teachers) wraps rather than scroll in a
# box a keyboard cannot reach; a caption keeps AA contrast; nothing moves for a reader who asked for
# reduced motion. A keyboard's focus is seen on every control, at 3:1 or more against the page and
# the sidebar (Okabe-Ito blue, 5.2:1 on white, 4.6:1 on the sidebar's grey; Streamlit's own ring is
# its primary colour at half opacity, 2:1, or none, and Plotly's toolbar's is 1 px): a radio, a
# checkbox or a toggle draws its own box over a hidden native input, so its ring goes round its label,
# and a slider's round its thumb. A closed sidebar, slid off the screen, is out of the Tab order too.
# A table's toolbar (Streamlit's, seen on hover) shows while a key's focus is in it. A table's grid
# hands focus from its canvas to its unseen copy of the chosen cell (200 ms after a key; no ring is seen on
# that copy): the grid is ringed while focus is in it.
# A heading's "Link to heading" is left out: a Tab stop with nothing seen (it shows on hover only),
# labelled in English on a Chinese page, whose anchors lose the Chinese words ("#token", "#block").
APP_CSS = """<style>
.st-key-figure_pair { container-type: inline-size; }
@container (max-width: 800px) {
  .st-key-figure_pair [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
  .st-key-figure_pair [data-testid="stColumn"] { flex: 1 1 100% !important; width: 100% !important; }
}
.st-key-tour_clicker, .st-key-phone_hint, .st-key-class_follower { display: none; }
/* The link to the light page (/study), seen at a phone's width only: its wrapper hidden, so its gap goes too. */
[data-testid=stLayoutWrapper]:has(> .st-key-study_link) { display: none; }
.st-key-class_code p { font-size: 1.5rem !important; line-height: 1.3; }
.st-key-class_code strong { font-size: 3.5rem; letter-spacing: 0.15em; font-family: "Source Code Pro", monospace; }
.st-key-editor_upload [data-testid="stFileUploaderDropzoneInstructions"] { display: none; }
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] span { white-space: normal; }
[data-testid="stCode"] pre, [data-testid="stCode"] code { white-space: pre-wrap !important; overflow-wrap: anywhere; }
[data-testid="stCaptionContainer"] { color: #666564; opacity: 1; }  /* 5.8:1 on white (Streamlit fades it to 3.9:1) */
:focus-visible { outline: 3px solid #0072B2 !important; outline-offset: 2px; }
[data-testid="stElementToolbar"]:focus-within { opacity: 1 !important; }
[data-testid="stDataFrame"]:focus-within { outline: 3px solid #0072B2; outline-offset: 2px; }
[data-testid="stHeaderActionElements"] { display: none; }
label:has(> span > input:focus-visible) { outline: 3px solid #0072B2; outline-offset: 2px; border-radius: 4px; }
div:has(> div > input[type="range"]:focus-visible) { outline: 3px solid #0072B2; outline-offset: 2px; }
[data-testid="stSidebar"][data-collapsed="true"], [data-testid="stSidebar"][data-collapsed="true"] * {
  visibility: hidden !important; }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation-duration: 0.01ms !important; animation-iteration-count: 1 !important;
                           transition-duration: 0.01ms !important; scroll-behavior: auto !important; }
}
@media (max-width: 640px) {
  .st-key-phone_hint { display: block; }
  [data-testid=stLayoutWrapper]:has(> .st-key-study_link) { display: flex; }
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

# Outside projector mode, wider than a phone: a laptop's first screen holds a page's first figure
# (issue #50). The page starts near the top (Streamlit leaves 6rem above it, under a header that is
# empty while the sidebar is open: see-through here, and clicked through but on its own buttons), its
# title takes one compact line, and the Explorer's title and sentence sit close together.
DESKTOP_CSS = """<style>
@media (min-width: 641px) {
  [data-testid="stMainBlockContainer"] { padding-top: 1.25rem; }
  [data-testid="stHeader"] { background: transparent; pointer-events: none; }
  [data-testid="stHeader"] button, [data-testid="stHeader"] a { pointer-events: auto; }
  [data-testid="stMain"] h1 { font-size: 1.6rem !important; padding: 0 0 1.2rem 0 !important;
                              line-height: 1.25 !important; }  /* (under it, Streamlit's margin of -1rem) */
  .st-key-explorer_head { gap: 0.25rem; }
}
</style>"""

# The page's language, for a screen reader's voice (Streamlit's page says "en"); a Markdown table,
# which scrolls sideways on a phone, focusable so that a keyboard can scroll it; Plotly's SVGs out of
# the accessibility tree (a chart is named by its description: its tick labels would be read beside
# it), also those Plotly draws anew when it redraws a chart; a toolbar button Plotly leaves in English
# (Streamlit's "Fullscreen") worded from the chart's own dictionary (``plotly_locale``).
PAGE_SCRIPT = """<script>
document.documentElement.lang = "LANG";
window.blockstabPage ??= (() => {
  const tidy = () => {
    const tables = document.querySelectorAll("[data-testid=stMarkdownContainer] table:not([tabindex])");
    for (const table of tables) table.tabIndex = 0;
    for (const svg of document.querySelectorAll(".js-plotly-plot .main-svg:not([aria-hidden])")) {
      svg.setAttribute("aria-hidden", "true");
    }
    for (const button of document.querySelectorAll(".js-plotly-plot .modebar-btn[data-title]")) {
      const context = button.closest(".js-plotly-plot")._context;
      const word = context?.locales?.[context.locale]?.dictionary?.[button.dataset.title];
      if (word) { button.dataset.title = word; button.setAttribute("aria-label", word); }
    }
  };
  tidy();
  const observer = new MutationObserver(tidy);
  observer.observe(document.body, {childList: true, subtree: true});
  return observer;
})();
</script>"""


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


def example_in_link() -> Scenario | None:
    """This session's example for a link (``None``: the lesson, left out of the link)."""
    example = st.session_state.get("example", LESSON)
    return None if example == LESSON else example


def _set_language() -> None:
    st.query_params["lang"] = st.session_state["lang_choice"]


def app_chrome(t: Text) -> bool:
    """Sidebar link to join a live class, language switch, projector toggle and the keys that work
    everywhere; returns whether projector mode is on."""
    with st.sidebar:  # (joining a class is a page of the app's own, not Streamlit's: server.class_routes)
        st.markdown(f"[:material/phone_iphone: {t('page.join')}](/join?lang={t.lang})")
        st.radio(t("control.lang"), LANGUAGES, index=LANGUAGES.index(t.lang), key="lang_choice",
                 format_func=lambda code: t("lang." + code), horizontal=True, on_change=_set_language)
        projector = st.toggle(t("control.projector"), value=APP_CONTROLS[1].default, key="projector",
                              bind="query-params")
        with st.expander(t("keys.title"), icon=":material/keyboard:"):
            st.markdown(t("keys.body"))
        st.html(PAGE_SCRIPT.replace("LANG", LANG_TAGS[t.lang]), unsafe_allow_javascript=True)
    st.html(APP_CSS + (PROJECTOR_CSS if projector else DESKTOP_CSS))
    return projector


def chart(fig, t: Text, key: str, description: str, where=st) -> None:
    """A Plotly figure on the page (in ``where``: a column, the sidebar), its toolbar in ``t``'s
    language, ``description`` its accessible name and, but in projector mode, under it to unfold."""
    where.plotly_chart(fig, key=key, config=plotly_locale(t), alt=description)
    if not st.session_state.get("projector_on", False):
        where.expander(t("describe.show")).markdown(markdown_text(description))


def query_problems() -> list[tuple[str, str]]:
    """The URL's unusable (parameter, value) pairs (see ``check_query``); a query Streamlit dropped
    whole for its size is one pair, ``("", "")``."""
    raw = query_string()
    if raw and not query_kept(raw):
        return [("", "")]
    return check_query(st.query_params.to_dict())


def warn_about_url(t: Text, problems: list[tuple[str, str]], most: int = 5) -> None:
    """Say which URL parameters were ignored (the widgets would drop them silently), in one
    notice naming at most ``most``; the link's text is quoted as code, never read as Markdown."""
    if problems == [("", "")]:
        st.warning(t("url.dropped", fields=QUERY_FIELDS, kib=QUERY_BYTES // 1024), icon=":material/link_off:")
        return
    for key, value in problems:
        if key == "sc":
            st.warning(t("url.bad_example") + "\n\n" + problems_text(decode(value), t), icon=":material/link_off:")
    if said := ignored_settings(t, [(key, value) for key, value in problems if key != "sc"], most):
        st.warning(said, icon=":material/link_off:")


def on_phone() -> bool:
    """Whether the page is open in a phone's browser: every phone browser's User-Agent says "Mobi"."""
    return "Mobi" in (st.context.headers.get("User-Agent") or "")


def app_address() -> str:
    """The app's address as this browser reaches it (scheme, host and port), for full links a
    teacher can copy; empty when the browser named none."""
    parts = urlsplit(st.context.url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""


def explorer_link(query: dict[str, str]) -> str:
    """A full link that opens the Explorer with ``query`` (its documented path, /explore)."""
    return f"{app_address()}/explore?{urlencode(query)}"
