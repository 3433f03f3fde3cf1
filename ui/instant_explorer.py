"""The instant Explorer's Streamlit side (issue #16): it registers the component (``ui/instant.js``),
the app's copy of Plotly.js and the folder of the tens of blocks, mounts the component with what
``ui.instant`` sends ahead, and takes the view the browser reports back into the session (the page
then writes it to the URL).

A report-back rerun builds and sends nothing: the payload is cached per sentence and look, and the
component's data stays the same message (Streamlit's message cache then sends a reference). A block
in focus in a ten of blocks not sent (``server.tens``) is fetched by the browser from the app,
where every ten built is a file; only a ten not built yet is built and sent by a report-back.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlencode

import plotly
import streamlit as st
from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from server.tens import build_around, built_ten, ten_url, tens_folder, tens_to_send

from .controls import CONTROLS, MAX_EXPLORER_DEPTH, Control, ExplorerState
from .instant import BLOCKS_SENT, blocks_sent, packed, payload, sentence_and_look
from .text import Text

HERE = Path(__file__).parent
KEY = "instant_explorer"
SENT_AHEAD = "instant_sent_ahead"  # the component's data kept in the session (Kept)
AROUND = "instant_built_around"  # what the tens around were last built for, in this session
PLOTLY_ASSETS = "blockstab.plotly"  # served at /_stcore/bidi-components/blockstab.plotly/plotly.min.js
TENS_ASSETS = "blockstab.tens"  # the tens' files, at server.tens.TENS_ROUTE
PLOT_CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True,
               "toImageButtonOptions": {"format": "png", "scale": 2}}
INSTANT = tuple(c for c in CONTROLS if c.instant)
MESSAGE_ROOM = 900_000  # bytes of the payload and the tens in one message (at most 1 MB: .streamlit/config.toml)


class Mount(NamedTuple):
    """What the component's data is built for: the sentence and look
    (:func:`ui.instant.sentence_and_look`), the language, the controls drawn in the browser and the
    view it opened on (as items)."""

    look: ExplorerState
    lang: str
    controls: tuple[Control, ...]
    opened_on: tuple[tuple[str, object], ...]


class Kept(NamedTuple):
    """The component's data as sent, kept in the session: what it was built for, the first blocks
    of the tens of blocks it holds (``server.tens``) and the data, as JSON in UTF-8 bytes."""

    mount: Mount
    tens: tuple[int, ...]
    data: bytes


component = st.components.v2.component("blockstab.instant", js=(HERE / "instant.js").read_text(encoding="utf-8"),
                                       css=(HERE / "instant.css").read_text(encoding="utf-8"), isolate_styles=False)


@st.cache_resource(max_entries=16, show_spinner=False)
def packed_payload(state: ExplorerState, lang: str) -> str:
    """:func:`ui.instant.payload` for a sentence and look (:func:`ui.instant.sentence_and_look`),
    packed; built once."""
    return packed(payload(state, Text(lang)))


def reported_view() -> dict | None:
    """The view the browser last reported (the component's state; at its mount, the view it
    opened on), or ``None`` before the component is mounted or when a value does not fit its
    control: a script can send anything."""
    state = st.session_state.get(KEY)
    reported = state.get("view") if isinstance(state, Mapping) else None
    if isinstance(reported, Mapping) and all(c.accepts(reported.get(c.key)) for c in INSTANT):
        return {c.key: reported[c.key] for c in INSTANT}
    return None


def instant_explorer(state: ExplorerState, controls: list[Control], t: Text) -> None:
    """Mount the instant Explorer on ``state`` with ``controls`` drawn in the browser. A report-back
    mounts it on what it sent before. Call it last in its fragment: when the block in focus has
    moved to a ten of blocks not yet built (the browser shows that block waiting), the report-back
    builds the ten with every other element of the fragment already sent (Streamlit fades an element
    still to come when a run takes longer than 0.5 s, and a ten takes 0.4-0.9 s), and reruns the
    fragment to send it."""
    _register_assets()
    mounted = st.session_state.get(KEY) is not None
    if mounted and reported_view() is None:
        st.warning(t("explorer.instant_refused"), icon=":material/block:")
    view = {c.key: getattr(state, c.key) for c in INSTANT}
    if not mounted:  # it opens on this view, and keeps its own from then on
        st.session_state["instant_opened_on"] = view
    opened_on = st.session_state.get("instant_opened_on", view)
    mount = Mount(sentence_and_look(state), t.lang, tuple(controls), tuple(opened_on.items()))
    first = blocks_sent(state.shown_block)
    kept = st.session_state.get(SENT_AHEAD)
    report_back = kept is not None and kept.mount == mount and _in_fragment_run()
    unbuilt = report_back and first not in kept.tens and built_ten(mount.look, mount.lang, first) is None
    # A report-back sends what it sent before: a ten built is fetched by the browser from the app.
    data = kept.data if report_back else _sent_ahead(mount, first, t)
    # The page reads the reported view at its next run (reported_view); Streamlit keeps a state
    # key only for a component event with a callback.
    component(key=KEY, data=data, default={"view": view}, on_view_change=lambda: None)
    if unbuilt:  # the ten of the block in focus, built and kept for the rerun that sends it
        _sent_ahead(mount, first, t)
        st.rerun(scope="fragment")
    # Have the tens around ready (built ahead in a worker once per sentence; a build already running
    # for another leaves this one for a later run of this session's).
    if st.session_state.get(AROUND) != (mount, first) and build_around(mount.look, mount.lang, first):
        st.session_state[AROUND] = mount, first


def _in_fragment_run() -> bool:
    """Whether this run is a fragment's rerun (a report-back), not the whole page's: Streamlit's
    own test for allowing ``st.rerun(scope="fragment")`` (tests/app/test_instant.py pins it)."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


@functools.lru_cache(maxsize=64)
def _room_for_tens(look: ExplorerState, lang: str) -> int:
    """What a message has room for beside the payload (looked up without hashing the sentence as
    Streamlit's cache does, about 1 ms)."""
    return MESSAGE_ROOM - len(packed_payload(look, lang))


def _sent_ahead(mount: Mount, first: int, t: Text) -> bytes:
    """The component's data for ``mount`` with the tens of blocks from ``first``
    (``server.tens``: that ten and those beside it that are built), as JSON in UTF-8 bytes, kept
    in the session (:class:`Kept`): a report-back rerun sends the same bytes, which Streamlit neither
    serializes nor canonicalizes again (a dict of 0.3 MB costs it 2-3 ms a run; the browser parses
    the JSON)."""
    tens = tens_to_send(mount.look, mount.lang, first, _room_for_tens(mount.look, mount.lang))
    kept = st.session_state.get(SENT_AHEAD)
    if kept is not None and (kept.mount, kept.tens) == (mount, tuple(tens)):
        return kept.data
    projector = mount.look.projector
    data = {
        "payload": packed_payload(mount.look, mount.lang),
        "blocks": list(tens.values()),
        "controls": [_spec(c, t) for c in mount.controls],
        "texts": {"controls": t("explorer.controls"), "block_controls": t("explorer.block_controls"),
                  # projector mode: a line in the verdict's box, so the figures stay on the screen
                  "layernorm_2d": t("explorer.layernorm_2d_short") if projector else t("explorer.layernorm_2d"),
                  "why_link": t("explorer.why_link"), "why_href": "/geometry?" + urlencode({"lang": t.lang}),
                  "rmsnorm_note": t("explorer.rmsnorm_note"), "course_match": t("explorer.course_match"),
                  # by depth: a stack shallower than the block in focus shows its last block
                  "block_clamped": [t("explorer.block_clamped", depth=n) for n in range(1, MAX_EXPLORER_DEPTH + 1)]},
        "projector": projector,
        "config": PLOT_CONFIG,
        "controls_for": f"{mount.lang}-{projector}-{','.join(c.key for c in mount.controls)}",  # redrawn on a change
        "tens_url": ten_url(mount.look, mount.lang),  # a ten not sent: fetched from here, once it is built
        "ten_blocks": BLOCKS_SENT, "max_block": MAX_EXPLORER_DEPTH,
        "view": dict(mount.opened_on),
    }
    encoded = json.dumps(data, allow_nan=False).encode()
    st.session_state[SENT_AHEAD] = Kept(mount, tuple(tens), encoded)
    return encoded


def _spec(control: Control, t: Text) -> dict:
    """A control as the browser draws it: its key, kind, catalog label and help, whether it goes
    under the block view, and its range or options (each with its catalog name)."""
    spec = {"key": control.key, "kind": control.kind, "label": t(f"control.{control.key}"),
            "help": t(f"help.{control.key}"), "under_block": control.under_block}
    if control.kind == "choice":
        spec["options"] = [[option, t(f"option.{control.key}.{option}")] for option in control.options]
    if control.kind == "int":
        spec |= {"low": control.low, "high": control.high}
    return spec


def _register_assets() -> None:
    """Serve from this app (no CDN) the installed ``plotly`` package's Plotly.js and the tens of
    blocks' files (``server.tens``): manifest entries whose asset directories are the package's
    ``package_data`` and the tens' folder."""
    registry = Runtime.instance().bidi_component_registry
    if registry.get(PLOTLY_ASSETS) is None:
        manifest = ComponentManifest(name="blockstab", version="1",
                                     components=[ComponentConfig("plotly", "package_data")])
        registry.register_from_manifest(manifest, Path(plotly.__file__).parent)
    if registry.get(TENS_ASSETS) is None:
        folder = tens_folder()
        manifest = ComponentManifest(name="blockstab", version="1", components=[ComponentConfig("tens", folder.name)])
        registry.register_from_manifest(manifest, folder.parent)
