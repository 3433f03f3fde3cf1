"""Tests of blockstab.gradients: every hand-written backward against central finite differences.

Each check draws a fixed random ``G`` and differentiates the scalar loss ``L = sum(G * output)``,
so ``dL/d(output) = G``. Sizes are tiny (d_model 4, 3 tokens, batch 2) to keep this quick.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose

from blockstab.block import (
    RESIDUAL_SCALES,
    BlockParams,
    StackConfig,
    StackParams,
    post_ln_block,
    pre_ln_block,
    residual_add,
    run_stack,
    run_stream,
)
from blockstab.gradients import (
    FORWARD_SHARE,
    attention_backward,
    feed_forward_backward,
    layer_gradient_norms,
    layer_norm_backward,
    normalize_backward,
    parameter_norm,
    post_ln_block_backward,
    pre_ln_block_backward,
    residual_add_backward,
    rms_norm_backward,
    stack_backward,
)
from blockstab.init import random_block, random_stack, random_tokens
from blockstab.sublayers import NORM_KINDS, NormParams, attention, attention_weights, feed_forward, normalize
from support.oracles import arrays

PROPERTY = settings(max_examples=40, deadline=None)
SHAPE = (2, 3, 4)  # batch, tokens, d_model
STEP = 1e-6
TOLERANCE = 1e-6


def numerical_gradient(loss, a: np.ndarray) -> np.ndarray:
    """Central differences of ``loss()`` in every entry of ``a`` (perturbed in place, then restored)."""
    grad = np.empty_like(a)
    for i in np.ndindex(a.shape):
        kept = a[i]
        a[i] = kept + STEP
        up = loss()
        a[i] = kept - STEP
        down = loss()
        a[i] = kept
        grad[i] = (up - down) / (2 * STEP)
    return grad


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    scale = np.linalg.norm(a) + np.linalg.norm(b)
    return 0.0 if scale == 0 else float(np.linalg.norm(a - b) / scale)


def assert_gradients(forward, backward, x, params, grad_out=None):
    """Check ``backward(x, params, G) -> (grad_x, grads)`` against finite differences of ``forward``."""
    G = np.random.default_rng(99).normal(size=forward(x, params).shape) if grad_out is None else grad_out
    grad_x, grads = backward(x, params, G)

    def loss():
        return float(np.sum(G * forward(x, params)))

    analytic = [("x", x, grad_x), *((n, a, g) for (n, a), (_, g) in zip(arrays(params), arrays(grads), strict=True))]
    errors = {name: relative_error(numerical_gradient(loss, a), g) for name, a, g in analytic}
    assert max(errors.values()) < TOLERANCE, errors


def random_norm(rng, d=SHAPE[-1]) -> NormParams:
    return NormParams(rng.normal(1.0, 0.3, d), rng.normal(0.0, 0.3, d))


def random_biased_block(rng, heads=2, activation="gelu") -> BlockParams:
    """A small block with nonzero biases and non-trivial norm gains, so every gradient is exercised."""
    block = random_block(rng, SHAPE[-1], heads, hidden=8, activation=activation)
    ffn = dataclasses.replace(block.feed_forward, b_in=rng.normal(0, 0.3, 8), b_out=rng.normal(0, 0.3, SHAPE[-1]))
    return BlockParams(block.attention, ffn, random_norm(rng), random_norm(rng))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def x(rng):
    return rng.normal(0.5, 1.5, size=SHAPE)


# ------------------------------------------------------------------------------------ sublayers


@pytest.mark.parametrize("kind", NORM_KINDS)
@pytest.mark.parametrize("eps", [1e-5, 0.5])
def test_normalize_backward(rng, x, kind, eps):
    assert_gradients(
        lambda x, p: normalize(x, p, kind, eps),
        lambda x, p, g: normalize_backward(x, p, kind, eps, g),
        x,
        random_norm(rng),
    )


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_backward(rng, x, activation):
    p = random_biased_block(rng, activation=activation).feed_forward
    assert_gradients(feed_forward, feed_forward_backward, x, p)


@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward(rng, x, heads, causal):
    p = random_biased_block(rng, heads=heads).attention
    assert_gradients(
        lambda x, p: attention(x, p, attention_weights(x, p, causal)),
        lambda x, p, g: attention_backward(x, p, causal, g),
        x,
        p,
    )


@pytest.mark.parametrize("residual_scale", RESIDUAL_SCALES)
@pytest.mark.parametrize("residual", [True, False])
def test_residual_add_backward(rng, x, residual_scale, residual):
    cfg = StackConfig(depth=3, residual=residual, residual_scale=residual_scale)
    branch = rng.normal(size=SHAPE)
    G = rng.normal(size=SHAPE)
    grad_x, grad_branch = residual_add_backward(G, cfg)
    loss = lambda: float(np.sum(G * residual_add(x, branch, cfg)))  # noqa: E731
    assert relative_error(numerical_gradient(loss, x), grad_x) < TOLERANCE
    assert relative_error(numerical_gradient(loss, branch), grad_branch) < TOLERANCE


# ------------------------------------------------------------------------------------- blocks

BLOCK_PAIRS = {"post": (post_ln_block, post_ln_block_backward), "pre": (pre_ln_block, pre_ln_block_backward)}


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("norm", NORM_KINDS)
@pytest.mark.parametrize(
    "residual, residual_scale, causal, heads, activation",
    [(True, "one", True, 2, "gelu"), (False, "one", False, 1, "relu"), (True, "deepnorm", False, 2, "relu")],
)
def test_block_backward(rng, x, placement, norm, residual, residual_scale, causal, heads, activation):
    cfg = StackConfig(depth=4, residual=residual, norm=norm, placement=placement,
                      residual_scale=residual_scale, causal=causal)
    block, block_backward = BLOCK_PAIRS[placement]
    assert_gradients(
        lambda x, p: block(x, p, cfg)[0][-1],
        lambda x, p, g: block_backward(x, p, cfg, g),
        x,
        random_biased_block(rng, heads, activation),
    )


# -------------------------------------------------------------------------------------- stacks


def small_stack(rng, depth: int, shared: bool) -> StackParams:
    blocks = tuple(random_biased_block(rng) for _ in range(1 if shared else depth))
    return StackParams(blocks, random_norm(rng))


@pytest.mark.parametrize(
    "placement, norm, shared, residual_scale",
    [
        ("post", "layernorm", False, "one"),
        ("post", "rmsnorm", True, "deepnorm"),
        ("pre", "layernorm", False, "one"),
        ("pre", "rmsnorm", True, "inv_sqrt_depth"),
        ("pre", "none", False, "one"),
    ],
)
def test_stack_backward(rng, x, placement, norm, shared, residual_scale):
    """The input gradient and dL/d the StackParams (shared weights: the sum over layers), final norm included."""
    cfg = StackConfig(depth=3, norm=norm, placement=placement, residual_scale=residual_scale, causal=True)
    assert_gradients(
        lambda x, p: run_stack(x, p, cfg).output,
        lambda x, p, g: (lambda grads: (grads.stream[0], grads.params))(stack_backward(x, p, cfg, g)),
        x,
        small_stack(rng, cfg.depth, shared),
    )


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_stream_gradient_is_the_rest_of_the_stack(rng, x, placement):
    """dL/d(stream[i]) is the input gradient of the stack cut to its last depth - i blocks."""
    cfg = StackConfig(depth=3, norm="layernorm", placement=placement)
    params = small_stack(rng, cfg.depth, shared=False)
    G = rng.normal(size=SHAPE)
    grads = stack_backward(x, params, cfg, G)
    stream = run_stream(x, params, cfg)
    for i in range(cfg.depth):
        rest = StackParams(params.blocks[i:], params.final_norm)
        tail = stack_backward(stream[i], rest, dataclasses.replace(cfg, depth=cfg.depth - i), G)
        assert_allclose(grads.stream[i], tail.stream[0], rtol=1e-12, atol=1e-14)
    if placement == "post":
        assert_allclose(grads.stream[-1], G)


def test_shared_weights_report_each_layers_own_gradient(rng, x):
    """A shared stack's per-layer gradients equal those of an unshared stack holding copies of the block."""
    cfg = StackConfig(depth=3, norm="rmsnorm", placement="pre")
    shared = small_stack(rng, cfg.depth, shared=True)
    copies = StackParams(shared.blocks * cfg.depth, shared.final_norm)
    G = rng.normal(size=SHAPE)
    from_shared, from_copies = stack_backward(x, shared, cfg, G), stack_backward(x, copies, cfg, G)
    for (name, a), (_, b) in zip(arrays(from_shared.blocks), arrays(from_copies.blocks), strict=True):
        assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)
    assert len(from_shared.params.blocks) == 1 and len(from_copies.params.blocks) == cfg.depth
    layer_norms = layer_gradient_norms(from_shared)
    assert layer_norms["block"].shape == (cfg.depth,) and layer_norms["stream"].shape == (cfg.depth + 1,)
    assert not np.allclose(layer_norms["block"], layer_norms["block"][0])  # layers really differ


def test_layer_gradient_norms_are_frobenius_norms(rng, x):
    cfg = StackConfig(depth=3, norm="layernorm", placement="post")
    grads = stack_backward(x, small_stack(rng, cfg.depth, shared=False), cfg, rng.normal(size=SHAPE))
    norms = layer_gradient_norms(grads)
    assert_allclose(norms["ffn_w_out"], [np.linalg.norm(b.feed_forward.w_out) for b in grads.blocks])
    everything = [np.sqrt(sum(np.sum(a * a) for _, a in arrays(b))) for b in grads.blocks]
    assert_allclose(norms["block"], everything)
    assert_allclose(norms["block"] ** 2, norms["attention"] ** 2 + norms["feed_forward"] ** 2
                    + [sum(np.sum(a * a) for _, a in arrays((b.norm1, b.norm2))) for b in grads.blocks])
    assert_allclose(norms["stream"], np.linalg.norm(grads.stream.reshape(cfg.depth + 1, -1), axis=1))


# Scale safety: a gradient of 1e-170 squares to 0 in float64, one of 1e200 to inf; the norms must
# not square the values themselves. math.hypot (correctly scaled in Python >= 3.8) is the reference.

magnitudes = st.integers(-300, 300).map(lambda e: 10.0**e)
scaled_arrays = st.tuples(
    hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=6), elements=st.floats(-10, 10, allow_nan=False)),
    magnitudes,
).map(lambda pair: pair[0] * pair[1])


@PROPERTY
@given(a=scaled_arrays, b=scaled_arrays, c=scaled_arrays)
def test_parameter_norm_is_scale_safe_from_1e_minus_300_to_1e300(a, b, c):
    params = NormParams(a, b)
    expected = math.hypot(*a.ravel(), *b.ravel())
    assert parameter_norm(params) == pytest.approx(expected, rel=1e-13, abs=0.0)
    nested = BlockParams(params, NormParams(c, c), params, params)  # combined across nested dataclasses
    assert parameter_norm(nested) == pytest.approx(math.hypot(expected, expected, expected,
                                                              math.hypot(*c.ravel(), *c.ravel())), rel=1e-13)


@pytest.mark.parametrize("value, size", [(1e-170, 12), (3e-300, 7), (1e200, 12), (1e300, 1000), (5e-324, 4)])
def test_parameter_norm_of_tiny_and_huge_arrays(value, size):
    """Each of these squares to 0 or inf; the norm is value * sqrt(size) all the same."""
    assert value * value in (0.0, math.inf) or value == 1e300
    a = np.full(size, value)
    assert parameter_norm(a) == pytest.approx(value * math.sqrt(size), rel=1e-14)
    assert parameter_norm(NormParams(a, -a)) == pytest.approx(value * math.sqrt(2 * size), rel=1e-14)


def test_parameter_norm_overflows_only_when_the_norm_itself_does():
    assert parameter_norm(np.array([1.5e308, 1.5e308])) == math.inf  # sqrt(2) 1.5e308 > float64 max 1.8e308
    assert parameter_norm(np.array([1e308, 1e308])) == pytest.approx(math.sqrt(2) * 1e308, rel=1e-15)
    assert parameter_norm(np.array([1e308, 1e307])) == pytest.approx(math.hypot(1e308, 1e307), rel=1e-15)
    assert parameter_norm(NormParams(np.array([1.5e308]), np.array([1.5e308]))) == math.inf
    assert parameter_norm(np.array([1.0, np.inf])) == math.inf
    assert math.isnan(parameter_norm(np.array([1.0, np.nan])))
    assert parameter_norm(np.zeros(3)) == 0.0


def test_layer_gradient_norms_do_not_underflow(rng, x):
    """A readout scaled by 2^-600 scales every gradient exactly by 2^-600 (a power of two, nothing
    underflows before the squares would): the norms must scale with it, stream included."""
    cfg = StackConfig(depth=3, norm="layernorm", placement="post")
    params, G = small_stack(rng, cfg.depth, shared=False), rng.normal(size=SHAPE)
    plain = layer_gradient_norms(stack_backward(x, params, cfg, G))
    tiny = layer_gradient_norms(stack_backward(x, params, cfg, G * 2.0**-600))
    for name, values in plain.items():
        assert np.all(values > 0)
        assert_allclose(tiny[name], values * 2.0**-600, rtol=1e-15, err_msg=name)


# ----------------------------------------------------------------- attention-only blocks and stacks


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("norm", NORM_KINDS)
@pytest.mark.parametrize("residual, residual_scale, causal", [(True, "one", True), (False, "one", False),
                                                              (True, "deepnorm", False)])
def test_attention_only_block_backward(rng, x, placement, norm, residual, residual_scale, causal):
    """Dong et al. 2021's "pure attention" block (``feed_forward=False``): the unused FFN sub-block
    gets an exactly zero gradient, which is also what finite differences give."""
    cfg = StackConfig(depth=4, residual=residual, norm=norm, placement=placement, residual_scale=residual_scale,
                      causal=causal, feed_forward=False)
    block, block_backward = BLOCK_PAIRS[placement]
    p = random_biased_block(rng)
    assert_gradients(lambda x, p: block(x, p, cfg)[0][-1], lambda x, p, g: block_backward(x, p, cfg, g), x, p)
    _, grads = block_backward(x, p, cfg, rng.normal(size=SHAPE))
    for name, a in arrays((grads.feed_forward, grads.norm2)):
        assert not a.any(), name


@pytest.mark.parametrize("placement, norm, shared", [("post", "layernorm", False), ("pre", "rmsnorm", False),
                                                     ("pre", "layernorm", True), ("post", "none", True)])
def test_attention_only_stack_backward(rng, x, placement, norm, shared):
    cfg = StackConfig(depth=3, norm=norm, placement=placement, feed_forward=False)
    assert_gradients(
        lambda x, p: run_stack(x, p, cfg).output,
        lambda x, p, g: (lambda grads: (grads.stream[0], grads.params))(stack_backward(x, p, cfg, g)),
        x,
        small_stack(rng, cfg.depth, shared),
    )


# -------------------------------------------------------------------------- the checks can fail


def test_finite_difference_check_catches_a_wrong_gradient(rng, x):
    p = random_biased_block(rng).feed_forward

    def slightly_wrong(x, p, g):
        grad_x, grads = feed_forward_backward(x, p, g)
        return grad_x, dataclasses.replace(grads, w_out=grads.w_out * (1 + 1e-4))

    with pytest.raises(AssertionError, match="w_out"):
        assert_gradients(feed_forward, slightly_wrong, x, p)


# ----------------------------------------------------------------------------------- properties


@PROPERTY
@given(
    seed=st.integers(0, 2**16),
    placement=st.sampled_from(["post", "pre"]),
    norm=st.sampled_from(NORM_KINDS),
    a=st.floats(-3, 3),
    b=st.floats(-3, 3),
)
def test_backward_is_linear_in_grad_out(seed, placement, norm, a, b):
    """A vector-Jacobian product is linear in the vector: the Jacobian does not depend on it."""
    rng = np.random.default_rng(seed)
    cfg = StackConfig(depth=2, norm=norm, placement=placement, causal=True)
    x, g1, g2 = rng.normal(size=(3, *SHAPE))
    p = random_biased_block(rng)
    backward = BLOCK_PAIRS[placement][1]
    (x1, p1), (x2, p2), (x12, p12) = (backward(x, p, cfg, g) for g in (g1, g2, a * g1 + b * g2))
    assert_allclose(x12, a * x1 + b * x2, rtol=1e-9, atol=1e-9)
    for (name, u), (_, v), (_, w) in zip(arrays(p1), arrays(p2), arrays(p12), strict=True):
        assert_allclose(w, a * u + b * v, rtol=1e-9, atol=1e-9, err_msg=name)


rows = hnp.arrays(np.float64, st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(2, 6)),
                  elements=st.floats(-10, 10))


@PROPERTY
@given(x=rows, seed=st.integers(0, 2**16), eps=st.sampled_from([1e-8, 1e-5, 1e-2]))
def test_norm_input_gradients_ignore_shift_and_scale(x, seed, eps):
    """LayerNorm's output is unchanged by adding a constant to a row, so its input gradient sums to
    zero over features. Both norms are scale-invariant but for eps: scaling a row by (1 + t) moves
    the output by t * eps/(var + eps) * n, so the gradient along the (centred) row is exactly
    eps/(var + eps) * sum(grad_out * gain * n), which vanishes as eps -> 0."""
    rng = np.random.default_rng(seed)
    d = x.shape[-1]
    p, G = random_norm(rng, d), rng.normal(size=x.shape)
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred**2).mean(axis=-1)
    # Rows whose spread is not lost to rounding when the mean is subtracted (as in test_sublayers).
    conditioned = np.sqrt(variance) > 1e-6 * np.abs(x).max(axis=-1)
    for backward, along, spread, checked in (
        (layer_norm_backward, centred, variance, conditioned),
        (rms_norm_backward, x, (x**2).mean(axis=-1), np.ones_like(conditioned)),
    ):
        grad_x, _ = backward(x, p, eps, G)
        n = along / np.sqrt(spread[..., None] + eps)
        expected = eps / (spread + eps) * (G * p.gain * n).sum(axis=-1)
        size = np.linalg.norm(grad_x, axis=-1) * np.linalg.norm(along, axis=-1)
        error = np.abs((grad_x * along).sum(axis=-1) - expected)
        assert np.all((error <= 1e-9 * (size + np.abs(expected)) + 1e-12)[checked])
    grad_x, _ = layer_norm_backward(x, p, eps, G)
    assert np.all(np.abs(grad_x.sum(axis=-1)) <= 1e-9 * np.abs(grad_x).sum(axis=-1) + 1e-12)


# ---------------------------------------------------------------------- progress and divergence


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_run_stream_is_the_traces_stream(rng, x, placement):
    cfg = StackConfig(depth=3, norm="rmsnorm", placement=placement)
    params = small_stack(rng, cfg.depth, shared=False)
    seen = []
    assert_allclose(run_stream(x, params, cfg, progress=seen.append), run_stack(x, params, cfg).stream, rtol=0)
    assert_allclose(seen, [1 / 3, 2 / 3, 1.0])



def test_progress_rises_to_one_and_can_cancel(rng, x):
    cfg = StackConfig(depth=3, placement="pre")
    params, G = small_stack(rng, cfg.depth, shared=False), rng.normal(size=SHAPE)
    seen = []
    stack_backward(x, params, cfg, G, progress=seen.append)
    assert len(seen) == 2 * cfg.depth and np.all(np.diff(seen) > 0) and seen[-1] == 1.0
    assert seen[cfg.depth - 1] == pytest.approx(FORWARD_SHARE)

    class Cancelled(Exception):
        pass

    def cancel(fraction):
        if fraction > 0.5:
            raise Cancelled

    with pytest.raises(Cancelled):
        stack_backward(x, params, cfg, G, progress=cancel)


def test_grad_output_must_match_the_output(rng, x):
    with pytest.raises(ValueError, match="shape"):
        stack_backward(x, small_stack(rng, 2, True), StackConfig(depth=2), np.ones((2, 3, 5)))


def test_diverging_stack_gives_inf_or_nan_without_warnings():
    cfg = StackConfig(depth=60, norm="none", placement="pre")
    params = random_stack(seed=0, depth=cfg.depth, d_model=8, heads=2, branch_gain=4.0)
    x = random_tokens(seed=1, batch=1, tokens=4, d_model=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grads = stack_backward(x, params, cfg, np.ones_like(x))
    assert not np.all(np.isfinite(grads.stream))


# ------------------------------------------------------------------------------ a known result


def last_ffn_w_out_gradient(placement: str, depth: int) -> float:
    """Mean over three initialisations of ||dL/dW^2|| in the last block, for a fixed random readout."""
    x = random_tokens(seed=1, batch=2, tokens=8, d_model=32)
    G = np.random.default_rng(2).normal(size=x.shape)
    cfg = StackConfig(depth=depth, norm="layernorm", placement=placement)
    return np.mean([
        layer_gradient_norms(stack_backward(x, random_stack(seed, depth, 32, heads=4), cfg, G))["ffn_w_out"][-1]
        for seed in range(3)
    ])


def test_last_layer_gradient_follows_xiong_theorem_1():
    """Xiong et al. 2020, Theorem 1: at initialisation the gradient of the last FFN weight is
    O(d sqrt(ln d)) for Post-LN, whatever the depth, and O(d sqrt(ln d / L)) for Pre-LN.
    So going from 4 to 64 blocks should leave Post-LN's roughly unchanged and shrink Pre-LN's
    by about sqrt(16) = 4."""
    post = last_ffn_w_out_gradient("post", 64) / last_ffn_w_out_gradient("post", 4)
    pre = last_ffn_w_out_gradient("pre", 64) / last_ffn_w_out_gradient("pre", 4)
    assert 0.67 < post < 1.5
    assert 1 / 8 < pre < 1 / 2
