"""The engine's answer for one Explorer state: the lesson's block run on the state's example."""

from __future__ import annotations

from dataclasses import dataclass

from blockstab.block import StackConfig, Trace, first_blocks, run_stack
from blockstab.lesson import lesson_params
from blockstab.readouts import Readouts, first_readouts, readouts

from ..controls import ExplorerState


@dataclass(frozen=True)
class Exploration:
    """The engine's answer for one state: the full trace and its readouts."""

    trace: Trace
    readouts: Readouts


def explore(state: ExplorerState) -> Exploration:
    cfg = StackConfig(depth=state.depth, residual=state.residual, norm=state.norm_used,
                      placement=state.placement)
    trace = run_stack(state.example.embeddings(state.scenarios), lesson_params(), cfg)
    return Exploration(trace, readouts(trace, state.example.action))


def explore_first(state: ExplorerState, result: Exploration, n: int) -> Exploration:
    """:func:`explore` of ``state`` ``n`` blocks deep, cut from ``result`` (a deeper run of the same
    state) without running a block again."""
    return Exploration(first_blocks(result.trace, lesson_params(), n), first_readouts(result.readouts, n))
