"""What the instant Explorer sends ahead for one sentence (issue #16).

For each of the Explorer's stabiliser settings (residual on/off x no norm / RMSNorm / LayerNorm x
Post/Pre) the engine runs the deepest stack the Explorer offers once, and the views draw it: the
depth and readouts figures of every block, a cut per depth (``ui.views.cut``), the verdict at
every depth and the block view's frame (its cuts, one per block and stage, go beside it in tens of
blocks, :func:`ten_of_blocks`, kept and served by ``server.tens``). A browser that holds this
switches setting, depth, block and stage without the server. Everything is computed here, by the same view functions the
Explorer draws with; nothing in the browser computes science.

The payload is strict JSON (a NaN or infinity is ``null``, which Plotly draws as a gap), gzipped
and base64-encoded: one sentence's payload is about 3.7 MB of JSON and Streamlit's WebSocket
messages are capped at 1 MB (``server.maxMessageSize``); browsers decompress gzip natively
(``DecompressionStream``).
"""

from __future__ import annotations

import base64
import gzip
import itertools
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import plotly.io

from .controls import CONTROLS, MAX_EXPLORER_DEPTH, STAGE_FOCUS, ExplorerState
from .examples import plain_text
from .text import Text
from .verdicts import verdict
from .views import explore
from .views.block import block_cut, block_frame
from .views.depth import depth_cut, depth_plane, readout_panels, readouts_cut
from .views.exploration import explore_first
from .views.tables import columns_and_rows, course_table_matches, stage_rows

SETTINGS = tuple({"residual": residual, "norm": norm != "none", "norm_kind": "rmsnorm" if norm == "none" else norm,
                  "placement": placement}
                 for residual, norm, placement in itertools.product((True, False), ("none", "rmsnorm", "layernorm"),
                                                                    ("post", "pre")))
BLOCKS_SENT = 10  # blocks in a ten (20-90 ms to build each block's views, 3.8 MB of JSON, 84 kB packed)


def sentence_and_look(state: ExplorerState) -> ExplorerState:
    """``state`` with what the payload switches (the setting, depth, block and stage in focus) at
    its defaults: the states that share one payload share one cache entry."""
    switched = [c.key for c in CONTROLS if c.instant]
    return replace(state, **{key: getattr(ExplorerState, key) for key in switched})


def setting_key(state: ExplorerState) -> str:
    """The payload's name for ``state``'s stabiliser setting, e.g. ``residual-rmsnorm-post``."""
    return f"{'residual' if state.residual else 'no_residual'}-{state.norm_used}-{state.placement}"


def setting_payload(state: ExplorerState, t: Text) -> dict:
    """One setting's block view's frame (its cuts are sent in tens of blocks), depth and readouts
    figures and its verdict at every depth from 1 to the Explorer's maximum (``state``'s own depth,
    block and stage are not read)."""
    deep = replace(state, depth=MAX_EXPLORER_DEPTH)
    result = explore(deep)
    depths = range(1, MAX_EXPLORER_DEPTH + 1)
    return {
        "block": figure_json(block_frame(deep, t)),
        "depth": figure_json(depth_plane(deep, result, t)),
        "readouts": figure_json(readout_panels(deep, result, t)),
        "cuts": [[depth_cut(deep, result, t, n), readouts_cut(deep, result, t, n)] for n in depths],
        "verdicts": [plain_text(verdict(replace(deep, depth=n), explore_first(deep, result, n), t,
                                        compact=state.projector)) for n in depths],
    }


def payload(state: ExplorerState, t: Text) -> dict:
    """Every setting's :func:`setting_payload`, by :func:`setting_key`. Without a norm, Pre-LN and
    Post-LN are one stack (x + F(x) either way): Pre-LN's entry names Post-LN's."""
    entries: dict = {}
    for setting in (replace(state, **setting) for setting in SETTINGS):
        twin = setting_key(replace(setting, placement="post"))
        same = setting.norm_used == "none" and twin in entries
        entries[setting_key(setting)] = twin if same else setting_payload(setting, t)
    return entries


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


def blocks_sent(block: int) -> int:
    """The first block of ``block``'s ten (1-10, 11-20, ...)."""
    return (block - 1) // BLOCKS_SENT * BLOCKS_SENT + 1


def ten_of_blocks(look: ExplorerState, t: Text, first: int) -> dict:
    """For the blocks ``first`` to ``first + BLOCKS_SENT - 1`` (at most the Explorer's deepest) of
    every setting (``look``'s own setting, depth, block and stage are not read): the block view's
    cut for each stage, the block's numbers table and whether it matches the course's table."""
    blocks = range(first, min(first + BLOCKS_SENT, MAX_EXPLORER_DEPTH + 1))
    settings = {}
    for setting in SETTINGS:
        deep = replace(look, **setting, depth=blocks[-1])  # its first blocks are every shallower stack's
        result = explore(deep)
        settings[setting_key(deep)] = {
            "blocks": [{"stages": {focus: block_cut(replace(deep, block=block, focus=focus), result, t)
                                   for focus in STAGE_FOCUS},
                        "numbers": columns_and_rows(stage_rows(replace(deep, block=block), result, t)),
                        "course_match": block == 1 and course_table_matches(result, deep)} for block in blocks]}
    return {"first": first, "numbers_titles": [t("explorer.numbers", block=block) for block in blocks],
            "settings": settings}


def packed_ten_of_blocks(look: ExplorerState, lang: str, first: int) -> str:
    """:func:`ten_of_blocks`, packed (:func:`packed`)."""
    return packed(ten_of_blocks(look, Text(lang), first))


def beside(first: int) -> list[int]:
    """The tens on either side of ``first``'s that exist, the next one first."""
    return [n for n in (first + BLOCKS_SENT, first - BLOCKS_SENT) if 1 <= n <= MAX_EXPLORER_DEPTH]


def around(first: int) -> list[int]:
    """Every other ten, nearest to ``first``'s first (those beside it, the next one first)."""
    others = [n for n in range(1, MAX_EXPLORER_DEPTH + 1, BLOCKS_SENT) if n != first]
    return sorted(others, key=lambda n: (abs(n - first), n < first))
