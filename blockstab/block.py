"""A Transformer block and a stack of them, written as the residual equations.

Post-LN (Vaswani et al. 2017; the lesson's order: sublayer -> add -> norm)::

    h = Norm(s*x + a*Attention(x))
    y = Norm(s*h + a*FFN(h))

Pre-LN (Xiong et al. 2020; norm -> sublayer -> add, one final norm after the stack)::

    h = s*x + a*Attention(Norm(x))
    y = s*h + a*FFN(Norm(h))

``s`` is the skip scale and ``a`` the branch scale (:class:`StackConfig`); switching the
residual off drops the ``s*x`` term, switching normalization off makes ``Norm`` the identity
(or, for ablating a trained model, keeps only its gain and bias). Either switch can also be
thrown in chosen blocks only (:meth:`StackConfig.at_block`). An attention-only stack
(``feed_forward=False``, the "pure attention" network of Dong et al. 2021) leaves out the whole
feed-forward sub-block: ``y = h``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .sublayers import (
    ABLATED_NORM,
    NORM_KINDS,
    AttentionParams,
    FeedForwardParams,
    NormParams,
    attention,
    attention_weights,
    feed_forward,
    normalize,
)

PLACEMENTS = ("post", "pre")
RESIDUAL_SCALES = ("one", "inv_sqrt_depth", "deepnorm")
MAX_DEPTH = 1000

POST_STAGES = (
    "input",
    "attention",
    "attention_residual",
    "attention_norm",
    "feed_forward",
    "ffn_residual",
    "ffn_norm",
)
PRE_STAGES = (
    "input",
    "attention_norm",
    "attention",
    "attention_residual",
    "ffn_norm",
    "feed_forward",
    "ffn_residual",
)
STAGES = {"post": POST_STAGES, "pre": PRE_STAGES}
# (stage before, stage after) for each normalization inside a block.
NORM_PAIRS = {
    "post": (("attention_residual", "attention_norm"), ("ffn_residual", "ffn_norm")),
    "pre": (("input", "attention_norm"), ("attention_residual", "ffn_norm")),
}


@dataclass(frozen=True)
class StackConfig:
    """How a stack of blocks is wired: the two stabilisers, their placement, and depth.

    ``residual_scale``: ``one`` (x + F(x)); ``inv_sqrt_depth`` (x + F(x)/sqrt(L), as studied by
    Noci et al. 2022); ``deepnorm`` (alpha*x + F(x) with alpha = (2L)^(1/4), Wang et al. 2022,
    whose beta = (8L)^(-1/4) scales the initial weights, see :func:`deepnorm_beta`).
    ``eps`` is added to the variance inside the square root of every normalization.
    ``feed_forward=False`` leaves out each block's feed-forward sub-block (add and norm included).
    ``residual_off`` and ``norm_off`` name blocks (0-based) whose residual is dropped or whose
    norms become ``norm_off_kind``: ``none`` (the identity) or ``affine`` (gain and bias kept).
    """

    depth: int = 1
    residual: bool = True
    norm: str = "rmsnorm"
    placement: str = "post"
    residual_scale: str = "one"
    causal: bool = False
    eps: float = 1e-5
    feed_forward: bool = True
    residual_off: frozenset[int] = frozenset()
    norm_off: frozenset[int] = frozenset()
    norm_off_kind: str = "none"

    def __post_init__(self):
        whole = isinstance(self.depth, int | np.integer) and not isinstance(self.depth, bool)
        if not (whole and 1 <= self.depth <= MAX_DEPTH):
            raise ValueError(f"depth must be an integer from 1 to {MAX_DEPTH}, got {self.depth!r}")
        if not all(isinstance(flag, bool | np.bool_) for flag in (self.residual, self.causal, self.feed_forward)):
            raise ValueError("residual, causal and feed_forward must be True or False")
        for value, allowed in (
            (self.norm, (*NORM_KINDS, ABLATED_NORM)),
            (self.norm_off_kind, ("none", ABLATED_NORM)),
            (self.placement, PLACEMENTS),
            (self.residual_scale, RESIDUAL_SCALES),
        ):
            if value not in allowed:
                raise ValueError(f"{value!r} is not one of {allowed}")
        if not (isinstance(self.eps, float | int) and np.isfinite(self.eps) and self.eps > 0):
            raise ValueError(f"eps must be positive, got {self.eps!r}")
        for blocks in (self.residual_off, self.norm_off):
            if not (isinstance(blocks, frozenset) and blocks <= frozenset(range(self.depth))):
                raise ValueError(f"switched blocks must be a frozenset of indices below {self.depth}")

    def at_block(self, index: int) -> StackConfig:
        """The wiring of block ``index``: this config, its residual or norm switched off there if named."""
        if index not in self.residual_off and index not in self.norm_off:
            return self
        return replace(self, residual=self.residual and index not in self.residual_off,
                       norm=self.norm_off_kind if index in self.norm_off else self.norm,
                       residual_off=frozenset(), norm_off=frozenset())

    @cached_property
    def skip_scale(self) -> float:
        """Weight of the kept input x in the residual sum (0 when the residual is off)."""
        if not self.residual:
            return 0.0
        return (2.0 * self.depth) ** 0.25 if self.residual_scale == "deepnorm" else 1.0

    @cached_property
    def branch_scale(self) -> float:
        """Weight of the new computation F(x) in the residual sum."""
        return 1.0 / math.sqrt(self.depth) if self.residual_scale == "inv_sqrt_depth" else 1.0

    @property
    def stages(self) -> tuple[str, ...]:
        return STAGES[self.placement]


def deepnorm_beta(depth: int) -> float:
    """DeepNorm's initial-weight scale for an encoder of ``depth`` blocks: (8L)^(-1/4)."""
    return (8.0 * depth) ** -0.25


@dataclass(frozen=True)
class BlockParams:
    attention: AttentionParams
    feed_forward: FeedForwardParams
    norm1: NormParams
    norm2: NormParams


@dataclass(frozen=True)
class StackParams:
    """One block's weights shared by every block (``len(blocks) == 1``), or one set per block
    (a tuple, or any sequence such as :class:`~blockstab.init.SeededBlocks`)."""

    blocks: Sequence[BlockParams]
    final_norm: NormParams

    def block(self, index: int) -> BlockParams:
        return self.blocks[0] if len(self.blocks) == 1 else self.blocks[index]


def residual_add(x: np.ndarray, branch: np.ndarray, cfg: StackConfig) -> np.ndarray:
    """``s*x + a*F(x)``: the residual connection keeps x beside the new computation."""
    return cfg.skip_scale * x + cfg.branch_scale * branch


def post_ln_block(x: np.ndarray, p: BlockParams, cfg: StackConfig):
    """Post-LN block; returns its stages (in :data:`POST_STAGES` order) and attention weights."""
    weights = attention_weights(x, p.attention, cfg.causal)
    attn = attention(x, p.attention, weights)
    attn_sum = residual_add(x, attn, cfg)
    h = normalize(attn_sum, p.norm1, cfg.norm, cfg.eps)
    if not cfg.feed_forward:
        return (x, attn, attn_sum, h, np.zeros_like(h), h, h), weights
    ffn = feed_forward(h, p.feed_forward)
    ffn_sum = residual_add(h, ffn, cfg)
    y = normalize(ffn_sum, p.norm2, cfg.norm, cfg.eps)
    return (x, attn, attn_sum, h, ffn, ffn_sum, y), weights


def pre_ln_block(x: np.ndarray, p: BlockParams, cfg: StackConfig):
    """Pre-LN block; returns its stages (in :data:`PRE_STAGES` order) and attention weights."""
    x_norm = normalize(x, p.norm1, cfg.norm, cfg.eps)
    weights = attention_weights(x_norm, p.attention, cfg.causal)
    attn = attention(x_norm, p.attention, weights)
    h = residual_add(x, attn, cfg)
    if not cfg.feed_forward:
        return (x, x_norm, attn, h, h, np.zeros_like(h), h), weights
    h_norm = normalize(h, p.norm2, cfg.norm, cfg.eps)
    ffn = feed_forward(h_norm, p.feed_forward)
    y = residual_add(h, ffn, cfg)
    return (x, x_norm, attn, h, h_norm, ffn, y), weights


BLOCKS = {"post": post_ln_block, "pre": pre_ln_block}


@dataclass(frozen=True)
class Trace:
    """Every intermediate value of a stack run; all arrays are read-only.

    ``values``: ``(depth, stage, batch, tokens, d_model)``, stages named by ``config.stages``.
    ``attention``: ``(depth, batch, heads, tokens, tokens)``.
    ``output``: ``(batch, tokens, d_model)``, after the final norm for Pre-LN.
    """

    config: StackConfig
    values: np.ndarray
    attention: np.ndarray
    output: np.ndarray

    @property
    def stages(self) -> tuple[str, ...]:
        return self.config.stages

    def stage(self, name: str) -> np.ndarray:
        """One stage in every block: ``(depth, batch, tokens, d_model)``."""
        return self.values[:, self.stages.index(name)]

    @property
    def stream(self) -> np.ndarray:
        """The input, then each block's output: ``(depth + 1, batch, tokens, d_model)``."""
        return np.concatenate([self.values[:1, 0], self.values[:, -1]])


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _checked_input(x: np.ndarray, params: StackParams, cfg: StackConfig) -> np.ndarray:
    """``x`` as float64, or as float32 when it is float32 (a trained model's weights and activations)."""
    x = np.asarray(x, dtype=np.float32 if np.asarray(x).dtype == np.float32 else np.float64)
    if x.ndim != 3 or not np.all(np.isfinite(x)):
        raise ValueError("input must be a finite (batch, tokens, d_model) array")
    if len(params.blocks) not in (1, cfg.depth):
        raise ValueError(f"{len(params.blocks)} blocks of weights for a stack of depth {cfg.depth}")
    return x


def run_stack(x: np.ndarray, params: StackParams, cfg: StackConfig) -> Trace:
    """Run ``cfg.depth`` blocks on ``x`` ``(batch, tokens, d_model)`` and record every stage."""
    x = _checked_input(x, params, cfg)
    block = BLOCKS[cfg.placement]
    heads = params.block(0).attention.heads
    values = np.empty((cfg.depth, len(cfg.stages), *x.shape), dtype=x.dtype)
    weights = np.empty((cfg.depth, x.shape[0], heads, x.shape[1], x.shape[1]), dtype=x.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(cfg.depth):
            stages, weights[i] = block(x, params.block(i), cfg.at_block(i))
            values[i] = stages
            x = stages[-1]
        output = normalize(x, params.final_norm, cfg.norm, cfg.eps) if cfg.placement == "pre" else x
    return Trace(cfg, _read_only(values), _read_only(weights), _read_only(np.array(output)))


def first_blocks(trace: Trace, params: StackParams, n: int) -> Trace:
    """``trace`` cut to its first ``n`` blocks: what :func:`run_stack` returns ``n`` blocks deep on
    the same input and ``params``, without running a block again (a block does not read later
    ones). Only a stack whose sums do not depend on its depth can be cut: ``residual_scale`` "one"
    (``ValueError`` otherwise)."""
    cfg = trace.config
    if cfg.residual_scale != "one":
        raise ValueError(f"a stack with residual_scale {cfg.residual_scale!r} changes with depth: run it again")
    if not 1 <= n <= cfg.depth:
        raise ValueError(f"n must be from 1 to {cfg.depth}, got {n!r}")
    kept = frozenset(range(n))
    short = replace(cfg, depth=n, residual_off=cfg.residual_off & kept, norm_off=cfg.norm_off & kept)
    x = trace.values[n - 1, -1]
    with np.errstate(over="ignore", invalid="ignore"):
        output = normalize(x, params.final_norm, cfg.norm, cfg.eps) if cfg.placement == "pre" else x
    return Trace(short, trace.values[:n], trace.attention[:n], _read_only(np.array(output)))


def run_stream(
    x: np.ndarray, params: StackParams, cfg: StackConfig, progress: Callable[[float], None] | None = None
) -> np.ndarray:
    """The residual stream only, as :attr:`Trace.stream`: ``(depth + 1, batch, tokens, d_model)``.

    Keeps no stages, so memory grows with depth only by one activation per block; the backward
    pass recomputes each block from its input. ``progress(fraction)`` is called after each block.
    """
    x = _checked_input(x, params, cfg)
    block = BLOCKS[cfg.placement]
    stream = np.empty((cfg.depth + 1, *x.shape), dtype=x.dtype)
    stream[0] = x
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(cfg.depth):
            stages, _ = block(stream[i], params.block(i), cfg.at_block(i))
            stream[i + 1] = stages[-1]
            if progress is not None:
                progress((i + 1) / cfg.depth)
    return stream
