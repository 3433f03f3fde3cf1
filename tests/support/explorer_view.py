"""The instant Explorer as AppTest sees it (no browser runs its JavaScript).

The page sends the component its data; the browser shows, for the view it holds, the setting's
figures cut to the depth, that depth's verdict and the block view. This module reads the same
data and applies the same cut in Python (``ui.views.cut.apply_cut``), so page tests can compare
what a browser would show with the pure view functions; the browser tests check that the
JavaScript draws exactly that. A user's change is what the browser reports: the component's state.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from dataclasses import dataclass

import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

from ui.controls import BY_KEY, CONTROLS, ExplorerState
from ui.instant import setting_key
from ui.instant_explorer import INSTANT, KEY
from ui.views.cut import apply_cut


@functools.lru_cache(maxsize=32)
def unpack(packed: str) -> dict:
    """A payload or a ten as the browser reads it; decoded once per string (callers only read it)."""
    return json.loads(gzip.decompress(base64.b64decode(packed)))


def component_data(at: AppTest) -> dict:
    (element,) = at.get("bidi_component")
    return json.loads(element.proto.bytes)


def view(at: AppTest) -> dict:
    """Every Explorer control's value as the page holds it: the URL it writes (absent: the default)."""
    return {c.key: BY_KEY[c.key].parse(at.query_params[c.key]) if c.key in at.query_params else c.default
            for c in CONTROLS}


def report(at: AppTest, **changes) -> AppTest:
    """What the browser does when the user changes instant controls: report the whole view."""
    current = view(at)
    at.session_state[KEY] = {"view": {c.key: changes.get(c.key, current[c.key]) for c in INSTANT}}
    return at.run()


@dataclass
class Control:
    """A control as a test drives it: a Streamlit widget, or one the instant Explorer draws."""

    at: AppTest
    key: str

    @property
    def value(self):
        return view(self.at)[self.key]

    def set_value(self, value) -> Control:
        report(self.at, **{self.key: value})
        return self

    def run(self) -> AppTest:
        return self.at


def shown(at: AppTest) -> dict:
    """What a browser shows for the page's view: the three figures (Plotly's JSON; the block view
    while its block is among those sent), the verdict, whether block 1 matches the course, the
    notes under the verdict (in projector mode the LayerNorm caveat is in the verdict's box
    instead) and the numbers table (its title, columns and rows of cells; ``None`` while the block
    is not yet sent)."""
    data = component_data(at)
    payload, tens = unpack(data["payload"]), [unpack(ten) for ten in data["blocks"]]
    now = view(at)
    key = setting_key_of(now)
    setting = entry(payload, key)
    depth_cut, readouts_cut = setting["cuts"][now["depth"] - 1]
    shown_block = min(now["block"], now["depth"])
    ten = next((ten for ten in tens if 0 <= shown_block - ten["first"] < len(ten["numbers_titles"])), None)
    at_block = ten and shown_block - ten["first"]
    block = ten["settings"][key]["blocks"][at_block] if ten else None
    figures = {"depth_figure": apply_cut(go.Figure(setting["depth"]), depth_cut),
               "readouts_figure": apply_cut(go.Figure(setting["readouts"]), readouts_cut)}
    if block:
        figures["block_figure"] = apply_cut(go.Figure(setting["block"]), block["stages"][now["focus"]])
    texts = data["texts"]
    notes = []
    layernorm = now["norm"] and now["norm_kind"] == "layernorm"
    if now["norm"] and not data["projector"]:
        notes.append(texts["layernorm_2d" if layernorm else "rmsnorm_note"])
    if now["block"] > now["depth"]:
        notes.append(texts["block_clamped"][now["depth"] - 1])
    return {"figures": {name: json.loads(fig.to_json()) for name, fig in figures.items()},
            "verdict": setting["verdicts"][now["depth"] - 1],
            "caveat": texts["layernorm_2d"] if layernorm and data["projector"] else None,  # in the verdict's box
            "course_match": bool(block and block["course_match"]), "notes": notes,
            "numbers": {"title": ten["numbers_titles"][at_block], **block["numbers"]} if block else None}


def entry(payload: dict, key: str) -> dict:
    """A setting's entry in the payload (an entry may name another setting's: the same stack)."""
    found = payload[key]
    return payload[found] if isinstance(found, str) else found


def setting_key_of(values: dict) -> str:
    """:func:`ui.instant.setting_key` of a view given as control values."""
    return setting_key(ExplorerState(**{c.key: values[c.key] for c in INSTANT}))
