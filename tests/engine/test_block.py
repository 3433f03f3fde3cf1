"""Tests of blockstab.block (configuration, blocks, stacks, traces) and blockstab.init."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from blockstab.block import (
    MAX_DEPTH,
    PLACEMENTS,
    POST_STAGES,
    PRE_STAGES,
    BlockParams,
    StackConfig,
    StackParams,
    deepnorm_beta,
    post_ln_block,
    pre_ln_block,
    residual_add,
    run_stack,
)
from blockstab.init import bert_std, random_block, random_stack, random_tokens
from blockstab.sublayers import (
    AttentionParams,
    FeedForwardParams,
    NormParams,
    attention,
    attention_weights,
    normalize,
)

PROPERTY = settings(max_examples=50, deadline=None)


# ------------------------------------------------------------------------------------ StackConfig


@pytest.mark.parametrize("depth", [0, -1, MAX_DEPTH + 1, 10**6, 2.0, "3", None, 1.5])
def test_config_rejects_bad_depth(depth):
    with pytest.raises(ValueError):
        StackConfig(depth=depth)


@pytest.mark.parametrize("depth", [1, 2, MAX_DEPTH])
def test_config_accepts_depth_range(depth):
    assert StackConfig(depth=depth).depth == depth


@pytest.mark.parametrize(
    "field, value",
    [
        ("norm", "batchnorm"),
        ("norm", "LayerNorm"),
        ("norm", ""),
        ("placement", "middle"),
        ("placement", "Pre"),
        ("residual_scale", "sqrt"),
        ("residual_scale", "none"),
        ("eps", 0.0),
        ("eps", -1e-5),
        ("eps", float("nan")),
    ],
)
def test_config_rejects_unknown_choices_and_bad_eps(field, value):
    with pytest.raises(ValueError):
        StackConfig(**{field: value})


def test_config_is_frozen():
    cfg = StackConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.depth = 3


@pytest.mark.parametrize(
    "depth, scale, skip, branch",
    [
        (8, "one", 1.0, 1.0),
        (8, "inv_sqrt_depth", 1.0, 1.0 / math.sqrt(8.0)),
        (8, "deepnorm", 2.0, 1.0),  # (2*8)^(1/4) = 2
        (2, "deepnorm", math.sqrt(2.0), 1.0),  # (2*2)^(1/4) = sqrt 2
        (100, "inv_sqrt_depth", 1.0, 0.1),
        (1, "deepnorm", 2.0**0.25, 1.0),
    ],
)
def test_skip_and_branch_scales(depth, scale, skip, branch):
    cfg = StackConfig(depth=depth, residual_scale=scale)
    assert_allclose(cfg.skip_scale, skip, rtol=1e-14)
    assert_allclose(cfg.branch_scale, branch, rtol=1e-14)
    off = StackConfig(depth=depth, residual_scale=scale, residual=False)
    assert off.skip_scale == 0.0
    assert_allclose(off.branch_scale, branch, rtol=1e-14)


@pytest.mark.parametrize("depth, beta", [(2, 0.5), (32, 0.25), (1, 8.0**-0.25), (6, 48.0**-0.25)])
def test_deepnorm_beta(depth, beta):
    assert_allclose(deepnorm_beta(depth), beta, rtol=1e-14)


def test_stage_names_per_placement():
    assert StackConfig(placement="post").stages == (
        "input", "attention", "attention_residual", "attention_norm",
        "feed_forward", "ffn_residual", "ffn_norm",
    )  # fmt: skip
    assert StackConfig(placement="pre").stages == (
        "input", "attention_norm", "attention", "attention_residual",
        "ffn_norm", "feed_forward", "ffn_residual",
    )  # fmt: skip
    assert StackConfig(placement="post").stages == POST_STAGES
    assert StackConfig(placement="pre").stages == PRE_STAGES


# ------------------------------------------------------------------ independent block implementation


def ref_norm(v, gain, bias, kind, eps):
    """One vector, straight from the formulas."""
    d = len(v)
    if kind == "none":
        return v.copy()
    if kind == "layernorm":
        mean = sum(v) / d
        var = sum((vi - mean) ** 2 for vi in v) / d
        sd = math.sqrt(var + eps)
        return np.array([(vi - mean) / sd * g + b for vi, g, b in zip(v, gain, bias, strict=True)])
    ms = sum(vi * vi for vi in v) / d
    return np.array([vi / math.sqrt(ms + eps) * g for vi, g in zip(v, gain, strict=True)])


def ref_attention(xs, p: AttentionParams, causal):
    """One sequence ``(T, d)``: explicit loops over heads, query and key tokens."""
    tokens, d = xs.shape
    dh = d // p.heads
    concat = np.zeros((tokens, d))
    for h in range(p.heads):
        cols = slice(h * dh, (h + 1) * dh)
        q = xs @ p.w_query[:, cols]
        k = xs @ p.w_key[:, cols]
        v = xs @ p.w_value[:, cols]
        for i in range(tokens):
            allowed = range(i + 1) if causal else range(tokens)
            scores = [float(q[i] @ k[j]) / math.sqrt(dh) for j in allowed]
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            total = sum(e)
            concat[i, cols] = sum((ej / total) * v[j] for ej, j in zip(e, allowed, strict=True))
    return concat @ p.w_out


def ref_ffn(xs, p: FeedForwardParams):
    out = np.zeros_like(xs)
    for t, v in enumerate(xs):
        pre = v @ p.w_in + p.b_in
        if p.activation == "relu":
            act = np.array([max(z, 0.0) for z in pre])
        else:
            act = np.array(
                [0.5 * z * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3))) for z in pre]
            )
        out[t] = act @ p.w_out + p.b_out
    return out


def ref_block(xs, p: BlockParams, placement, norm, s, a, eps, causal):
    """The docstring's equations for one sequence; returns the seven stages in trace order."""

    def n(rows, params):
        return np.array([ref_norm(r, params.gain, params.bias, norm, eps) for r in rows])

    if placement == "post":
        attn = ref_attention(xs, p.attention, causal)
        attn_sum = s * xs + a * attn
        h = n(attn_sum, p.norm1)
        ffn = ref_ffn(h, p.feed_forward)
        ffn_sum = s * h + a * ffn
        y = n(ffn_sum, p.norm2)
        return [xs, attn, attn_sum, h, ffn, ffn_sum, y]
    x_norm = n(xs, p.norm1)
    attn = ref_attention(x_norm, p.attention, causal)
    h = s * xs + a * attn
    h_norm = n(h, p.norm2)
    ffn = ref_ffn(h_norm, p.feed_forward)
    y = s * h + a * ffn
    return [xs, x_norm, attn, h, h_norm, ffn, y]


def varied_block(rng, d, heads, activation):
    """Random weights with non-trivial biases and norm gains/biases (unlike init.random_block)."""

    def m(rows, cols, scale=1.0):
        return rng.normal(0.0, scale / math.sqrt(rows), size=(rows, cols))

    hidden = 3 * d
    return BlockParams(
        AttentionParams(m(d, d, 1.5), m(d, d, 1.5), m(d, d), m(d, d), heads=heads),
        FeedForwardParams(
            m(d, hidden), rng.normal(0, 0.3, hidden), m(hidden, d), rng.normal(0, 0.3, d), activation
        ),
        NormParams(rng.uniform(0.5, 1.5, d), rng.normal(0, 0.2, d)),
        NormParams(rng.uniform(0.5, 1.5, d), rng.normal(0, 0.2, d)),
    )


@pytest.mark.parametrize(
    "placement, norm, scale, causal, activation, eps",
    [
        ("post", "layernorm", "one", False, "relu", 1e-5),
        ("post", "rmsnorm", "deepnorm", True, "gelu", 1e-3),
        ("pre", "layernorm", "inv_sqrt_depth", True, "relu", 1e-5),
        ("pre", "rmsnorm", "deepnorm", False, "gelu", 0.1),
    ],
)
def test_stack_matches_independent_reimplementation(placement, norm, scale, causal, activation, eps):
    rng = np.random.default_rng(2024)
    depth, d, heads = 2, 4, 2
    blocks = tuple(varied_block(rng, d, heads, activation) for _ in range(depth))
    final = NormParams(rng.uniform(0.5, 1.5, d), rng.normal(0, 0.2, d))
    x = rng.normal(size=(2, 3, d))
    cfg = StackConfig(
        depth=depth, norm=norm, placement=placement, residual_scale=scale, causal=causal, eps=eps
    )
    trace = run_stack(x, StackParams(blocks, final), cfg)
    s, a = cfg.skip_scale, cfg.branch_scale
    for b in range(x.shape[0]):
        xs = x[b]
        for i, block in enumerate(blocks):
            stages = ref_block(xs, block, placement, norm, s, a, eps, causal)
            for k, name in enumerate(cfg.stages):
                assert_allclose(trace.stage(name)[i, b], stages[k], rtol=1e-10, atol=1e-12, err_msg=name)
            xs = stages[-1]
        if placement == "pre":  # one final norm after the stack
            xs = np.array([ref_norm(r, final.gain, final.bias, norm, eps) for r in xs])
        expected_out = xs
        assert_allclose(trace.output[b], expected_out, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("placement, block_fn", [("post", post_ln_block), ("pre", pre_ln_block)])
def test_single_block_function_matches_reimplementation(placement, block_fn):
    rng = np.random.default_rng(5)
    p = varied_block(rng, 6, 3, "gelu")
    cfg = StackConfig(depth=3, norm="layernorm", placement=placement, residual_scale="inv_sqrt_depth")
    x = rng.normal(size=(1, 4, 6))
    stages, weights = block_fn(x, p, cfg)
    expected = ref_block(x[0], p, placement, "layernorm", 1.0, 1.0 / math.sqrt(3.0), cfg.eps, False)
    assert len(stages) == 7
    for got, want, name in zip(stages, expected, cfg.stages, strict=True):
        assert_allclose(got[0], want, rtol=1e-10, atol=1e-12, err_msg=name)
    assert weights.shape == (1, 3, 4, 4)
    assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12)


# ------------------------------------------------------------------------------------ zero branch


def zero_branch_params(rng, d, depth):
    blocks = []
    for _ in range(depth):
        blocks.append(
            BlockParams(
                AttentionParams(
                    w_query=rng.normal(size=(d, d)),
                    w_key=rng.normal(size=(d, d)),
                    w_value=np.zeros((d, d)),
                    w_out=np.zeros((d, d)),
                    heads=2,
                ),
                FeedForwardParams(np.zeros((d, 8)), np.zeros(8), np.zeros((8, d)), np.zeros(d)),
                NormParams(rng.uniform(0.5, 2.0, d), rng.normal(size=d)),
                NormParams(rng.uniform(0.5, 2.0, d), rng.normal(size=d)),
            )
        )
    return StackParams(tuple(blocks), NormParams(rng.uniform(0.5, 2.0, d), rng.normal(size=d)))


@pytest.mark.parametrize("placement", ["pre", "post"])
@pytest.mark.parametrize("scale", ["one", "inv_sqrt_depth"])
def test_zero_branch_with_residual_is_identity(placement, scale):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 4)) * 3.0
    cfg = StackConfig(depth=3, norm="none", placement=placement, residual_scale=scale)
    trace = run_stack(x, zero_branch_params(rng, 4, 3), cfg)
    assert_array_equal(trace.output, x)
    for i in range(3):
        assert_array_equal(trace.stream[i + 1], x)
        assert_array_equal(trace.stage("attention")[i], 0.0)
        assert_array_equal(trace.stage("feed_forward")[i], 0.0)


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_zero_branch_deepnorm_scales_by_alpha_squared_per_block(placement):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 3, 4))
    depth = 2
    cfg = StackConfig(depth=depth, norm="none", placement=placement, residual_scale="deepnorm")
    trace = run_stack(x, zero_branch_params(rng, 4, depth), cfg)
    alpha = (2.0 * depth) ** 0.25
    assert_allclose(trace.output, alpha ** (2 * depth) * x, rtol=1e-14)


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_zero_branch_without_residual_is_zero(placement):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 3, 4))
    cfg = StackConfig(depth=2, norm="none", placement=placement, residual=False)
    trace = run_stack(x, zero_branch_params(rng, 4, 2), cfg)
    assert_array_equal(trace.output, 0.0)


# ---------------------------------------------------------------------------- Pre-LN telescoping


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    depth=st.integers(1, 8),
    norm=st.sampled_from(["layernorm", "rmsnorm", "none"]),
    scale=st.sampled_from(["one", "inv_sqrt_depth"]),
    heads=st.sampled_from([1, 2]),
    shared=st.booleans(),
    causal=st.booleans(),
)
def test_pre_ln_stream_telescopes(seed, depth, norm, scale, heads, shared, causal):
    d = 4
    params = random_stack(seed, depth, d, heads=heads, hidden=8, shared=shared, activation="gelu")
    x = random_tokens(seed, 2, 3, d)
    cfg = StackConfig(depth=depth, norm=norm, placement="pre", residual_scale=scale, causal=causal)
    trace = run_stack(x, params, cfg)
    branches = trace.stage("attention") + trace.stage("feed_forward")  # (depth, B, T, d)
    a = cfg.branch_scale
    stream = trace.stream
    size = np.abs(stream).max() + np.abs(branches).max()
    assert_allclose(stream[-1], x + a * branches.sum(axis=0), rtol=1e-9, atol=1e-10 * size)
    # ... and after every block, not only at the end.
    partial = x + a * np.cumsum(branches, axis=0)
    assert_allclose(stream[1:], partial, rtol=1e-9, atol=1e-10 * size)


def test_post_ln_stream_does_not_telescope():
    """Guards the telescoping test: in Post-LN the normalization breaks the sum."""
    params = random_stack(0, 3, 4, hidden=8)
    x = random_tokens(0, 1, 3, 4)
    trace = run_stack(x, params, StackConfig(depth=3, norm="layernorm", placement="post"))
    branches = trace.stage("attention") + trace.stage("feed_forward")
    assert not np.allclose(trace.stream[-1], x + branches.sum(axis=0))


# -------------------------------------------------------------------------------------- the trace


@pytest.fixture
def small_trace():
    params = random_stack(4, 3, 4, heads=2, hidden=8)
    x = random_tokens(4, 2, 5, 4)
    return x, run_stack(x, params, StackConfig(depth=3, norm="layernorm", placement="pre"))


def test_trace_arrays_are_read_only(small_trace):
    _, trace = small_trace
    for array in (trace.values, trace.attention, trace.output, trace.stage("attention")):
        with pytest.raises(ValueError):
            array[...] = 0.0
        with pytest.raises(ValueError):
            array.flat[0] = 1.0


def test_trace_does_not_alias_the_input(small_trace):
    x, trace = small_trace
    before = trace.values.copy()
    x[...] = 123.0
    assert_array_equal(trace.values, before)


def test_trace_shapes_and_stream(small_trace):
    x, trace = small_trace
    assert trace.values.shape == (3, 7, 2, 5, 4)
    assert trace.attention.shape == (3, 2, 2, 5, 5)
    assert trace.output.shape == (2, 5, 4)
    stream = trace.stream
    assert stream.shape == (4, 2, 5, 4)
    assert_array_equal(stream[0], random_tokens(4, 2, 5, 4))
    for i in range(3):
        assert_array_equal(stream[i + 1], trace.stage("ffn_residual")[i])
        assert_array_equal(trace.stage("input")[i], stream[i])
    # Pre-LN output is the final norm of the last block's output.
    final = NormParams.identity(4)
    assert_allclose(trace.output, normalize(stream[-1], final, "layernorm", 1e-5), rtol=1e-14)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("depth", [1, 4])
def test_stream_shape_and_first_entry(placement, depth):
    x = random_tokens(9, 3, 2, 6)
    trace = run_stack(x, random_stack(9, depth, 6, heads=3), StackConfig(depth=depth, placement=placement))
    assert trace.stream.shape == (depth + 1, 3, 2, 6)
    assert_array_equal(trace.stream[0], x)
    assert trace.stages == StackConfig(placement=placement).stages
    assert trace.values.shape[:2] == (depth, 7)
    if placement == "post":
        assert_array_equal(trace.output, trace.stream[-1])


# ------------------------------------------------------------------------- shared/per-block weights


def test_shared_and_per_block_weights():
    depth = 4
    shared = random_stack(0, depth, 4, shared=True)
    per_block = random_stack(0, depth, 4)
    assert len(shared.blocks) == 1
    assert len(per_block.blocks) == depth
    assert all(shared.block(i) is shared.blocks[0] for i in range(depth))
    assert per_block.block(2) is per_block.blocks[2]
    x = random_tokens(0, 1, 3, 4)
    cfg = StackConfig(depth=depth)
    # One shared block equals the same block repeated explicitly.
    repeated = StackParams(shared.blocks * depth, shared.final_norm)
    assert_array_equal(run_stack(x, shared, cfg).values, run_stack(x, repeated, cfg).values)
    # Per-block weights really are used: replacing blocks 2..4 by block 1 changes the trace.
    first_only = StackParams(per_block.blocks[:1], per_block.final_norm)
    a = run_stack(x, per_block, cfg).values
    b = run_stack(x, first_only, cfg).values
    assert_array_equal(a[0], b[0])
    assert not np.allclose(a[1:], b[1:])


@pytest.mark.parametrize("count, depth", [(2, 3), (4, 3), (2, 1)])
def test_mismatched_block_count_raises(count, depth):
    params = random_stack(0, count, 4)
    with pytest.raises(ValueError):
        run_stack(random_tokens(0, 1, 2, 4), params, StackConfig(depth=depth))


@pytest.mark.parametrize(
    "x",
    [
        np.full((1, 2, 4), np.nan),
        np.array([[[0.0, 1.0, np.nan, 2.0]]]),
        np.array([[[0.0, 1.0, np.inf, 2.0]]]),
        np.zeros((2, 4)),
        np.zeros((1, 1, 2, 4)),
        np.zeros(4),
    ],
    ids=["all-nan", "one-nan", "inf", "2d", "4d", "1d"],
)
def test_run_stack_rejects_bad_input(x):
    with pytest.raises(ValueError):
        run_stack(x, random_stack(0, 1, 4), StackConfig())


def test_run_stack_accepts_nested_lists_and_ints():
    trace = run_stack([[[1, 2], [3, -1]]], random_stack(0, 1, 2), StackConfig())
    assert trace.values.dtype == np.float64
    assert_array_equal(trace.stream[0], [[[1.0, 2.0], [3.0, -1.0]]])


# ---------------------------------------------------------------------------------- determinism


def test_same_seed_gives_identical_trace():
    cfg = StackConfig(depth=3, norm="layernorm", placement="pre", causal=True)

    def run(seed):
        return run_stack(random_tokens(seed, 2, 4, 8), random_stack(seed, 3, 8, heads=2, scheme="bert"), cfg)

    t1, t2, t3 = run(17), run(17), run(18)
    assert_array_equal(t1.values, t2.values)
    assert_array_equal(t1.attention, t2.attention)
    assert_array_equal(t1.output, t2.output)
    assert not np.allclose(t1.values, t3.values)


# ------------------------------------------------------------------------------------ init schemes


def _matrices(block: BlockParams):
    a, f = block.attention, block.feed_forward
    return {"q": a.w_query, "k": a.w_key, "v": a.w_value, "o": a.w_out, "in": f.w_in, "out": f.w_out}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bert_scheme_std(seed):
    params = random_stack(seed, 2, 64, heads=4, scheme="bert")
    pooled = np.concatenate([m.ravel() for b in params.blocks for m in _matrices(b).values()])
    n = pooled.size
    std = 0.02 * math.sqrt(768 / 64)  # BERT's 0.02 at width 768, gain-matched to width 64
    # Sample std of n normal draws has relative standard error ~ 1/sqrt(2n); allow 5 of those.
    assert abs(pooled.std() / std - 1.0) < 5.0 / math.sqrt(2 * n)
    assert abs(pooled.mean()) < 5.0 * std / math.sqrt(n)


def test_bert_scheme_is_berts_std_at_berts_width():
    assert bert_std(768) == 0.02


def test_xiong_scheme_zeroes_query_and_key_only():
    block = random_stack(0, 1, 16, heads=2, scheme="xiong").blocks[0]
    matrices = _matrices(block)
    assert not matrices["q"].any() and not matrices["k"].any()
    for name in ("v", "o", "in", "out"):
        assert abs(matrices[name].std() * math.sqrt(matrices[name].shape[0]) - 1.0) < 0.2, name


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fan_in_scheme_std(seed):
    d, hidden = 64, 256
    block = random_stack(seed, 1, d, heads=4, hidden=hidden).blocks[0]
    fan_in = {"q": d, "k": d, "v": d, "o": d, "in": d, "out": hidden}
    for name, m in _matrices(block).items():
        expected = 1.0 / math.sqrt(fan_in[name])
        assert abs(m.std() / expected - 1.0) < 5.0 / math.sqrt(2 * m.size), name
        assert abs(m.mean()) < 5.0 * expected / math.sqrt(m.size), name
    assert_array_equal(block.feed_forward.b_in, np.zeros(hidden))
    assert_array_equal(block.feed_forward.b_out, np.zeros(d))
    assert_array_equal(block.norm1.gain, np.ones(d))
    assert_array_equal(block.norm2.bias, np.zeros(d))


def test_branch_gain_scales_value_output_and_ffn_only():
    plain = random_stack(3, 1, 8, heads=2).blocks[0]
    scaled = random_stack(3, 1, 8, heads=2, branch_gain=deepnorm_beta(4)).blocks[0]
    beta = deepnorm_beta(4)
    for name in ("q", "k"):
        assert_array_equal(_matrices(scaled)[name], _matrices(plain)[name])
    for name in ("v", "o", "in", "out"):
        assert_allclose(_matrices(scaled)[name], beta * _matrices(plain)[name], rtol=1e-15)


def test_init_rejects_bad_scheme_and_heads():
    with pytest.raises(ValueError):
        random_stack(0, 2, 8, scheme="xavier")
    with pytest.raises(ValueError):
        random_stack(0, 2, 10, heads=3)
    with pytest.raises(ValueError):
        random_block(np.random.default_rng(0), 6, 4, 12)


# ------------------------------------------------------------------------------------- large run


@pytest.mark.parametrize("placement, norm", [("post", "layernorm"), ("pre", "rmsnorm")])
def test_large_model_runs_finite(placement, norm):
    d, tokens, heads = 512, 128, 8
    params = random_stack(0, 2, d, heads=heads)
    x = random_tokens(0, 1, tokens, d)
    trace = run_stack(x, params, StackConfig(depth=2, norm=norm, placement=placement))
    assert trace.output.shape == (1, tokens, d)
    assert trace.attention.shape == (2, 1, heads, tokens, tokens)
    assert np.all(np.isfinite(trace.values))
    assert np.all(np.isfinite(trace.output))
    assert_allclose(trace.attention.sum(axis=-1), 1.0, atol=1e-10)


@pytest.mark.parametrize(
    "kwargs",
    [{"depth": True}, {"residual": "off"}, {"causal": 1}, {"eps": "a"}, {"eps": None}],
)
def test_stack_config_rejects_values_of_the_wrong_type(kwargs):
    with pytest.raises(ValueError):
        StackConfig(**kwargs)


def test_stack_config_accepts_numpy_integers_for_depth():
    assert StackConfig(depth=np.int64(3)).depth == 3


def test_unknown_norm_kind_and_activation_are_refused():
    from blockstab.sublayers import FeedForwardParams, NormParams, normalize

    with pytest.raises(ValueError):
        normalize(np.ones((1, 2, 2)), NormParams.identity(2), "batchnorm", 1e-5)
    with pytest.raises(ValueError):
        FeedForwardParams(np.eye(2), np.zeros(2), np.eye(2), np.zeros(2), activation="tanh")


@pytest.mark.parametrize("heads", [0, -3])
def test_random_block_refuses_nonpositive_heads(heads):

    with pytest.raises(ValueError):
        random_block(np.random.default_rng(0), 6, heads, 8)


# ------------------------------------------------------------------------- attention-only stacks


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("residual", [True, False])
def test_attention_only_block_leaves_out_the_feed_forward_sub_block(placement, residual):
    """Dong et al.'s pure-attention network: each block is its attention sub-block alone, y = h."""
    x = random_tokens(2, 2, 5, 8)
    params = random_stack(2, 3, 8, heads=2)
    cfg = StackConfig(depth=3, residual=residual, norm="layernorm", placement=placement, feed_forward=False)
    trace = run_stack(x, params, cfg)
    expected = x
    for i in range(3):
        p = params.block(i)
        inner = normalize(expected, p.norm1, "layernorm", cfg.eps) if placement == "pre" else expected
        attn = attention(inner, p.attention, attention_weights(inner, p.attention))
        summed = residual_add(expected, attn, cfg)
        expected = normalize(summed, p.norm1, "layernorm", cfg.eps) if placement == "post" else summed
        assert_allclose(trace.stream[i + 1], expected, rtol=1e-12, atol=1e-12)
    assert not trace.stage("feed_forward").any()


def test_feed_forward_flag_must_be_boolean():
    with pytest.raises(ValueError):
        StackConfig(feed_forward="no")
