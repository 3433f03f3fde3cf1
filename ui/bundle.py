"""The instant Explorer's data for one sentence, look and language: a versioned bundle of files.

The **index** names what the browser may look up: each combination of the stabiliser switches and
the key of its figures, the depths, and the block ranges with the part that holds each. The
**figures** part holds, per setting, the deepest depth and readouts figures, a cut of them per
depth (``ui.views.cut``), the verdict per depth and the block view's frame. A **block range** part
holds, for ten blocks of every setting, the block view's cut per stage and each block's numbers
table. Everything is computed here, by the view functions the other pages draw with; the browser
only looks keys up, slices where the index says and draws.

Each part is strict JSON (NaN and infinities as ``null``, a gap in Plotly), gzipped and in base64,
inside a one-line script (:func:`part_file`) so that the same file loads over HTTP from the app and
from ``file://`` in the take-home folder (``ui.take_home``).
"""

from __future__ import annotations

import base64
import gzip
import itertools
import json
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import plotly.io

from .controls import CONTROLS, MAX_EXPLORER_DEPTH, STAGE_FOCUS, ExplorerState
from .examples import plain_text
from .text import Text
from .verdicts import verdict_sentences
from .views import explore
from .views.block import block_cut, block_frame
from .views.cut import ALONG_DEPTH
from .views.depth import depth_cut, depth_plane, readout_panels, readouts_cut
from .views.describe import block_description, depth_description, readouts_description
from .views.exploration import explore_first
from .views.tables import columns_and_rows, course_table_matches, stage_rows

SCHEMA = 2  # the bundle's format: the browser refuses an index of another
RANGE_BLOCKS = 10  # blocks in a block range (20-90 ms to build each block's views; a part is about 0.1 MB)
FIGURES = "figures"  # the figures part's name
SWITCHES = ("residual", "norm", "norm_kind", "placement")  # the controls that choose a setting
SETTINGS = tuple({"residual": residual, "norm": norm != "none", "norm_kind": "rmsnorm" if norm == "none" else norm,
                  "placement": placement}
                 for residual, norm, placement in itertools.product((True, False), ("none", "rmsnorm", "layernorm"),
                                                                    ("post", "pre")))


def sentence_and_look(state: ExplorerState) -> ExplorerState:
    """``state`` with what the bundle switches (the setting, depth, block and stage in focus) at
    its defaults: the states that share one bundle share one key."""
    switched = [c.key for c in CONTROLS if c.instant]
    return replace(state, **{key: getattr(ExplorerState, key) for key in switched})


def setting_key(state: ExplorerState) -> str:
    """The name of ``state``'s stabiliser setting, e.g. ``residual-rmsnorm-post``: its blocks' views
    in a block range part."""
    return f"{'residual' if state.residual else 'no_residual'}-{state.norm_used}-{state.placement}"


def figures_key(state: ExplorerState) -> str:
    """The name of ``state``'s figures in the figures part. Without a norm, Pre-LN and Post-LN run one
    stream (x + F(x) either way) and draw the same figures: Post-LN's (their block views differ)."""
    return setting_key(replace(state, placement="post") if state.norm_used == "none" else state)


def range_first(block: int) -> int:
    """The first block of the block range that holds ``block`` (1-10, 11-20, ...)."""
    return (block - 1) // RANGE_BLOCKS * RANGE_BLOCKS + 1


def range_part(first: int) -> str:
    """The name of the part that holds the block range from ``first``."""
    return f"blocks-{first}"


RANGE_FIRSTS = tuple(range(1, MAX_EXPLORER_DEPTH + 1, RANGE_BLOCKS))
PARTS = (FIGURES, *(range_part(first) for first in RANGE_FIRSTS))  # every part of a bundle, by name


def index(built: list[str]) -> dict:
    """The bundle's index, with the names of the parts ``built`` so far."""
    controls = {c.key: c for c in CONTROLS}
    combinations = itertools.product(*(controls[key].options or (True, False) for key in SWITCHES))
    return {
        "schema": SCHEMA,
        "settings": [_setting_entry(dict(zip(SWITCHES, values, strict=True))) for values in combinations],
        "depths": {"low": 1, "high": MAX_EXPLORER_DEPTH},
        "at_most": {c.key: c.at_most for c in CONTROLS if c.at_most},  # a value shown bounded by another's
        "figures": FIGURES,
        "along_depth": list(ALONG_DEPTH),  # what a cut's "points" shortens, in each "along" trace
        "block_ranges": [{"first": first, "last": min(first + RANGE_BLOCKS - 1, MAX_EXPLORER_DEPTH),
                          "part": range_part(first)} for first in RANGE_FIRSTS],
        "built": sorted(built),
    }


def _setting_entry(when: dict) -> dict:
    """A combination of the switches: the keys of its figures and of its blocks' views, and its note."""
    state = ExplorerState(**when)
    return {"when": when, "figures": figures_key(state), "blocks": setting_key(state), "note": setting_note(state)}


def setting_note(state: ExplorerState) -> dict | None:
    """What the Explorer says beside the verdict of a setting (its text by name, in the mount's texts): with
    LayerNorm, that two points in a plane cannot show it (a warning, with the geometry page's link where there
    is one; in projector mode a line in the verdict's box); with RMSNorm, what it is (not in projector mode)."""
    if state.norm_used == "layernorm":
        return {"text": "layernorm_2d", "kind": "warning", "why": True, "projector": "caveat"}
    if state.norm_used == "rmsnorm":
        return {"text": "rmsnorm_note", "kind": "note", "why": False, "projector": None}
    return None


def setting_figures(state: ExplorerState, t: Text) -> dict:
    """One setting's block view frame, depth and readouts figures, and its verdict, the verdict's
    headline and the figures' descriptions at every depth from 1 to the Explorer's maximum, with the cuts per depth
    (``state``'s depth, block and stage are not read)."""
    deep = replace(state, depth=MAX_EXPLORER_DEPTH)
    result = explore(deep)
    depths = range(1, MAX_EXPLORER_DEPTH + 1)
    firsts = [(replace(deep, depth=n), explore_first(deep, result, n)) for n in depths]
    verdicts = [verdict_sentences(shallow, first, t, compact=state.projector) for shallow, first in firsts]
    return {
        "block": figure_json(block_frame(deep, t)),
        "depth": figure_json(depth_plane(deep, result, t)),
        "readouts": figure_json(readout_panels(deep, result, t)),
        "cuts": [[depth_cut(deep, result, t, n), readouts_cut(deep, result, t, n)] for n in depths],
        "verdicts": [plain_text(t.sentences(sentences)) for sentences in verdicts],
        "headlines": [plain_text(sentences[0]) for sentences in verdicts],
        "descriptions": [[depth_description(shallow, first, t), readouts_description(shallow, first, t)]
                         for shallow, first in firsts],
    }


def figures_part(look: ExplorerState, t: Text) -> dict:
    """Every setting's :func:`setting_figures`, by :func:`figures_key`."""
    entries: dict = {}
    for setting in (replace(look, **setting) for setting in SETTINGS):
        if figures_key(setting) not in entries:
            entries[figures_key(setting)] = setting_figures(setting, t)
    return entries


def block_range(look: ExplorerState, t: Text, first: int) -> dict:
    """For the block range from ``first`` of every setting: the block view's cut for each stage,
    the block's numbers table and whether it matches the course's table."""
    blocks = range(first, min(first + RANGE_BLOCKS, MAX_EXPLORER_DEPTH + 1))
    settings = {}
    for setting in SETTINGS:
        deep = replace(look, **setting, depth=blocks[-1])  # its first blocks are every shallower stack's
        result = explore(deep)
        settings[setting_key(deep)] = [
            {"stages": {focus: block_cut(replace(deep, block=block, focus=focus), result, t) for focus in STAGE_FOCUS},
             "descriptions": {focus: block_description(replace(deep, block=block, focus=focus), result, t)
                              for focus in STAGE_FOCUS},
             "numbers": columns_and_rows(stage_rows(replace(deep, block=block), result, t)),
             "numbers_title": t("explorer.numbers", block=block),
             "course_match": block == 1 and course_table_matches(result, deep)} for block in blocks]
    return {"first": first, "settings": settings}


def built_part(look: ExplorerState, lang: str, name: str) -> str:
    """The part ``name`` (the figures, or a block range) of a sentence, look and language, as its file."""
    t = Text(lang)
    if name == FIGURES:
        return part_file(figures_part(look, t))
    (first,) = (first for first in RANGE_FIRSTS if range_part(first) == name)
    return part_file(block_range(look, t, first))


def part_file(value: dict) -> str:
    """``value`` as a bundle's file: one line of script that hands the browser's loader the packed
    value (``ui/explorer/store.js``), loadable from the app and from ``file://`` alike."""
    return f'blockstabPart(document.currentScript, "{packed(value)}");\n'


def read_part(text: str) -> dict:
    """A part's value from its file (:func:`part_file`): what the browser reads."""
    prefix, suffix = 'blockstabPart(document.currentScript, "', '");\n'
    assert text.startswith(prefix) and text.endswith(suffix), text[:80]
    return json.loads(gzip.decompress(base64.b64decode(text[len(prefix):-len(suffix)])))


def figure_json(fig: go.Figure) -> dict:
    """``fig`` as Plotly's JSON with every typed array (``{"dtype", "bdata"}``) a plain list, which
    a cut can shorten."""
    return _lists(fig.to_plotly_json())


def _lists(value):
    if isinstance(value, dict):
        if {"dtype", "bdata"} <= value.keys():
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]).newbyteorder("<"))
            return array.reshape([int(n) for n in str(value.get("shape", -1)).split(",")]).tolist()
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_lists(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def packed(value: dict) -> str:
    """``value`` as strict JSON (NaN and infinities as ``null``), gzipped, in base64."""
    return base64.b64encode(gzip.compress(plotly.io.json.to_json_plotly(value).encode(), mtime=0)).decode("ascii")
