"""Random weights for deep stacks, reproducible from a seed.

Schemes: ``fan_in`` draws every matrix from N(0, 1/fan_in) (LeCun-style, unit gain);
``bert`` draws from N(0, std^2) with BERT's std 0.02 at width 768 (Devlin et al. 2019), rescaled
as 0.02 * sqrt(768 / d_model) so that a narrower model has BERT's gain std * sqrt(d_model);
``xiong`` is the simplified setting of Xiong et al. 2020: W_Q = W_K = 0 (every token attends
evenly), every other matrix from N(0, 1/fan_in).
``branch_gain`` multiplies the value, output and feed-forward weights (DeepNorm's beta).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .block import BlockParams, StackParams
from .sublayers import AttentionParams, FeedForwardParams, NormParams, layer_norm

INIT_SCHEMES = ("fan_in", "bert", "xiong")
BERT_STD = 0.02
BERT_WIDTH = 768
BERT_LAYER_NORM_EPS = 1e-12


def bert_std(d_model: int) -> float:
    """BERT's initial std, gain-matched to ``d_model``: 0.02 * sqrt(768 / d_model)."""
    return BERT_STD * np.sqrt(BERT_WIDTH / d_model)


def _matrix(rng: np.random.Generator, fan_in: int, fan_out: int, scheme: str, d_model: int) -> np.ndarray:
    std = bert_std(d_model) if scheme == "bert" else 1.0 / np.sqrt(fan_in)
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
    def matrix(fan_in, fan_out):
        return _matrix(rng, fan_in, fan_out, scheme, d_model)

    query, key = matrix(d_model, d_model), matrix(d_model, d_model)
    if scheme == "xiong":
        query, key = np.zeros_like(query), np.zeros_like(key)
    attn = AttentionParams(
        w_query=query,
        w_key=key,
        w_value=branch_gain * matrix(d_model, d_model),
        w_out=branch_gain * matrix(d_model, d_model),
        heads=heads,
    )
    ffn = FeedForwardParams(
        w_in=branch_gain * matrix(d_model, hidden),
        b_in=np.zeros(hidden),
        w_out=branch_gain * matrix(hidden, d_model),
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


@dataclass(frozen=True)
class SeededBlocks(Sequence):
    """``depth`` random blocks, block ``i`` drawn from ``(seed, i)`` each time it is read: a stack
    of any depth and width that keeps no weights in memory (``StackParams(SeededBlocks(...), ...)``)."""

    seed: int
    depth: int
    d_model: int
    heads: int
    hidden: int
    scheme: str = "fan_in"
    activation: str = "relu"
    branch_gain: float = 1.0

    def __len__(self) -> int:
        return self.depth

    def __getitem__(self, index: int) -> BlockParams:
        if not 0 <= index < self.depth:
            raise IndexError(index)
        rng = np.random.default_rng((self.seed, index))
        return random_block(rng, self.d_model, self.heads, self.hidden, self.scheme, self.activation,
                            self.branch_gain)


def random_tokens(seed: int, batch: int, tokens: int, d_model: int) -> np.ndarray:
    """Standard-normal token embeddings ``(batch, tokens, d_model)``."""
    return np.random.default_rng(seed).normal(size=(batch, tokens, d_model))


def bert_embedding_tokens(seed: int, tokens: int, d_model: int) -> np.ndarray:
    """BERT's embedding output at initialisation for one sequence of random words, ``(1, tokens, d_model)``.

    ``LayerNorm(word + position + token type)`` as in Devlin et al. 2019, each embedding drawn from
    N(0, :func:`bert_std` ^2) and the LayerNorm at unit gain, zero bias: a random word at each
    position (its own vector), each position's own vector, and one token-type vector (segment A)
    shared by every token. That shared vector is why these tokens start less spread out than
    independent standard-normal ones (Dong et al. 2021's Figure 2 measures BERT on such inputs).
    """
    rng = np.random.default_rng(seed)
    word, position = rng.normal(0.0, bert_std(d_model), size=(2, tokens, d_model))
    token_type = rng.normal(0.0, bert_std(d_model), size=d_model)
    return layer_norm(word + position + token_type, NormParams.identity(d_model), BERT_LAYER_NORM_EPS)[None]
