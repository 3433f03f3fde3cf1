"""Figures and tables of one Explorer state: pure functions ``(state, result, text) -> value``,
by family: ``block`` (inside one block), ``depth`` (across depth, readouts), ``geometry``
(normalization in 2-D), ``tables`` (numbers, CSV); ``style`` is what they share and
``exploration`` the engine's answer they draw.

Nothing here runs Streamlit; tests read the returned Plotly figures' data directly.
"""

from __future__ import annotations

from dataclasses import replace

from ..controls import ExplorerState
from .block import block_figure, tokens_figure
from .depth import depth_figure, readouts_figure
from .exploration import Exploration, explore

__all__ = ["FIGURES", "Exploration", "explore", "figure_state"]

FIGURES = {"tokens": tokens_figure, "block": block_figure, "depth": depth_figure, "readouts": readouts_figure}


def figure_state(name: str, state: ExplorerState) -> ExplorerState:
    """``state`` reduced to what view ``name`` reads, so that states showing the same figure share
    one cache entry: the block view reads no block after the one it opens (a block's stages do not
    depend on later blocks), the depth and readouts views read neither the block nor the stage in
    focus, and the tokens view only the sentence."""
    if name == "block":
        return replace(state, depth=state.shown_block, block=state.shown_block)
    if name in ("depth", "readouts"):
        return replace(state, block=1, focus=ExplorerState.focus)
    if name == "tokens":
        return replace(state, depth=1, block=1, focus=ExplorerState.focus)
    raise ValueError(f"{name!r} is not one of {tuple(FIGURES)}")
