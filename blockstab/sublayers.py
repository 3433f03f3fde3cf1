"""The four parts of a Transformer block, as pure functions on float64 arrays (or float32 ones, for a
trained model's weights: constants are Python floats, so float32 is never promoted to float64).

Shapes: ``x`` is ``(batch, tokens, d_model)``; every function returns a new array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

NORM_KINDS = ("none", "layernorm", "rmsnorm")
# "affine": a LayerNorm with its normalisation removed, gain and bias kept (x * gain + bias); an
# ablation of a trained model, not a choice for a stack.
ABLATED_NORM = "affine"
ACTIVATIONS = ("relu", "gelu", "gelu_erf")


@dataclass(frozen=True)
class AttentionParams:
    """Self-attention weights, all ``(d_model, d_model)``; heads split the columns evenly.
    Biases ``(d_model,)`` are optional (BERT has them; the lesson's stacks do not)."""

    w_query: np.ndarray
    w_key: np.ndarray
    w_value: np.ndarray
    w_out: np.ndarray
    heads: int = 1
    b_query: np.ndarray | None = None
    b_key: np.ndarray | None = None
    b_value: np.ndarray | None = None
    b_out: np.ndarray | None = None

    @property
    def has_biases(self) -> bool:
        return any(b is not None for b in (self.b_query, self.b_key, self.b_value, self.b_out))


@dataclass(frozen=True)
class FeedForwardParams:
    """Position-wise MLP: ``w_in (d, hidden)``, ``b_in (hidden,)``, ``w_out (hidden, d)``, ``b_out (d,)``."""

    w_in: np.ndarray
    b_in: np.ndarray
    w_out: np.ndarray
    b_out: np.ndarray
    activation: str = "relu"

    def __post_init__(self):
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"{self.activation!r} is not one of {ACTIVATIONS}")


@dataclass(frozen=True)
class NormParams:
    """Per-feature gain and bias ``(d_model,)``; RMSNorm uses only the gain."""

    gain: np.ndarray
    bias: np.ndarray

    @classmethod
    def identity(cls, d_model: int) -> NormParams:
        return cls(np.ones(d_model), np.zeros(d_model))


@dataclass(frozen=True)
class EmbeddingParams:
    """BERT's input tables, word ``(vocab, d)``, position ``(positions, d)`` and token type
    ``(types, d)``, and the LayerNorm applied to their sum."""

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    norm: NormParams


def embed(token_ids: np.ndarray, p: EmbeddingParams, eps: float) -> np.ndarray:
    """One sentence's input tokens ``(1, tokens, d)``: LayerNorm(word + position + type 0) (Devlin et al. 2019)."""
    summed = p.word[token_ids] + p.position[:len(token_ids)] + p.token_type[0]
    return layer_norm(summed, p.norm, eps)[None]


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """``(B, T, d)`` -> ``(B, H, T, d/H)``."""
    batch, tokens, d_model = x.shape
    return x.reshape(batch, tokens, heads, d_model // heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(B, H, T, d/H)`` -> ``(B, T, d)``."""
    batch, heads, tokens, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, tokens, heads * d_head)


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """``x W + b``, or ``x W`` without a bias."""
    return x @ w if b is None else x @ w + b


def softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the row maximum for stability."""
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def attention_weights(x: np.ndarray, p: AttentionParams, causal: bool = False) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_head)) per head: ``(B, H, T, T)``, rows sum to 1 (Vaswani et al. 2017)."""
    q = split_heads(linear(x, p.w_query, p.b_query), p.heads)
    k = split_heads(linear(x, p.w_key, p.b_key), p.heads)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    if causal:
        tokens = x.shape[1]
        scores = np.where(np.tri(tokens, dtype=bool), scores, -np.inf)
    return softmax(scores)


def attention(x: np.ndarray, p: AttentionParams, weights: np.ndarray) -> np.ndarray:
    """Mix values with given attention ``weights`` and project: ``concat_h(A_h V_h) W_O``."""
    v = split_heads(linear(x, p.w_value, p.b_value), p.heads)
    return linear(merge_heads(weights @ v), p.w_out, p.b_out)


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation (Hendrycks & Gimpel 2016, as in GPT-2)."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def erf(x: np.ndarray) -> np.ndarray:
    """The error function to within 1.2e-7 (Numerical Recipes' ``erfcc``: a Chebyshev fit of erfc
    with relative error below 1.2e-7; NumPy has no erf). Finer than float32, the model's weights."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    return np.sign(x) * (1.0 - t * np.exp(-z * z + poly))


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """GELU as defined, ``x * Phi(x) = x/2 * (1 + erf(x / sqrt 2))`` (BERT's activation)."""
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def feed_forward_hidden(x: np.ndarray, p: FeedForwardParams) -> np.ndarray:
    """The hidden layer ``act(x W_in + b_in)``: in a key-value memory, how strongly each key fires."""
    act = {"relu": relu, "gelu": gelu, "gelu_erf": gelu_erf}[p.activation]
    return act(x @ p.w_in + p.b_in)


def feed_forward(x: np.ndarray, p: FeedForwardParams) -> np.ndarray:
    """``act(x W_in + b_in) W_out + b_out``, applied to every position alike."""
    return feed_forward_hidden(x, p) @ p.w_out + p.b_out


def _feature_mean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis, kept for broadcasting (sum / d: cheaper than ``mean`` on tiny arrays)."""
    return x.sum(axis=-1, keepdims=True) / x.shape[-1]


def layer_norm(x: np.ndarray, p: NormParams, eps: float) -> np.ndarray:
    """``(x - mean) / sqrt(var + eps) * gain + bias`` over features; eps inside the sqrt (Ba et al. 2016)."""
    centred = x - _feature_mean(x)
    return centred / np.sqrt(_feature_mean(centred * centred) + eps) * p.gain + p.bias


def rms_norm(x: np.ndarray, p: NormParams, eps: float) -> np.ndarray:
    """``x / sqrt(mean(x^2) + eps) * gain``; no centring, no bias (Zhang & Sennrich 2019)."""
    return x / np.sqrt(_feature_mean(x * x) + eps) * p.gain


def gain_and_bias(x: np.ndarray, p: NormParams) -> np.ndarray:
    """``x * gain + bias``: a LayerNorm with the normalisation taken out (:data:`ABLATED_NORM`)."""
    return x * p.gain + p.bias


def normalize(x: np.ndarray, p: NormParams, kind: str, eps: float) -> np.ndarray:
    """Dispatch on ``kind`` in :data:`NORM_KINDS` or :data:`ABLATED_NORM`; ``none`` returns ``x`` unchanged."""
    if kind == "layernorm":
        return layer_norm(x, p, eps)
    if kind == "rmsnorm":
        return rms_norm(x, p, eps)
    if kind == "none":
        return x
    if kind == ABLATED_NORM:
        return gain_and_bias(x, p)
    raise ValueError(f"{kind!r} is not one of {NORM_KINDS}")
