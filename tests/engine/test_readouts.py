"""Tests of blockstab.readouts: vector sizes, angles, token collapse and per-block readouts."""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal

from blockstab.block import StackConfig, first_blocks, run_stack
from blockstab.init import random_stack, random_tokens
from blockstab.lesson import ACTION_TOKEN, lesson_embeddings, lesson_params
from blockstab.readouts import (
    DISTINCT_DEGREES,
    Readouts,
    angle_degrees,
    composite_norm,
    cosine,
    distinct_tokens,
    feature_moments,
    first_readouts,
    mean_pairwise_cosine,
    nearest_token,
    readouts,
    relative_residual,
    rms,
    settled_block,
    smallest_pairwise_angle,
    token_groups,
    vector_norm,
)

PROPERTY = settings(max_examples=60, deadline=None)

matrices = hnp.arrays(
    np.float64,
    st.tuples(st.integers(2, 6), st.integers(1, 5)),
    elements=st.floats(-100, 100, allow_nan=False),
)


# ------------------------------------------------------------------------------ sizes and angles


def test_vector_norm_and_rms_hand_computed():
    v = np.array([[3.0, 4.0], [1.0, 0.0]])
    assert_allclose(vector_norm(v), [5.0, 1.0], rtol=1e-15)
    assert_allclose(rms(v), [5.0 / math.sqrt(2.0), 1.0 / math.sqrt(2.0)], rtol=1e-15)


@pytest.mark.parametrize(
    "a, b, degrees",
    [
        ([1.0, 0.0], [0.0, 2.0], 90.0),
        ([1.0, 1.0, 0.0], [-1.0, 1.0, 5.0], 90.0),
        ([1.0, 0.0], [3.0, 0.0], 0.0),
        ([1.0, 2.0], [-2.0, -4.0], 180.0),
        ([1.0, 0.0], [1.0, 1.0], 45.0),
        ([1.0, 0.0], [-1.0, math.sqrt(3.0)], 120.0),
    ],
)
def test_cosine_and_angle_basics(a, b, degrees):
    a, b = np.array(a), np.array(b)
    assert_allclose(cosine(a, b), math.cos(math.radians(degrees)), atol=1e-15)
    assert_allclose(angle_degrees(a, b), degrees, atol=1e-6)
    assert_allclose(angle_degrees(b, a), degrees, atol=1e-6)


@pytest.mark.parametrize("radians", [1e-9, 1e-6, 3e-4])
def test_angle_degrees_is_precise_near_0_and_180(radians):
    a = np.array([1.0, 0.0])
    b = np.array([math.cos(radians), math.sin(radians)])
    assert_allclose(angle_degrees(a, b), math.degrees(radians), rtol=1e-6)
    assert_allclose(angle_degrees(a, -b), 180.0 - math.degrees(radians), rtol=1e-12)


def test_cosine_of_zero_vector_is_nan():
    assert np.isnan(cosine(np.zeros(3), np.ones(3)))


@PROPERTY
@given(v=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-1e3, 1e3)), c=st.floats(1e-3, 1e3))
def test_angle_to_a_positive_multiple_is_zero_not_nan(v, c):
    assume(np.any(np.abs(v) > 1e-100))
    # Rounding can push the cosine a hair above 1; the angle must still be a number.
    assert_allclose(angle_degrees(v, c * v), 0.0, atol=1e-5)
    assert_allclose(angle_degrees(v, -c * v), 180.0, atol=1e-5)


def test_cosine_broadcasts_over_leading_axes():
    a = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [2.0, 0.0]]])
    b = np.array([1.0, 0.0])
    assert_allclose(cosine(a, b), [[1.0, 0.0], [1.0 / math.sqrt(2.0), 1.0]], atol=1e-15)


# ------------------------------------------------------------------------------- token collapse


def test_composite_norm_hand_computed():
    m = np.array([[1.0, -2.0, 3.0], [0.0, 0.0, -1.0]])
    # |M| column sums (1, 2, 4) -> ||M||_1 = 4; row sums (6, 1) -> ||M||_inf = 6.
    assert_allclose(composite_norm(m), math.sqrt(4.0 * 6.0), rtol=1e-15)
    # (Using one of the two norms twice would give sqrt(16) or sqrt(36).)
    assert_allclose(composite_norm(m.T), math.sqrt(6.0 * 4.0), rtol=1e-15)  # transpose-invariant
    stacked = np.stack([m, 2.0 * m])
    assert_allclose(composite_norm(stacked), [math.sqrt(24.0), 2.0 * math.sqrt(24.0)], rtol=1e-15)


def test_relative_residual_hand_computed():
    x = np.array([[1.0, 0.0, 5.0], [3.0, 1.0, 0.0]])
    # token mean (2, 0.5, 2.5); residual [[-1, -0.5, 2.5], [1, 0.5, -2.5]]
    # residual: column sums (2, 1, 5) -> 5, row sums (4, 4) -> 4: sqrt(20)
    # x: column sums (4, 1, 5) -> 5, row sums (6, 4) -> 6: sqrt(30)
    assert_allclose(relative_residual(x), math.sqrt(20.0 / 30.0), rtol=1e-14)


@PROPERTY
@given(v=hnp.arrays(np.float64, st.integers(1, 5), elements=st.floats(-1e3, 1e3)), tokens=st.integers(1, 6))
def test_relative_residual_is_zero_for_identical_tokens(v, tokens):
    assume(np.abs(v).max() > 1e-100)
    x = np.tile(v, (tokens, 1))
    assert_allclose(relative_residual(x), 0.0, atol=1e-13)


@PROPERTY
@given(x=matrices, c=st.one_of(st.floats(1e-3, 1e3), st.floats(-1e3, -1e-3)))
def test_relative_residual_is_scale_invariant(x, c):
    assume(np.abs(x).max() > 1e-3)
    assert_allclose(relative_residual(c * x), relative_residual(x), rtol=1e-10, atol=1e-13)


def test_relative_residual_broadcasts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 2, 4, 5))
    batched = relative_residual(x)
    assert batched.shape == (3, 2)
    for i in range(3):
        for j in range(2):
            assert_allclose(batched[i, j], relative_residual(x[i, j]), rtol=1e-14)
    assert np.all(batched > 0.0)


def test_mean_pairwise_cosine_parallel_tokens_is_one():
    v = np.array([0.3, -1.2, 2.0])
    x = np.array([1.0, 2.5, 0.1, 7.0])[:, None] * v
    assert_allclose(mean_pairwise_cosine(x), 1.0, rtol=1e-14)


def test_mean_pairwise_cosine_hand_cases():
    assert_allclose(mean_pairwise_cosine(np.eye(3)), 0.0, atol=1e-15)  # orthogonal
    assert_allclose(mean_pairwise_cosine(np.array([[1.0, 2.0], [-1.0, -2.0]])), -1.0, rtol=1e-14)
    # Three unit tokens at 0, 90 and 180 degrees: pair cosines 0, -1, 0 -> mean -1/3.
    x = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert_allclose(mean_pairwise_cosine(x), -1.0 / 3.0, rtol=1e-14)


@PROPERTY
@given(x=matrices)
def test_mean_pairwise_cosine_matches_hand_loop(x):
    assume(np.all(vector_norm(x) > 1e-3))
    tokens = x.shape[0]
    pairs = [
        float(x[i] @ x[j]) / (math.sqrt(float(x[i] @ x[i])) * math.sqrt(float(x[j] @ x[j])))
        for i in range(tokens)
        for j in range(tokens)
        if i != j
    ]
    assert_allclose(mean_pairwise_cosine(x), sum(pairs) / len(pairs), rtol=1e-10, atol=1e-12)


# Scale safety: finite inputs far beyond 1e+-154 must not under- or overflow inside the readouts.


@pytest.mark.parametrize("scale", [1e-170, 1e160])
def test_relative_residual_is_scale_invariant_at_extreme_magnitudes(scale):
    m = np.array([[1.0, 2.0], [3.0, -1.0]])
    assert_allclose(relative_residual(scale * m), relative_residual(m), rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-170, 1e160])
def test_cosine_and_norm_at_extreme_magnitudes(scale):
    a, b = np.array([3.0, 4.0]), np.array([1.0, 0.0])
    assert_allclose(vector_norm(scale * a), 5.0 * scale, rtol=1e-12)
    assert_allclose(cosine(scale * a, b), 0.6, rtol=1e-12)
    assert_allclose(cosine(scale * a, (1.0 / scale) * b), 0.6, rtol=1e-12)
    assert_allclose(angle_degrees(scale * a, b), math.degrees(math.acos(0.6)), rtol=1e-12)
    x = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    assert_allclose(mean_pairwise_cosine(scale * x), mean_pairwise_cosine(x), rtol=1e-12)


def test_vector_norm_is_infinite_for_an_infinite_entry_and_nan_for_nan():
    assert_array_equal(vector_norm(np.array([[1.0, np.inf], [-np.inf, 0.0], [1.0, 2.0]])), [np.inf, np.inf, np.sqrt(5)])
    assert np.isnan(vector_norm(np.array([1.0, np.nan])))


def _vanishing_trace():
    """No residual, no norm, BERT-scale weights: the stream shrinks ~10x per block but stays finite."""
    depth = 190
    x = random_tokens(0, 2, 6, 16)
    params = random_stack(0, depth, 16, heads=2, scheme="bert")
    return run_stack(x, params, StackConfig(depth=depth, residual=False, norm="none"))


def test_vanishing_stream_stays_finite_and_nonzero():
    """Precondition of the test below (so that one fails only because of the readouts)."""
    stream = _vanishing_trace().stream
    assert np.all(np.isfinite(stream))
    for block in stream:
        for sequence in block:
            assert np.all(np.abs(sequence).max(axis=-1) > 0.0)  # every token is a non-zero vector
    assert np.abs(stream[-1]).max() < 1e-160


def test_readouts_of_a_vanishing_but_finite_stream_are_numbers():
    r = readouts(_vanishing_trace(), 5)
    assert np.all(np.isfinite(r.relative_residual))
    assert np.all(np.isfinite(r.mean_pairwise_cosine))
    assert np.all(np.isfinite(r.action_cosine_to_input))
    assert np.all(np.isfinite(r.scenario_angle))


def test_feature_moments():
    mean, var = feature_moments(np.array([[1.0, 2.0, 3.0, 6.0]]))
    assert_allclose(mean, [3.0], rtol=1e-15)
    assert_allclose(var, [3.5], rtol=1e-15)  # population variance: (4 + 1 + 0 + 9) / 4


# ------------------------------------------------------------------------------------- readouts()


def _trace(placement="post", norm="layernorm", batch=2, depth=3, tokens=5, d=4, eps=1e-5):
    x = random_tokens(1, batch, tokens, d)
    params = random_stack(1, depth, d, heads=2, hidden=8)
    return run_stack(x, params, StackConfig(depth=depth, norm=norm, placement=placement, eps=eps))


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_readouts_shapes_and_consistency(placement):
    depth, batch, tokens, d, action = 3, 2, 5, 4, 4
    trace = _trace(placement, batch=batch, depth=depth, tokens=tokens, d=d)
    r = readouts(trace, action)
    assert r.token_norm.shape == (depth + 1, batch, tokens)
    assert r.token_rms.shape == (depth + 1, batch, tokens)
    for series in (r.action_norm, r.action_cosine_to_input, r.relative_residual, r.mean_pairwise_cosine):
        assert series.shape == (depth + 1, batch)
    assert r.scenario_angle.shape == (depth + 1,)

    stream = trace.stream
    assert_allclose(r.token_norm, np.linalg.norm(stream, axis=-1), rtol=1e-13)
    assert_allclose(r.token_rms, r.token_norm / math.sqrt(d), rtol=1e-13)
    assert_array_equal(r.action_norm, r.token_norm[:, :, action])
    assert_allclose(r.action_cosine_to_input[0], 1.0, rtol=1e-13)
    for i in range(depth + 1):
        for b in range(batch):
            assert_allclose(
                r.action_cosine_to_input[i, b], cosine(stream[i, b, action], stream[0, b, action]), rtol=1e-13
            )
            assert_allclose(r.relative_residual[i, b], relative_residual(stream[i, b]), rtol=1e-13)
        assert_allclose(
            r.scenario_angle[i], angle_degrees(stream[i, 0, action], stream[i, 1, action]), rtol=1e-13
        )
    assert np.all(np.isfinite(r.scenario_angle))
    assert np.all((r.scenario_angle >= 0.0) & (r.scenario_angle <= 180.0))


def test_readouts_use_the_requested_action_token():
    trace = _trace()
    r0, r2 = readouts(trace, 0), readouts(trace, 2)
    assert_array_equal(r0.action_norm, r0.token_norm[:, :, 0])
    assert_array_equal(r2.action_norm, r2.token_norm[:, :, 2])
    assert not np.allclose(r0.action_norm, r2.action_norm)


def test_scenario_angle_is_nan_for_one_sequence():
    r = readouts(_trace(batch=1, depth=2), 1)
    assert r.scenario_angle.shape == (3,)
    assert np.all(np.isnan(r.scenario_angle))
    assert np.all(np.isfinite(r.action_norm))


@pytest.mark.parametrize(
    "placement, pairs",
    [
        ("post", (("attention_residual", "attention_norm"), ("ffn_residual", "ffn_norm"))),
        ("pre", (("input", "attention_norm"), ("attention_residual", "ffn_norm"))),
    ],
)
@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_norm_moments_after_layernorm(placement, pairs, eps):
    depth, batch, tokens = 3, 2, 5
    trace = _trace(placement, "layernorm", batch=batch, depth=depth, tokens=tokens, eps=eps)
    moments = readouts(trace, 0).norm_moments
    assert len(moments) == 2
    for (before, after, (mean_b, var_b), (mean_a, var_a)), (want_before, want_after) in zip(
        moments, pairs, strict=True
    ):
        assert (before, after) == (want_before, want_after)
        for arr in (mean_b, var_b, mean_a, var_a):
            assert arr.shape == (depth, batch, tokens)
        assert_array_equal(mean_b, trace.stage(before).mean(axis=-1))
        assert_array_equal(var_b, trace.stage(before).var(axis=-1))
        assert_allclose(mean_a, 0.0, atol=1e-12)
        # Unit gain: variance after = var / (var + eps), i.e. 1 minus at most eps / var.
        assert_allclose(var_a, var_b / (var_b + eps), rtol=1e-10)
        assert np.all(var_a < 1.0)
        assert np.all(1.0 - var_a <= eps / var_b)


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_norm_moments_after_rmsnorm_have_unit_mean_square(placement):
    eps = 1e-5
    trace = _trace(placement, "rmsnorm", eps=eps)
    for before, _after, (mean_b, var_b), (mean_a, var_a) in readouts(trace, 0).norm_moments:
        ms_before = var_b + mean_b**2
        assert_allclose(var_a + mean_a**2, ms_before / (ms_before + eps), rtol=1e-10)
        assert not np.allclose(mean_a, 0.0), before  # RMSNorm does not centre


# ------------------------------------------------------------------------------ distinct tokens


def test_token_groups_hand_computed():
    x = np.array([[1.0, 0.0], [2.0, 1e-4], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])
    # 1 and 2 point the same way (0.003 deg apart); the two zero vectors are equal; the rest stand alone
    assert_array_equal(token_groups(x), [0, 0, 2, 3, 3, 5])
    assert distinct_tokens(x) == 4
    assert smallest_pairwise_angle(x[[0, 2, 5]]) == pytest.approx(90.0)


def test_a_chain_of_close_tokens_is_one_group():
    angles = np.radians([0.0, 0.8, 1.6, 2.4, 90.0])
    x = np.column_stack([np.cos(angles), np.sin(angles)])
    assert_array_equal(token_groups(x), [0, 0, 0, 0, 4])  # every neighbour < 1 deg, the ends 2.4 deg apart


def test_a_non_finite_vector_makes_the_count_unknown():
    x = np.array([[[1.0, 0.0], [np.inf, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])
    counts = distinct_tokens(x)
    assert np.isnan(counts[0]) and counts[1] == 2


def test_nearest_token_names_the_closest_other_token():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.2], [-1.0, 0.0]])
    angle, index = nearest_token(x, 0)
    assert index == 2 and angle == pytest.approx(np.degrees(np.arctan(0.2)))
    angle, index = nearest_token(np.zeros((3, 2)), 1)
    assert np.isnan(angle) and index == -1


@PROPERTY
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 7), st.just(2)),
                  elements=st.floats(-10, 10, allow_nan=False).filter(lambda v: v == 0 or abs(v) > 1e-6)),
       st.permutations(range(7)))
def test_distinct_count_ignores_order_and_scale_and_matches_the_smallest_angle(x, order):
    order = [i for i in order if i < len(x)]
    count = distinct_tokens(x)
    assert 1 <= count <= len(x)
    assert distinct_tokens(x[order]) == count
    assert distinct_tokens(x * 1e200) == count and distinct_tokens(x * 1e-200) == count
    smallest = smallest_pairwise_angle(x)
    if np.isfinite(smallest) and smallest >= DISTINCT_DEGREES and np.all(np.any(x != 0, axis=-1)):
        assert count == len(x)
    if count == len(x) and not np.isnan(smallest):
        assert smallest >= DISTINCT_DEGREES


@PROPERTY
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.just(2)), elements=st.floats(-5, 5, allow_nan=False)),
       st.integers(0, 5))
def test_nearest_token_is_the_minimum_over_the_others(x, token):
    token = token % len(x)
    angle, index = nearest_token(x, token)
    others = [angle_degrees(x[token], x[j]) for j in range(len(x)) if j != token]
    finite = [a for a in others if not np.isnan(a)]
    if finite:
        assert angle == pytest.approx(min(finite), abs=1e-9)
        assert angle_degrees(x[token], x[index]) == pytest.approx(angle, abs=1e-9)
    else:
        assert np.isnan(angle) and index == -1


def test_settled_block_is_where_the_picture_stops_turning():
    angles = np.radians([[0, 90], [30, 90], [31, 90], [31.05, 90], [31.05, 90]])
    stream = np.stack([np.cos(angles), np.sin(angles)], axis=-1)  # (5 blocks, 2 tokens, 2)
    assert settled_block(stream) == 2  # 30 -> 31 turns 1 deg; from block 2 on, less than 0.1 deg
    assert settled_block(np.zeros((4, 3, 2))) == 0
    assert settled_block(stream, tolerance=0.01) == 3  # 31 -> 31.05 turns 0.05 deg: still moving at 0.01


def test_a_stream_that_keeps_growing_in_one_direction_has_not_settled():
    grown = np.array([1.0, 2.0, 2.1, 2.2, 2.2])[:, None, None] * np.array([[0.6, 0.8], [1.0, 0.0]])
    assert settled_block(grown) == 3  # 2.1 -> 2.2 grows 5 %: the picture still moves; then equal
    assert settled_block(grown * (1 + 1e-5) ** np.arange(5)[:, None, None]) == 3  # 0.001 %: too small to see
    assert settled_block(np.array([1.0, 2.0, 4.0])[:, None, None] * np.ones((3, 1, 2))) == 2


@settings(max_examples=30, deadline=None)
@given(residual=st.booleans(), norm=st.sampled_from(("none", "rmsnorm", "layernorm")),
       placement=st.sampled_from(("post", "pre")), depth=st.integers(1, 99))
def test_a_shallower_lesson_stack_is_the_first_blocks_of_a_deeper_one(residual, norm, placement, depth):
    """The lesson repeats one block with no depth-dependent scaling, so a stack ``depth`` blocks
    deep is, bit for bit, the first ``depth`` blocks of the 100-block stack, and so is every
    per-block readout (what lets a view of any depth be cut from the deepest run)."""
    tokens = lesson_embeddings()
    deep, shallow = (run_stack(tokens, lesson_params(), StackConfig(depth=d, residual=residual, norm=norm,
                                                                    placement=placement)) for d in (100, depth))
    assert_array_equal(shallow.values, deep.values[:depth])
    assert_array_equal(shallow.stream, deep.stream[:depth + 1])
    deep_readouts, shallow_readouts = readouts(deep, ACTION_TOKEN), readouts(shallow, ACTION_TOKEN)
    for name in ("token_norm", "action_norm", "action_cosine_to_input", "scenario_angle", "distinct_tokens",
                 "smallest_pairwise_angle", "action_nearest_angle"):
        assert_array_equal(getattr(shallow_readouts, name), getattr(deep_readouts, name)[:depth + 1], err_msg=name)


@settings(max_examples=30, deadline=None)
@given(residual=st.booleans(), norm=st.sampled_from(("none", "rmsnorm", "layernorm")),
       placement=st.sampled_from(("post", "pre")), depth=st.integers(1, 100))
def test_first_blocks_is_the_shallower_run_without_running_it(residual, norm, placement, depth):
    params, tokens = lesson_params(), lesson_embeddings()
    deep, shallow = (run_stack(tokens, params, StackConfig(depth=d, residual=residual, norm=norm, placement=placement))
                     for d in (100, depth))
    cut = first_blocks(deep, params, depth)
    assert cut.config == shallow.config
    for name in ("values", "attention", "output"):
        assert_array_equal(getattr(cut, name), getattr(shallow, name), err_msg=name)
    expected, got = readouts(shallow, ACTION_TOKEN), first_readouts(readouts(deep, ACTION_TOKEN), depth)
    for field in fields(Readouts):
        if field.name != "norm_moments":
            assert_array_equal(getattr(got, field.name), getattr(expected, field.name), err_msg=field.name)
    assert len(got.norm_moments) == len(expected.norm_moments)
    for ours, theirs in zip(got.norm_moments, expected.norm_moments, strict=True):
        assert ours[:2] == theirs[:2]
        for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3], strict=True):
            assert_array_equal(a, b)


def test_first_blocks_refuses_a_stack_that_changes_with_depth():
    params, tokens = lesson_params(), lesson_embeddings()
    scaled = run_stack(tokens, params, StackConfig(depth=4, residual_scale="inv_sqrt_depth"))
    with pytest.raises(ValueError, match="changes with depth"):
        first_blocks(scaled, params, 2)
    with pytest.raises(ValueError, match="from 1 to 4"):
        first_blocks(run_stack(tokens, params, StackConfig(depth=4)), params, 5)
