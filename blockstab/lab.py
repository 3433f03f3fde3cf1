"""The Depth lab: random deep stacks at realistic width, measured layer by layer.

A :class:`LabSetup` names a random stack (width, tokens, heads, depth, initialisation, seed) and
its wiring (placement, normalization, residual and its scale). Its weights are drawn block by
block from ``(seed, block index)`` (:class:`~blockstab.init.SeededBlocks`), so nothing but the
residual stream is kept and any depth fits in memory; the backward pass draws each block again.

:func:`depth_curves` runs the stack on random tokens and returns, for every layer, the readouts the
literature plots: Dong et al. 2021's token collapse (relative residual), the mean pairwise cosine
between tokens, the stream's RMS, and, through the backward pass at initialisation, the gradient
norm of each block's weights for a fixed random readout loss ``L = sum(G * output)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .block import RESIDUAL_SCALES, StackConfig, StackParams, deepnorm_beta, run_stream
from .gradients import backward_steps, block_gradient_norms
from .init import INIT_SCHEMES, SeededBlocks, bert_embedding_tokens, random_tokens
from .readouts import mean_pairwise_cosine, relative_residual, rms, vector_norm
from .sublayers import NORM_KINDS, NormParams

WIDTHS = (2, 4, 8, 16, 32, 64, 128, 256, 512)
TOKEN_COUNTS = (2, 4, 8, 16, 32, 64, 128)
HEAD_COUNTS = (1, 2, 4, 8, 16)
# Input tokens: independent standard-normal vectors, or BERT's embedding output at initialisation.
EMBEDDINGS = ("normal", "bert")
MAX_LAB_DEPTH = 1000
MAX_SEED = 99
# A run's cost, measured on the 2-core reference machine: drawing the weights (12 d^2 normals a
# block, drawn again by the backward pass) dominates at large width, NumPy's per-call overhead at
# small width. One page may spend MAX_SECONDS on all its runs and keep MAX_STREAM_BYTES of stream.
NORMALS_PER_SECOND = 6e7
MULTIPLY_ADDS_PER_SECOND = 3e10
SECONDS_PER_BLOCK_CALL = 1e-4
MAX_SECONDS = 20.0
MAX_STREAM_BYTES = 64 * 2**20
# Below this a relative residual or a cosine gap is float64 rounding noise, not a measurement.
FLOAT_FLOOR = 1e-15

Progress = Callable[[float], None]


class BudgetError(ValueError):
    """Runs too large for here; ``max_depth`` is the deepest stack of their size that fits."""

    def __init__(self, seconds: float, max_depth: int):
        super().__init__(f"would take about {seconds:.0f} s (limit {MAX_SECONDS:.0f} s) or keep too much stream; "
                         f"at this width and token count at most {max_depth} blocks fit")
        self.seconds, self.max_depth = seconds, max_depth


@dataclass(frozen=True)
class LabSetup:
    """A random stack, its wiring and its input tokens (:data:`EMBEDDINGS`). Feed-forward width is
    ``4 * d_model``; batch is one sequence."""

    d_model: int = 64
    tokens: int = 32
    heads: int = 4
    depth: int = 48
    init: str = "bert"
    seed: int = 0
    placement: str = "pre"
    norm: str = "layernorm"
    residual: bool = True
    residual_scale: str = "one"
    feed_forward: bool = True
    embedding: str = "normal"

    def __post_init__(self):
        for value, allowed in ((self.d_model, WIDTHS), (self.tokens, TOKEN_COUNTS), (self.heads, HEAD_COUNTS),
                               (self.init, INIT_SCHEMES), (self.norm, NORM_KINDS),
                               (self.residual_scale, RESIDUAL_SCALES), (self.embedding, EMBEDDINGS)):
            if value not in allowed:
                raise ValueError(f"{value!r} is not one of {allowed}")
        if self.heads > self.d_model:
            raise ValueError(f"{self.heads} heads do not divide width {self.d_model}")
        if not (isinstance(self.seed, int) and not isinstance(self.seed, bool) and 0 <= self.seed <= MAX_SEED):
            raise ValueError(f"seed must be an integer from 0 to {MAX_SEED}")
        _ = self.config  # validates depth, placement and the flags

    @cached_property
    def config(self) -> StackConfig:
        return StackConfig(depth=self.depth, residual=self.residual, norm=self.norm, placement=self.placement,
                           residual_scale=self.residual_scale, feed_forward=self.feed_forward)

    @property
    def branch_gain(self) -> float:
        """DeepNorm's beta scales the initial branch weights; 1 otherwise (Wang et al. 2022)."""
        return deepnorm_beta(self.depth) if self.residual_scale == "deepnorm" else 1.0

    @property
    def params(self) -> StackParams:
        """The stack's weights, drawn block by block from ``(seed, index)`` when read."""
        blocks = SeededBlocks(self.seed, self.depth, self.d_model, self.heads, 4 * self.d_model, self.init,
                              branch_gain=self.branch_gain)
        return StackParams(blocks, NormParams.identity(self.d_model))

    def input_tokens(self) -> np.ndarray:
        """Token embeddings ``(1, tokens, d_model)``: standard-normal (E||x||^2 = d_model), or for
        ``embedding="bert"`` BERT's embedding output (:func:`~blockstab.init.bert_embedding_tokens`)."""
        if self.embedding == "bert":
            return bert_embedding_tokens(self.seed + 1_000_003, self.tokens, self.d_model)
        return random_tokens(self.seed + 1_000_003, 1, self.tokens, self.d_model)

    def readout_direction(self) -> np.ndarray:
        """``G = dL/d output`` of the loss ``L = sum(G * output)``: fixed by the seed, not by depth."""
        return random_tokens(self.seed + 2_000_003, 1, self.tokens, self.d_model) / np.sqrt(self.tokens)


def block_work(d_model: int, tokens: int) -> float:
    """Multiply-adds of one block's forward pass: projections, feed-forward and the token mixing."""
    return tokens * 12 * d_model**2 + 2 * tokens**2 * d_model


def seconds_per_block(setup: LabSetup, gradients: bool) -> float:
    """Estimated time of one block on the reference machine, forward (and backward: about three
    times the arithmetic, the weights drawn twice)."""
    passes, draws = (3, 2) if gradients else (1, 1)
    return (draws * 12 * setup.d_model**2 / NORMALS_PER_SECOND
            + passes * block_work(setup.d_model, setup.tokens) / MULTIPLY_ADDS_PER_SECOND
            + passes * SECONDS_PER_BLOCK_CALL)


def check_budget(setup: LabSetup, gradients: bool, runs: int = 1) -> None:
    """Raise :class:`BudgetError` when ``runs`` setups of this size would take longer than
    :data:`MAX_SECONDS` together, or one would keep more than :data:`MAX_STREAM_BYTES` of stream."""
    per_block = runs * seconds_per_block(setup, gradients)
    stream_per_block = 8 * setup.tokens * setup.d_model
    if setup.depth * per_block > MAX_SECONDS or (setup.depth + 1) * stream_per_block > MAX_STREAM_BYTES:
        max_depth = int(min(MAX_SECONDS / per_block, MAX_STREAM_BYTES / stream_per_block - 1, MAX_LAB_DEPTH))
        raise BudgetError(setup.depth * per_block, max(max_depth, 1))


@dataclass(frozen=True)
class DepthCurves:
    """Readouts of one setup, index ``l`` = after block ``l`` (0 = the input tokens).

    ``relative_residual``, ``pairwise_cosine``, ``stream_rms``: ``(depth + 1,)``.
    ``gradient_norm``: Frobenius norm of dL/dW over all weights of block ``l`` ``(depth,)``;
    ``ffn_out_gradient_norm``: the same for its feed-forward output matrix only (Xiong et al.'s
    W^2); ``stream_gradient_norm``: ||dL/dx_l|| ``(depth + 1,)``. Gradients are ``None`` when not run.
    """

    setup: LabSetup
    relative_residual: np.ndarray
    pairwise_cosine: np.ndarray
    stream_rms: np.ndarray
    gradient_norm: np.ndarray | None = None
    ffn_out_gradient_norm: np.ndarray | None = None
    stream_gradient_norm: np.ndarray | None = None


def forward_stream(setup: LabSetup, progress: Progress | None = None) -> np.ndarray:
    """The residual stream ``(depth + 1, tokens, d_model)``: the input, then each block's output."""
    return run_stream(setup.input_tokens(), setup.params, setup.config, progress)[:, 0]


def backward_norms(setup: LabSetup, stream: np.ndarray, progress: Progress | None = None):
    """Per-block gradient norms of ``L = sum(G * output)``: all weights, the feed-forward output
    matrix, and ||dL/dx_l|| of the stream; each block is recomputed from ``stream``."""
    weights, ffn_out, stream_grad = np.empty(setup.depth), np.empty(setup.depth), np.empty(setup.depth + 1)
    steps = backward_steps(stream[:, None], setup.params, setup.config, setup.readout_direction())
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging stack's gradients are inf, honestly
        for done, (i, grad, grads) in enumerate(steps):
            stream_grad[i] = vector_norm(grad.ravel())
            if i < setup.depth:
                norms = block_gradient_norms(grads)
                weights[i], ffn_out[i] = norms["block"], norms["ffn_w_out"]
                if progress:
                    progress(done / setup.depth)
    return weights, ffn_out, stream_grad


def depth_curves(setup: LabSetup, gradients: bool = True, progress: Progress | None = None) -> DepthCurves:
    """Run ``setup`` and measure every layer; ``progress(fraction)`` is called as blocks finish
    (an exception it raises stops the run, which is how a page cancels)."""
    check_budget(setup, gradients)
    forward_share = 1 / 3 if gradients else 1.0

    def report(share, offset=0.0):
        return None if progress is None else (lambda f: progress(offset + share * f))

    stream = forward_stream(setup, report(forward_share))
    curves = DepthCurves(
        setup=setup,
        relative_residual=relative_residual(stream),
        pairwise_cosine=mean_pairwise_cosine(stream),
        stream_rms=rms(stream).mean(axis=-1),
    )
    if not gradients:
        return curves
    weights, ffn_out, stream_grad = backward_norms(setup, stream, report(1 - forward_share, forward_share))
    return replace(curves, gradient_norm=weights, ffn_out_gradient_norm=ffn_out,
                   stream_gradient_norm=stream_grad)


COMPARISONS = ("none", "stabilisers", "placement")


def compared_setups(setup: LabSetup, comparison: str) -> dict[str, LabSetup]:
    """The setups drawn side by side, by variant id: the four stabiliser combinations (the chosen
    norm kind, LayerNorm when it is ``none``), Post-LN against Pre-LN, or ``setup`` alone."""
    if comparison == "stabilisers":
        kind = setup.norm if setup.norm != "none" else "layernorm"
        return {
            "neither": replace(setup, residual=False, norm="none"),
            "residual_only": replace(setup, residual=True, norm="none"),
            "norm_only": replace(setup, residual=False, norm=kind),
            "both": replace(setup, residual=True, norm=kind),
        }
    if comparison == "placement":
        return {"post": replace(setup, placement="post"), "pre": replace(setup, placement="pre")}
    if comparison == "none":
        return {"this": setup}
    raise ValueError(f"{comparison!r} is not one of {COMPARISONS}")
