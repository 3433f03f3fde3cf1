"""The instant Explorer as AppTest sees it (no browser runs its JavaScript).

The page sends the component its data: where the sentence's bundle is. The browser reads the
bundle's files and shows, for the view it holds, what ``support.bundle_reference.selected`` (the reference
the JavaScript follows) picks: the setting's figures cut to the depth, that depth's verdict and the
block view. This module reads the same files the app serves and applies the same cut in Python
(``ui.views.cut.apply_cut``), so page tests can compare what a browser would show with the pure view
functions; the browser tests check that the JavaScript draws exactly that. A user's change is what
the browser reports: the component's state.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from streamlit.testing.v1 import AppTest

from server.bundles import ROUTE, bundles_folder
from support.bundle_reference import selected
from ui.bundle import read_part
from ui.controls import BY_KEY, CONTROLS, INSTANT
from ui.views.cut import apply_cut
from ui.views.style import unvalidated
from widgets.explorer import KEY


def bundle_files(data: dict) -> dict:
    """The bundle the component's data names, as the browser reads it: the index and every part it
    lists as built, by name."""
    prefix = bundles_folder() / data["bundle"].removeprefix(ROUTE)
    index = read_part((prefix.parent / f"{prefix.name}index.js").read_text(encoding="ascii"))
    return {"index": index, **{name: part(prefix.parent / f"{prefix.name}{name}.js") for name in index["built"]}}


def part(path: Path) -> dict:
    """A part's value, unpacked once: a part never changes under its name (read only, never changed)."""
    stat = path.stat()
    return _unpacked(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _unpacked(path: Path, mtime: int, size: int) -> dict:
    return read_part(path.read_text(encoding="ascii"))


def component_data(at: AppTest, name: str = "blockstab.instant") -> dict:
    """The data of the page's one component ``name`` (the instant Explorer; a student's page also has
    ``blockstab.follow``)."""
    (element,) = [e for e in at.get("bidi_component") if e.proto.component_name.endswith(name)]
    raw = element.proto.bytes or element.proto.json
    return json.loads(raw)


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
    once its block range is built), the verdict, whether block 1 matches the course, the
    notes (under the verdict, on a desktop under the figures; in projector mode the LayerNorm caveat is
    in the verdict's box instead) and the numbers table (its title, columns and rows of cells; ``None`` while its range
    is not built)."""
    data = component_data(at)
    now = view(at)
    picked = selected(bundle_files(data), now)
    block = picked["block"]
    figures = {"depth_figure": apply_cut(unvalidated(picked["setting"]["depth"]), picked["depth_cut"]),
               "readouts_figure": apply_cut(unvalidated(picked["setting"]["readouts"]), picked["readouts_cut"])}
    if block:
        figures["block_figure"] = apply_cut(unvalidated(picked["setting"]["block"]), picked["block_cut"])
    texts = data["texts"]
    note = picked["entry"]["note"]  # (its text, and where it goes: the bundle's index says, ui.bundle.setting_note)
    notes = [texts[note["text"]]] if note and not data["projector"] else []
    if picked["block_shown"] != now["block"]:
        notes.append(texts["block_clamped"][now["depth"] - 1])
    return {"figures": {name: json.loads(fig.to_json()) for name, fig in figures.items()},
            "verdict": picked["verdict"],
            "caveat": texts[note["text"]] if note and data["projector"] and note["projector"] == "caveat" else None,
            "course_match": bool(block and block["course_match"]), "notes": notes,
            "numbers": {"title": block["numbers_title"], **block["numbers"]} if block else None}

