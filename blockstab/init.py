"""Random weights for deep stacks, reproducible from a seed.

Schemes: ``fan_in`` draws every matrix from N(0, 1/fan_in) (LeCun-style, unit gain);
``bert`` draws from N(0, 0.02^2) as in BERT's initialisation (Devlin et al. 2019).
``branch_gain`` multiplies the value, output and feed-forward weights (DeepNorm's beta).
"""

from __future__ import annotations

import numpy as np

from .block import BlockParams, StackParams
from .sublayers import AttentionParams, FeedForwardParams, NormParams

INIT_SCHEMES = ("fan_in", "bert")


def _matrix(rng: np.random.Generator, fan_in: int, fan_out: int, scheme: str) -> np.ndarray:
    std = 0.02 if scheme == "bert" else 1.0 / np.sqrt(fan_in)
    return rng.normal(0.0, std, size=(fan_in, fan_out))


def random_block(
    rng: np.random.Generator,
    d_model: int,
    heads: int,
    hidden: int,
    scheme: str = "fan_in",
    activation: str = "relu",
    branch_gain: float = 1.0,
) -> BlockParams:
    """One block of random weights; biases zero, norm gains one."""
    if scheme not in INIT_SCHEMES:
        raise ValueError(f"{scheme!r} is not one of {INIT_SCHEMES}")
    if heads < 1 or d_model % heads:
        raise ValueError(f"d_model {d_model} is not divisible by {heads} heads")
    attn = AttentionParams(
        w_query=_matrix(rng, d_model, d_model, scheme),
        w_key=_matrix(rng, d_model, d_model, scheme),
        w_value=branch_gain * _matrix(rng, d_model, d_model, scheme),
        w_out=branch_gain * _matrix(rng, d_model, d_model, scheme),
        heads=heads,
    )
    ffn = FeedForwardParams(
        w_in=branch_gain * _matrix(rng, d_model, hidden, scheme),
        b_in=np.zeros(hidden),
        w_out=branch_gain * _matrix(rng, hidden, d_model, scheme),
        b_out=np.zeros(d_model),
        activation=activation,
    )
    return BlockParams(attn, ffn, NormParams.identity(d_model), NormParams.identity(d_model))


def random_stack(
    seed: int,
    depth: int,
    d_model: int,
    heads: int = 1,
    hidden: int | None = None,
    scheme: str = "fan_in",
    activation: str = "relu",
    shared: bool = False,
    branch_gain: float = 1.0,
) -> StackParams:
    """A stack of ``depth`` random blocks (or one block shared by all when ``shared``)."""
    rng = np.random.default_rng(seed)
    hidden = 4 * d_model if hidden is None else hidden
    count = 1 if shared else depth
    blocks = tuple(
        random_block(rng, d_model, heads, hidden, scheme, activation, branch_gain) for _ in range(count)
    )
    return StackParams(blocks, NormParams.identity(d_model))


def random_tokens(seed: int, batch: int, tokens: int, d_model: int) -> np.ndarray:
    """Standard-normal token embeddings ``(batch, tokens, d_model)``."""
    return np.random.default_rng(seed).normal(size=(batch, tokens, d_model))
