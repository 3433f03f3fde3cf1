"""The four parts of a Transformer block, as pure functions on float64 arrays.

Shapes: ``x`` is ``(batch, tokens, d_model)``; every function returns a new array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NORM_KINDS = ("none", "layernorm", "rmsnorm")
ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class AttentionParams:
    """Self-attention weights, all ``(d_model, d_model)``; heads split the columns evenly."""

    w_query: np.ndarray
    w_key: np.ndarray
    w_value: np.ndarray
    w_out: np.ndarray
    heads: int = 1


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


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """``(B, T, d)`` -> ``(B, H, T, d/H)``."""
    batch, tokens, d_model = x.shape
    return x.reshape(batch, tokens, heads, d_model // heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(B, H, T, d/H)`` -> ``(B, T, d)``."""
    batch, heads, tokens, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, tokens, heads * d_head)


def softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the row maximum for stability."""
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def attention_weights(x: np.ndarray, p: AttentionParams, causal: bool = False) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_head)) per head: ``(B, H, T, T)``, rows sum to 1 (Vaswani et al. 2017)."""
    q = split_heads(x @ p.w_query, p.heads)
    k = split_heads(x @ p.w_key, p.heads)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        tokens = x.shape[1]
        scores = np.where(np.tri(tokens, dtype=bool), scores, -np.inf)
    return softmax(scores)


def attention(x: np.ndarray, p: AttentionParams, weights: np.ndarray) -> np.ndarray:
    """Mix values with given attention ``weights`` and project: ``concat_h(A_h V_h) W_O``."""
    v = split_heads(x @ p.w_value, p.heads)
    return merge_heads(weights @ v) @ p.w_out


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation (Hendrycks & Gimpel 2016, as in GPT-2)."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def feed_forward_hidden(x: np.ndarray, p: FeedForwardParams) -> np.ndarray:
    """The hidden layer ``act(x W_in + b_in)``: in a key-value memory, how strongly each key fires."""
    act = {"relu": relu, "gelu": gelu}[p.activation]
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


def normalize(x: np.ndarray, p: NormParams, kind: str, eps: float) -> np.ndarray:
    """Dispatch on ``kind`` in :data:`NORM_KINDS`; ``none`` returns ``x`` unchanged."""
    if kind == "layernorm":
        return layer_norm(x, p, eps)
    if kind == "rmsnorm":
        return rms_norm(x, p, eps)
    if kind == "none":
        return x
    raise ValueError(f"{kind!r} is not one of {NORM_KINDS}")
