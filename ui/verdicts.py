"""The Explorer's verdict: findings computed from the readouts, then worded from the catalogs.

Each :class:`Finding` is one sentence with the numbers that fill it in; the verdict is their
sentences in order. A finding is only made when the readouts show it, so every combination of
switches reads as what its numbers say (tests check each finding against the readouts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blockstab.geometry import layernorm_points_2d
from blockstab.readouts import DISTINCT_DEGREES, token_groups

from .controls import ExplorerState
from .examples import markdown_text, side_name, token_labels
from .numbers import readable
from .text import Text

RANGE_LIMIT = 10.0  # a size 10 times (or a tenth of) its start has run away
STEADY = 2.0  # a size within a factor 2 of its start has kept its range
VANISHED = 1e-15  # below this fraction of its start the signal is gone (the charts' floor)
OWN_DIRECTION = 15.0  # degrees the action token keeps from every other token to keep its meaning


@dataclass(frozen=True)
class Finding:
    """One sentence of the verdict: a catalog key and the values that fill it in."""

    key: str
    values: dict


def first_block(mask: np.ndarray) -> int | None:
    """The first block (index into the stream) where ``mask`` holds, or None."""
    hits = np.nonzero(mask)[0]
    return int(hits[0]) if hits.size else None


def settled_block(series: np.ndarray) -> int:
    """The block from which ``series`` keeps its final value to the end."""
    changed = np.nonzero(series != series[-1])[0]
    return int(changed[-1]) + 1 if changed.size else 0


def blocks_text(n: int, t: Text) -> str:
    return t("unit.block" if n == 1 else "unit.blocks", n=n)


def size_findings(state: ExplorerState, result, t: Text) -> list[Finding]:
    """What happened to the action token's size (the range normalization should tidy)."""
    stream = result.trace.stream
    size = result.readouts.action_norm
    with np.errstate(all="ignore"):
        ratio = size / size[0]
    lost = first_block(~np.all(np.isfinite(stream), axis=(1, 2, 3)))
    grew = first_block(np.any(ratio >= RANGE_LIMIT, axis=1))
    if lost is not None:
        return [Finding("verdict.overflow", {"block": grew, "lost": lost})]
    zero = first_block(np.all(stream == 0, axis=(1, 2, 3)))
    if zero is not None:
        return [Finding("verdict.zero", {"block": zero})]
    vanished = first_block(np.any(ratio <= VANISHED, axis=1))
    if vanished is not None:
        return [Finding("verdict.vanished", {"block": vanished, "floor": readable(VANISHED)})]
    if state.norm_used != "none" and state.placement == "post":
        return []  # the norm sets the size of every block's output
    final = float(ratio[-1].max())
    if state.norm_used != "none" and state.residual and final >= STEADY:  # Pre-LN: each block adds to the stream
        out = float(np.max(np.linalg.norm(result.trace.output[:, state.example.action], axis=-1)))
        return [Finding("verdict.pre_stream", {"factor": readable(final), "blocks": blocks_text(state.depth, t),
                                                "out": readable(out)})]
    if grew is not None:
        return [Finding("verdict.grew", {"block": grew, "factor": readable(final)})]
    shrank = first_block(np.any(ratio <= 1 / RANGE_LIMIT, axis=1))
    if shrank is not None:
        return [Finding("verdict.shrank", {"block": shrank, "factor": readable(float(ratio[-1].min()))})]
    if final >= STEADY:
        return [Finding("verdict.growing", {"factor": readable(final), "blocks": blocks_text(state.depth, t)})]
    if ratio[-1].min() <= 1 / STEADY:
        return [Finding("verdict.shrinking", {"factor": readable(float(ratio[-1].min())),
                                              "blocks": blocks_text(state.depth, t)})]
    return []


def on_layernorm_points(result, tolerance: float = 1e-3) -> bool:
    """Does every token leave the stack at one of LayerNorm's two 2-D points, +-(1, -1)?"""
    out = result.trace.stream[-1].reshape(-1, 1, 2)
    return bool(np.all(np.min(np.linalg.norm(out - layernorm_points_2d(), axis=-1), axis=-1) < tolerance))


def merged_names(state: ExplorerState, result, row: int, side: str, t: Text) -> str:
    """The merged groups of one sentence at the last block, as "errors = after deploy"."""
    labels = token_groups(result.trace.stream[-1, row])
    names = token_labels(state.example, side, t)
    groups = [[names[i] for i in np.nonzero(labels == g)[0]] for g in np.unique(labels)]
    return t("verdict.group_separator").join(" = ".join(markdown_text(n) for n in group)
                                             for group in groups if len(group) > 1)


def token_findings(state: ExplorerState, result, t: Text, compact: bool = False) -> list[Finding]:
    """Are the tokens still distinct, and has the action token kept its own direction? ``compact``
    (projector mode) counts the distinct tokens of every sentence in one sentence."""
    r = result.readouts
    count = r.distinct_tokens
    n = result.trace.stream.shape[2]
    collapsed = first_block(np.all(count == 1, axis=1))
    if collapsed is not None and np.all(count[-1] == 1):
        return [Finding("verdict.collapse", {"block": collapsed, "tolerance": readable(DISTINCT_DEGREES)})]
    findings = []
    if compact:
        findings.append(Finding("verdict.distinct_count", {"counts": " · ".join(str(int(c)) for c in count[-1]),
                                                            "n": n}))
    for row, side in enumerate(() if compact else state.scenarios):
        sentence = markdown_text(side_name(state.example, side, t))
        if count[-1, row] == n:
            findings.append(Finding("verdict.distinct", {
                "sentence": sentence, "n": n, "angle": readable(float(r.smallest_pairwise_angle[-1, row]))}))
        elif count[-1, row] == 1:
            findings.append(Finding("verdict.merged_one", {
                "sentence": sentence, "n": n, "block": settled_block(count[:, row])}))
        else:
            findings.append(Finding("verdict.merged", {
                "sentence": sentence, "n": n, "groups": int(count[-1, row]),
                "block": settled_block(count[:, row]), "names": merged_names(state, result, row, side, t)}))
    nearest = r.action_nearest_angle[-1]
    worst = int(np.argmin(nearest))
    side = state.scenarios[worst]
    other = token_labels(state.example, side, t)[int(r.action_nearest_token[-1, worst])]
    where = {"sentence": markdown_text(side_name(state.example, side, t)), "token": markdown_text(other)}
    if np.all(nearest >= OWN_DIRECTION):
        findings.append(Finding("verdict.action_kept", {"angle": readable(float(nearest.min()))}))
    elif nearest[worst] < DISTINCT_DEGREES:
        findings.append(Finding("verdict.action_merged", where))
    else:
        findings.append(Finding("verdict.action_close", {"angle": readable(float(nearest[worst])), **where}))
    if len(state.scenarios) == 2 and not compact:
        findings.append(Finding("verdict.sentences", {"angle": readable(float(r.scenario_angle[-1]))}))
    return findings


def verdict_findings(state: ExplorerState, result, t: Text, compact: bool = False) -> list[Finding]:
    """Every finding of one Explorer state, headline first (``compact``: fewer words, same facts
    about size, distinct tokens and the action token's direction, for projector mode)."""
    size = size_findings(state, result, t)
    if size and size[0].key in ("verdict.overflow", "verdict.zero", "verdict.vanished"):
        return size  # no direction is left to read
    if state.norm_used == "layernorm" and on_layernorm_points(result):
        return [Finding("verdict.layernorm_2d", {"blocks": blocks_text(state.depth, t)})]
    tokens = token_findings(state, result, t, compact)
    if tokens[0].key == "verdict.collapse":
        return tokens + size
    if not size:
        lead = "verdict.stable" if any(f.key == "verdict.action_kept" for f in tokens) else "verdict.steady"
        size = [Finding(lead, {"blocks": blocks_text(state.depth, t),
                               "size": readable(float(result.readouts.action_norm[-1].max()))})]
    return size + tokens


def verdict_sentences(state: ExplorerState, result, t: Text, compact: bool = False) -> list[str]:
    """The verdict's sentences, computed from the readouts; the first is its headline, what a screen
    reader hears after a change (ui/explorer/draw.js)."""
    return [t(f.key, **f.values) for f in verdict_findings(state, result, t, compact)]


def verdict(state: ExplorerState, result, t: Text, compact: bool = False) -> str:
    """One paragraph a class can read at a glance, computed from the readouts."""
    return t.sentences(verdict_sentences(state, result, t, compact))
