"""Properties and hand-computed cases for blockstab.sublayers (norms, attention, feed-forward)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose

from blockstab.sublayers import (
    AttentionParams,
    FeedForwardParams,
    NormParams,
    attention,
    attention_weights,
    feed_forward,
    gelu,
    layer_norm,
    merge_heads,
    normalize,
    relu,
    rms_norm,
    softmax,
    split_heads,
)

PROPERTY = settings(max_examples=60, deadline=None)

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
small_shape = st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(2, 8))


def tokens_array(shape=small_shape, elements=finite):
    return hnp.arrays(np.float64, shape, elements=elements)


def random_attention(rng, d_model, heads, scale=1.0):
    def m():
        return rng.normal(0.0, scale / np.sqrt(d_model), size=(d_model, d_model))

    return AttentionParams(m(), m(), m(), m(), heads=heads)


# --------------------------------------------------------------------------------------------- norms


@PROPERTY
@given(x=tokens_array(), eps=st.sampled_from([1e-12, 1e-8, 1e-5, 1e-3]))
def test_layer_norm_zero_mean_unit_variance(x, eps):
    d = x.shape[-1]
    out = layer_norm(x, NormParams.identity(d), eps)
    assert np.all(np.isfinite(out))
    # Always: the output lies in the ball of radius sqrt(d) (exactly on it as eps -> 0).
    assert np.all((out**2).sum(axis=-1) <= d * (1.0 + 1e-12))
    var_in = x.var(axis=-1)
    mean_out, var_out = out.mean(axis=-1), out.var(axis=-1)
    # Rows whose spread is not lost to rounding when the mean is subtracted.
    conditioned = np.sqrt(var_in) > 1e-6 * np.abs(x).max(axis=-1)
    assert_allclose(mean_out[conditioned], 0.0, atol=1e-9)
    assert_allclose(var_out[conditioned], (var_in / (var_in + eps))[conditioned], rtol=1e-9, atol=1e-12)
    # For rows whose variance is well above eps the output variance is 1 up to eps/var.
    wide = conditioned & (var_in > max(1e-2, 1e4 * eps))
    note(f"{wide.sum()} of {wide.size} rows with variance well above eps")
    assert np.all(np.abs(var_out[wide] - 1.0) <= eps / var_in[wide] + 1e-9)


def test_layer_norm_unit_variance_on_random_rows():
    """The same claim on rows that certainly qualify (hypothesis may draw many constant rows)."""
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(4, 6, 16))
    eps = 1e-5
    out = layer_norm(x, NormParams.identity(16), eps)
    var_in = x.var(axis=-1)
    assert_allclose(out.mean(axis=-1), 0.0, atol=1e-12)
    assert_allclose(out.var(axis=-1), 1.0, rtol=0, atol=eps / var_in.min())
    assert np.all(out.var(axis=-1) < 1.0)  # eps inside the sqrt always pulls the variance below 1


@PROPERTY
@given(
    x=tokens_array(shape=st.tuples(st.integers(1, 3), st.integers(1, 4), st.just(4))),
    gain=hnp.arrays(np.float64, 4, elements=st.floats(-3, 3)),
    bias=hnp.arrays(np.float64, 4, elements=st.floats(-3, 3)),
)
def test_layer_norm_applies_gain_and_bias_after_normalising(x, gain, bias):
    eps = 1e-5
    plain = layer_norm(x, NormParams.identity(4), eps)
    assert_allclose(layer_norm(x, NormParams(gain, bias), eps), plain * gain + bias, rtol=1e-12, atol=1e-12)


def test_layer_norm_hand_computed_with_eps_inside_sqrt():
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]])
    gain = np.array([1.0, 2.0, -1.0, 0.5])
    bias = np.array([0.0, 1.0, 0.0, -1.0])
    # mean 2.5, population variance 1.25, eps 0.25 -> denominator sqrt(1.5)
    centred = np.array([-1.5, -0.5, 0.5, 1.5])
    expected = centred / math.sqrt(1.5) * gain + bias
    assert_allclose(layer_norm(x, NormParams(gain, bias), 0.25)[0, 0], expected, rtol=1e-14, atol=1e-14)
    assert_allclose(
        normalize(x, NormParams(gain, bias), "layernorm", 0.25)[0, 0], expected, rtol=1e-14, atol=1e-14
    )


@PROPERTY
@given(x=tokens_array(), eps=st.sampled_from([1e-12, 1e-8, 1e-5, 1e-3]))
def test_rms_norm_unit_rms(x, eps):
    out = rms_norm(x, NormParams.identity(x.shape[-1]), eps)
    ms_in = (x**2).mean(axis=-1)
    ms_out = (out**2).mean(axis=-1)
    assert_allclose(ms_out, ms_in / (ms_in + eps), rtol=1e-9, atol=1e-12)
    wide = ms_in > max(1e-2, 1e4 * eps)
    note(f"{wide.sum()} of {wide.size} rows with mean square well above eps")
    assert np.all(np.abs(np.sqrt(ms_out[wide]) - 1.0) <= eps / ms_in[wide] + 1e-9)
    # RMSNorm only rescales: every row keeps its direction.
    assert_allclose(out, x / np.sqrt(ms_in + eps)[..., None], rtol=1e-12, atol=1e-12)


def test_rms_norm_hand_computed_uses_gain_and_ignores_bias():
    x = np.array([[[3.0, 4.0]]])
    gain = np.array([2.0, -1.0])
    bias = np.array([10.0, 10.0])
    # mean square 12.5, eps 0.5 -> sqrt(13)
    expected = np.array([3.0 * 2.0, 4.0 * -1.0]) / math.sqrt(13.0)
    assert_allclose(rms_norm(x, NormParams(gain, bias), 0.5)[0, 0], expected, rtol=1e-14)
    assert_allclose(normalize(x, NormParams(gain, bias), "rmsnorm", 0.5)[0, 0], expected, rtol=1e-14)


@PROPERTY
@given(x=tokens_array())
def test_normalize_none_is_identity(x):
    d = x.shape[-1]
    p = NormParams(np.full(d, 3.0), np.full(d, -2.0))  # gain and bias must be ignored too
    out = normalize(x, p, "none", 1e-5)
    assert out.shape == x.shape
    assert np.array_equal(out, x)


# ------------------------------------------------------------------------------------------ softmax


@PROPERTY
@given(scores=tokens_array(elements=st.floats(-1e4, 1e4)))
def test_softmax_rows_are_probability_vectors(scores):
    p = softmax(scores)
    assert np.all(np.isfinite(p))
    assert np.all(p >= 0.0)
    assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # The largest score always gets the largest weight.
    assert np.array_equal(
        np.take_along_axis(p, scores.argmax(axis=-1)[..., None], -1)[..., 0], p.max(axis=-1)
    )


def test_softmax_hand_computed():
    assert_allclose(softmax(np.array([0.0, math.log(3.0)])), [0.25, 0.75], rtol=1e-14)
    big = np.array([[1000.0, 1000.0, 1000.0 - math.log(2.0)]])  # would overflow without the shift
    assert_allclose(softmax(big), [[0.4, 0.4, 0.2]], rtol=1e-12)
    assert_allclose(softmax(np.array([0.0, 0.0, 0.0, 0.0])), [0.25] * 4, rtol=1e-15)


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 3),
    tokens=st.integers(1, 6),
    heads=st.sampled_from([1, 2, 4]),
    d_head=st.integers(1, 3),
    scale=st.sampled_from([0.1, 1.0, 30.0]),
    causal=st.booleans(),
)
def test_attention_weights_rows_sum_to_one(seed, batch, tokens, heads, d_head, scale, causal):
    rng = np.random.default_rng(seed)
    d = heads * d_head
    x = rng.normal(size=(batch, tokens, d)) * scale
    w = attention_weights(x, random_attention(rng, d, heads, scale), causal)
    assert w.shape == (batch, heads, tokens, tokens)
    assert np.all(np.isfinite(w))
    assert np.all(w >= 0.0)
    assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), tokens=st.integers(2, 7), heads=st.sampled_from([1, 2, 3]))
def test_causal_mask_zeroes_upper_triangle(seed, tokens, heads):
    rng = np.random.default_rng(seed)
    d = 2 * heads
    x = rng.normal(size=(2, tokens, d))
    p = random_attention(rng, d, heads)
    w = attention_weights(x, p, causal=True)
    upper = np.triu(np.ones((tokens, tokens), dtype=bool), k=1)
    assert np.all(w[..., upper] == 0.0)
    assert_allclose(w[..., 0, 0], 1.0, rtol=0, atol=0)  # the first token sees only itself
    # The last row sees every token, so it equals the unmasked row.
    last = attention_weights(x, p, causal=False)[..., -1, :]
    assert_allclose(w[..., -1, :], last, rtol=1e-12, atol=1e-15)
    # A middle row is the softmax over its prefix alone.
    k = tokens // 2
    assert_allclose(w[:, :, k, : k + 1], attention_weights(x[:, : k + 1], p)[:, :, k], rtol=1e-12, atol=1e-15)


def test_causal_attention_output_ignores_future_tokens():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(1, 5, 4))
    p = random_attention(rng, 4, 2)
    changed = x.copy()
    changed[0, 3:] = rng.normal(size=(2, 4)) * 10.0
    out = attention(x, p, attention_weights(x, p, causal=True))
    out_changed = attention(changed, p, attention_weights(changed, p, causal=True))
    assert_allclose(out_changed[0, :3], out[0, :3], rtol=1e-12, atol=1e-12)
    assert not np.allclose(out_changed[0, 3:], out[0, 3:])


# ---------------------------------------------------------------------------------------- attention


def attention_by_hand(x, p):
    """Per head, on explicit column slices; loops over batch and heads."""
    batch, tokens, d = x.shape
    d_head = d // p.heads
    out = np.zeros((batch, tokens, d))
    for b in range(batch):
        heads_out = []
        for h in range(p.heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            q = x[b] @ p.w_query[:, cols]
            k = x[b] @ p.w_key[:, cols]
            v = x[b] @ p.w_value[:, cols]
            scores = q @ k.T / math.sqrt(d_head)
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            a = e / e.sum(axis=1, keepdims=True)
            heads_out.append(a @ v)
        out[b] = np.concatenate(heads_out, axis=1) @ p.w_out
    return out


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 2),
    tokens=st.integers(1, 5),
    heads=st.sampled_from([1, 2, 3, 4]),
    d_head=st.integers(1, 3),
)
def test_multi_head_attention_equals_per_head_computation(seed, batch, tokens, heads, d_head):
    rng = np.random.default_rng(seed)
    d = heads * d_head
    x = rng.normal(size=(batch, tokens, d))
    p = random_attention(rng, d, heads, scale=2.0)
    out = attention(x, p, attention_weights(x, p))
    assert_allclose(out, attention_by_hand(x, p), rtol=1e-10, atol=1e-12)


def test_two_heads_differ_from_one_head():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 4, 4))
    p2 = random_attention(rng, 4, 2, scale=2.0)
    p1 = AttentionParams(p2.w_query, p2.w_key, p2.w_value, p2.w_out, heads=1)
    two = attention(x, p2, attention_weights(x, p2))
    one = attention(x, p1, attention_weights(x, p1))
    assert not np.allclose(two, one)


def test_attention_hand_computed_two_tokens():
    # Identity weights, d=1, one head: scores = x_i x_j.
    x = np.array([[[1.0], [2.0]]])
    eye = np.eye(1)
    p = AttentionParams(eye, eye, eye, 3.0 * eye)
    w = attention_weights(x, p)
    # row 0: scores (1, 2) -> (1/(1+e), e/(1+e)); row 1: scores (2, 4) -> (1/(1+e^2), e^2/(1+e^2))
    e = math.e
    expected_w = np.array([[1 / (1 + e), e / (1 + e)], [1 / (1 + e**2), e**2 / (1 + e**2)]])
    assert_allclose(w[0, 0], expected_w, rtol=1e-14)
    expected_out = 3.0 * (expected_w @ np.array([1.0, 2.0]))
    assert_allclose(attention(x, p, w)[0, :, 0], expected_out, rtol=1e-14)


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    tokens=st.integers(2, 6),
    heads=st.sampled_from([1, 2]),
    data=st.data(),
)
def test_attention_is_permutation_equivariant(seed, tokens, heads, data):
    perm = np.array(data.draw(st.permutations(range(tokens))))
    rng = np.random.default_rng(seed)
    d = 2 * heads
    x = rng.normal(size=(2, tokens, d))
    p = random_attention(rng, d, heads, scale=2.0)
    out = attention(x, p, attention_weights(x, p))
    xp = x[:, perm]
    out_perm = attention(xp, p, attention_weights(xp, p))
    assert_allclose(out_perm, out[:, perm], rtol=1e-10, atol=1e-12)
    # The weights permute on both axes.
    assert_allclose(attention_weights(xp, p), attention_weights(x, p)[:, :, perm][:, :, :, perm], atol=1e-12)


def test_causal_attention_is_not_permutation_equivariant():
    """Guards the equivariance test above: a mask carries position, so reversing changes outputs."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(1, 4, 2))
    p = random_attention(rng, 2, 1, scale=2.0)
    perm = np.arange(4)[::-1]
    out = attention(x, p, attention_weights(x, p, causal=True))
    xp = x[:, perm]
    out_perm = attention(xp, p, attention_weights(xp, p, causal=True))
    assert not np.allclose(out_perm, out[:, perm])


# ------------------------------------------------------------------------------------- feed-forward

FFN_X = np.array([[[1.0, -2.0]]])
FFN_W_IN = np.array([[1.0, 2.0], [3.0, -1.0]])
FFN_B_IN = np.array([0.5, -1.0])
FFN_W_OUT = np.array([[2.0, 0.0], [1.0, -1.0]])
FFN_B_OUT = np.array([0.1, 0.2])
# Pre-activation by hand: x W_in = (1*1 + -2*3, 1*2 + -2*-1) = (-5, 4); + b_in = (-4.5, 3).


def test_feed_forward_relu_hand_computed():
    p = FeedForwardParams(FFN_W_IN, FFN_B_IN, FFN_W_OUT, FFN_B_OUT, activation="relu")
    # relu(-4.5, 3) = (0, 3); (0, 3) W_out = (3, -3); + b_out = (3.1, -2.8)
    assert_allclose(feed_forward(FFN_X, p)[0, 0], [3.1, -2.8], rtol=1e-14)


def test_feed_forward_gelu_hand_computed():
    p = FeedForwardParams(FFN_W_IN, FFN_B_IN, FFN_W_OUT, FFN_B_OUT, activation="gelu")
    # tanh-approximate GELU: 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))
    g_neg = -5.136737411925996e-06  # gelu(-4.5)
    g_pos = 2.996362607918227  # gelu(3)
    expected = np.array([g_neg * 2.0 + g_pos * 1.0 + 0.1, g_neg * 0.0 + g_pos * -1.0 + 0.2])
    assert_allclose(feed_forward(FFN_X, p)[0, 0], expected, rtol=1e-12)


def test_gelu_is_the_tanh_approximation_not_erf():
    # Reference values of the tanh approximation; exact erf-GELU(1) = 0.8413447460685429 differs at 1e-4.
    reference = [0.8411919906082768, -0.15880800939172324, 0.0]
    assert_allclose(gelu(np.array([1.0, -1.0, 0.0])), reference, rtol=1e-12)
    z = np.linspace(-6, 6, 49)
    by_formula = np.array(
        [0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3))) for v in z]
    )
    assert_allclose(gelu(z), by_formula, rtol=1e-12, atol=1e-15)
    assert abs(gelu(np.array(1.0)) - 0.8413447460685429) > 1e-4


def test_relu_hand_computed():
    assert_allclose(relu(np.array([-2.0, 0.0, 0.5])), [0.0, 0.0, 0.5], rtol=0, atol=0)


@PROPERTY
@given(
    x=tokens_array(st.tuples(st.integers(1, 2), st.integers(1, 4), st.just(3)), st.floats(-10, 10)),
    seed=st.integers(0, 999),
)
def test_feed_forward_is_position_wise(x, seed):
    rng = np.random.default_rng(seed)
    p = FeedForwardParams(
        rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 3)), rng.normal(size=3), "gelu"
    )
    out = feed_forward(x, p)
    for b in range(x.shape[0]):
        for t in range(x.shape[1]):
            single = feed_forward(x[b : b + 1, t : t + 1], p)[0, 0]
            assert_allclose(out[b, t], single, rtol=1e-12, atol=1e-9)


# ------------------------------------------------------------------------------------------- heads


@PROPERTY
@given(
    batch=st.integers(1, 3),
    tokens=st.integers(1, 5),
    heads=st.integers(1, 4),
    d_head=st.integers(1, 4),
    seed=st.integers(0, 999),
)
def test_split_merge_heads_round_trip(batch, tokens, heads, d_head, seed):
    x = np.random.default_rng(seed).normal(size=(batch, tokens, heads * d_head))
    split = split_heads(x, heads)
    assert split.shape == (batch, heads, tokens, d_head)
    for h in range(heads):
        assert np.array_equal(split[:, h], x[:, :, h * d_head : (h + 1) * d_head])
    assert np.array_equal(merge_heads(split), x)


def test_split_heads_rejects_indivisible_width():
    with pytest.raises(ValueError):
        split_heads(np.zeros((1, 2, 5)), 2)
