"""The instant Explorer's Streamlit side: it registers the component (``ui/explorer/``), serves the
app's copy of Plotly.js, has the parts of a view's bundle built (``server.bundles``, served by
``server.routes``), mounts the component with its data (``ui.instant``: never a figure) and takes the view the
browser reports back into the session (the page then writes it to the URL)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import plotly
import streamlit as st

from server.bundles import DRAW_AHEAD, build_around, bundle_url, ensure
from server.resume import resumed_state
from server.streamlit_internals import serve_component_files
from ui.bundle import FIGURES, range_first, range_part, sentence_and_look
from ui.controls import INSTANT, Control, ExplorerState
from ui.instant import STYLE, explorer_script, geometry_link, mount_data
from ui.text import Text

KEY = "instant_explorer"
MOUNTED = "instant_mounted"  # the Mounted record this session's component was last given
AROUND = "instant_built_around"  # what the bundle's ranges were last built around, in this session
PLOTLY_URL = "/_stcore/bidi-components/blockstab.plotly/plotly.min.js"

component = st.components.v2.component("blockstab.instant", js=explorer_script(),
                                       css=STYLE.read_text(encoding="utf-8"), isolate_styles=False)


@dataclass(frozen=True)
class Mounted:
    """What the component was mounted with: its data as JSON (resent as it is: Streamlit then sends a
    reference) and what that data was built for."""

    look: ExplorerState
    lang: str
    controls: tuple[Control, ...]
    opened_on: tuple[tuple[str, object], ...]  # the view it opened on; from then on it keeps its own
    lead: int | None
    data: bytes

    def built_for(self) -> tuple:
        return self.look, self.lang, self.controls, self.opened_on, self.lead


def reported_view() -> dict | None:
    """The view the browser last reported (the component's state; at its mount, the view it
    opened on; on a page back on a new session, what it came back with), or ``None`` before the
    component is mounted or when a value does not fit its control: a script can send anything."""
    state = st.session_state.get(KEY)
    if state is None:
        state = resumed_state(KEY)
    reported = state.get("view") if isinstance(state, Mapping) else None
    if isinstance(reported, Mapping) and all(c.accepts(reported.get(c.key)) for c in INSTANT):
        return {c.key: reported[c.key] for c in INSTANT}
    return None


def instant_explorer(state: ExplorerState, controls: list[Control], t: Text, lead: int | None = None) -> None:
    """Mount the instant Explorer on ``state`` with ``controls`` drawn in the browser. A report-back
    mounts it on the same data; if it moved the block in focus to a range not built yet, the range
    is built after every other element of the page is sent (the browser shows the block faded and
    reads the bundle's index until the range is listed). Call it last in its fragment. A new
    ``lead`` (a live class) moves the mounted Explorer to ``state``'s view."""
    _register_plotly()
    mounted = st.session_state.get(KEY) is not None
    if mounted and reported_view() is None:
        st.warning(t("explorer.instant_refused"), icon=":material/block:")
    view = {c.key: getattr(state, c.key) for c in INSTANT}
    sent: Mounted | None = st.session_state.get(MOUNTED)
    # The view it opened on (it keeps its own from then on, so a report-back sends the same data), or this
    # view when it opens now or a new lead moves it.
    reopened = not mounted or sent is None or (lead is not None and sent.lead != lead)
    opened_on = tuple(view.items()) if reopened else sent.opened_on
    look, lang = sentence_and_look(state), t.lang
    in_focus = range_part(range_first(state.shown_block))
    if sent is None or sent.built_for() != (look, lang, tuple(controls), opened_on, lead):
        ensure(look, lang, FIGURES, in_focus)  # before the data: the browser reads them at once
        data = mount_data(controls, dict(opened_on), t, look.projector, bundle_url(look, lang), PLOTLY_URL,
                          why_href=geometry_link(lang), lead=lead, ahead=DRAW_AHEAD, phone=look.phone)
        sent = Mounted(look, lang, tuple(controls), opened_on, lead,
                       json.dumps(data, allow_nan=False, ensure_ascii=False).encode())
        st.session_state[MOUNTED] = sent
    # The page reads the reported view at its next run (reported_view); Streamlit keeps a state
    # key only for a component event with a callback.
    component(key=KEY, data=sent.data, default={"view": view}, on_view_change=lambda: None)
    ensure(look, lang, in_focus)  # a report-back that moved to a range not built: built now, listed in the index
    # The bundle's other ranges, built ahead in a worker once per sentence (a build already running
    # for another leaves this one for a later run of this session's).
    first = range_first(state.shown_block)
    if st.session_state.get(AROUND) != (look, lang, first) and build_around(look, lang, first):
        st.session_state[AROUND] = look, lang, first


def _register_plotly() -> None:
    """Serve from this app (no CDN) the installed ``plotly`` package's Plotly.js (its ``package_data``)."""
    serve_component_files("plotly", "package_data", Path(plotly.__file__).parent)
