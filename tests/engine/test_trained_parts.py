"""The engine's parts for a trained model: biases, erf GELU, the "affine" norm ablation, the
per-layer switches and float32 weights, against hand-worked cases and as properties of whole-stack
switches."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from blockstab.block import BLOCKS, BlockParams, StackConfig, StackParams, run_stack, run_stream
from blockstab.init import random_stack, random_tokens
from blockstab.sublayers import (
    AttentionParams,
    FeedForwardParams,
    NormParams,
    attention,
    attention_weights,
    erf,
    gelu_erf,
    normalize,
)

# Two positive tokens, d = 2: uniform attention (W_Q = W_K = 0) passes the token mean through
# (W_V = W_O = I), and the ReLU feed-forward with identity weights is the identity on them.
X = np.array([[[1.0, 0.0], [0.0, 3.0]]])
EYE, ZERO = np.eye(2), np.zeros(2)
MEAN_BLOCK = BlockParams(
    AttentionParams(np.zeros((2, 2)), np.zeros((2, 2)), EYE, EYE),
    FeedForwardParams(EYE, ZERO, EYE, ZERO),
    NormParams(np.full(2, 2.0), np.ones(2)),
    NormParams(np.full(2, 2.0), np.ones(2)),
)
PARAMS = StackParams((MEAN_BLOCK,), NormParams.identity(2))


def output(**switches) -> np.ndarray:
    return run_stack(X, PARAMS, StackConfig(depth=2, norm="none", **switches)).output[0]


def test_both_residuals_on_by_hand():
    # block 1: h = x + mean = [[1.5, 1.5], [0.5, 4.5]], y = 2h; block 2 likewise from y
    assert_array_equal(output(), [[10, 18], [6, 30]])


@pytest.mark.parametrize(("off", "expected"), [
    (0, [[2, 6], [2, 6]]),  # block 1 keeps only the mean [0.5, 1.5]; block 2 doubles twice
    (1, [[2, 6], [2, 6]]),  # block 1 gives [[3, 3], [1, 9]]; block 2 keeps only its mean
])
def test_one_residual_off_by_hand(off, expected):
    assert_array_equal(output(residual_off=frozenset({off})), expected)


def test_affine_norm_keeps_gain_and_bias_by_hand():
    # each norm is 2v + 1: h = 2(x + mean) + 1 = [[4, 4], [2, 10]], y = 2(h + h) + 1
    cfg = StackConfig(depth=1, norm="layernorm", norm_off=frozenset({0}), norm_off_kind="affine")
    assert_array_equal(run_stack(X, PARAMS, cfg).output[0], [[17, 17], [9, 41]])


def test_norm_off_in_one_block_leaves_the_others_normalized():
    cfg = StackConfig(depth=2, norm="layernorm", norm_off=frozenset({1}))
    trace = run_stack(X, PARAMS, cfg)
    first = run_stack(X, PARAMS, StackConfig(depth=1, norm="layernorm")).output
    assert_array_equal(trace.stream[1], first)
    plain = run_stack(first, PARAMS, StackConfig(depth=1, norm="none")).output
    assert_array_equal(trace.output, plain)


def test_at_block_without_switches_is_the_same_config():
    cfg = StackConfig(depth=3, norm="layernorm")
    assert all(cfg.at_block(i) is cfg for i in range(3))


@pytest.mark.parametrize("bad", [{"residual_off": frozenset({3})}, {"norm_off": {0}},
                                 {"norm_off_kind": "rmsnorm"}])
def test_bad_switches_are_refused(bad):
    with pytest.raises(ValueError):
        StackConfig(depth=3, **bad)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000), depth=st.integers(1, 5), placement=st.sampled_from(("post", "pre")),
       norm=st.sampled_from(("layernorm", "rmsnorm")))
def test_switching_every_block_is_switching_the_stack(seed, depth, placement, norm):
    params = random_stack(seed, depth, 8, 2, 16)
    x = random_tokens(seed, 1, 4, 8)
    every = frozenset(range(depth))
    base = StackConfig(depth=depth, norm=norm, placement=placement)
    no_residual = run_stack(x, params, StackConfig(depth=depth, norm=norm, placement=placement, residual=False))
    assert_array_equal(run_stack(x, params, StackConfig(**{**vars(base), "residual_off": every})).values,
                       no_residual.values)
    per_block = run_stack(x, params, StackConfig(depth=depth, norm=norm, placement=placement, norm_off=every))
    whole = run_stack(x, params, StackConfig(depth=depth, norm="none", placement=placement))
    # Pre-LN's final norm is not a block's: it stays, so compare the blocks' stages
    assert_array_equal(per_block.values, whole.values)


def test_erf_within_its_stated_error():
    x = np.linspace(-7, 7, 14001)
    assert np.abs(erf(x) - np.array([math.erf(v) for v in x])).max() < 1.2e-7


def test_gelu_erf_is_x_times_the_normal_cdf():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    assert_allclose(gelu_erf(x), x * cdf, atol=1e-7)


def test_attention_biases_add_where_bert_adds_them():
    rng = np.random.default_rng(0)
    w = [rng.normal(size=(4, 4)) for _ in range(4)]
    b = [rng.normal(size=4) for _ in range(4)]
    x = rng.normal(size=(1, 3, 4))
    p = AttentionParams(*w, heads=2, b_query=b[0], b_key=b[1], b_value=b[2], b_out=b[3])
    weights = attention_weights(x, p)
    q, k, v = x @ w[0] + b[0], x @ w[1] + b[1], x @ w[2] + b[2]
    for head in range(2):
        cols = slice(2 * head, 2 * head + 2)
        scores = q[0, :, cols] @ k[0, :, cols].T / math.sqrt(2)
        expected = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
        assert_allclose(weights[0, head], expected)
    mixed = np.concatenate([weights[0, h] @ v[0, :, 2 * h:2 * h + 2] for h in range(2)], axis=1)
    assert_allclose(attention(x, p, weights)[0], mixed @ w[3] + b[3])


def test_affine_norm_is_gain_and_bias_only():
    p = NormParams(np.array([2.0, -1.0]), np.array([0.5, 0.0]))
    assert_array_equal(normalize(np.array([[3.0, 4.0]]), p, "affine", 1e-12), [[6.5, -4.0]])


def _as_float32(params):
    """Every array of a (nested) parameter dataclass as float32, as a trained model's file stores them."""
    if isinstance(params, np.ndarray):
        return params.astype(np.float32)
    if isinstance(params, tuple):
        return tuple(_as_float32(p) for p in params)
    if dataclasses.is_dataclass(params):
        return dataclasses.replace(params, **{f.name: _as_float32(getattr(params, f.name))
                                              for f in dataclasses.fields(params) if f.init})
    return params


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), placement=st.sampled_from(("post", "pre")),
       activation=st.sampled_from(("relu", "gelu", "gelu_erf")),
       residual_scale=st.sampled_from(("one", "inv_sqrt_depth")))
def test_float32_weights_and_input_run_in_float32_end_to_end(seed, placement, activation, residual_scale):
    """The trained model's path: float32 stays float32 in every stage (no silent float64 promotion by a
    NumPy scalar), and agrees with the same weights run in float64 to float32's precision."""
    params = random_stack(seed, 3, 16, 4, 32, scheme="bert", activation=activation)
    x = random_tokens(seed, 1, 5, 16)
    cfg = StackConfig(depth=3, norm="layernorm", placement=placement, residual_scale=residual_scale, eps=1e-12,
                      norm_off=frozenset({1}), norm_off_kind="affine")
    narrow = run_stack(x.astype(np.float32), _as_float32(params), cfg)
    assert narrow.values.dtype == narrow.attention.dtype == narrow.output.dtype == np.float32
    for i in range(3):  # each block's own results (the trace's float32 buffers would hide a promotion)
        stages, weights = BLOCKS[placement](narrow.stream[i], _as_float32(params).block(i), cfg.at_block(i))
        assert {a.dtype for a in (*stages, weights)} == {np.dtype(np.float32)}
    stream = run_stream(x.astype(np.float32), _as_float32(params), cfg)
    assert stream.dtype == np.float32
    assert_array_equal(stream, narrow.stream)
    wide = run_stack(x, params, cfg)
    assert wide.values.dtype == np.float64
    assert_allclose(narrow.values, wide.values, rtol=0, atol=1e-4 * np.abs(wide.values).max())
