"""Tests of blockstab.lab: the Depth lab's setups, seeded blocks, curves, gradient norms and budget.

Every curve is checked against the engine's own reference path (``run_stack`` and
``blockstab.readouts`` for the forward, ``stack_backward`` and ``layer_gradient_norms`` for the
backward), on stacks small enough to run in milliseconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from blockstab.block import RESIDUAL_SCALES, deepnorm_beta, run_stack
from blockstab.gradients import backward_steps, layer_gradient_norms, stack_backward
from blockstab.init import INIT_SCHEMES, SeededBlocks, random_block
from blockstab.lab import (
    COMPARISONS,
    HEAD_COUNTS,
    MAX_LAB_DEPTH,
    MAX_SECONDS,
    MAX_STREAM_BYTES,
    TOKEN_COUNTS,
    WIDTHS,
    BudgetError,
    LabSetup,
    backward_norms,
    check_budget,
    compared_setups,
    depth_curves,
    forward_stream,
    seconds_per_block,
)
from blockstab.readouts import mean_pairwise_cosine, readouts, relative_residual, rms
from blockstab.sublayers import NORM_KINDS
from support.oracles import arrays

SMALL = LabSetup(d_model=8, tokens=4, heads=2, depth=3)
PROPERTY = settings(max_examples=30, deadline=None)


def assert_same_arrays(a, b) -> None:
    """Two parameter dataclasses hold equal arrays in every field."""
    pairs = list(zip(arrays(a), arrays(b), strict=True))
    assert pairs
    for (name, x), (_, y) in pairs:
        assert_array_equal(x, y, err_msg=name)


# ------------------------------------------------------------------------------------ validation


@pytest.mark.parametrize("fields", [
    {"d_model": 7}, {"d_model": 1024}, {"tokens": 3}, {"tokens": 256}, {"heads": 3}, {"heads": 32},
    {"d_model": 2, "heads": 4}, {"d_model": 8, "heads": 16},
    {"seed": -1}, {"seed": 100}, {"seed": 1.5}, {"seed": "0"},
    {"depth": 0}, {"depth": MAX_LAB_DEPTH + 1}, {"depth": 2.5}, {"depth": True},
    {"init": "he"}, {"placement": "middle"}, {"norm": "batchnorm"}, {"residual_scale": "two"},
    {"residual": "yes"}, {"feed_forward": 1}, {"embedding": "gpt"},
], ids=lambda f: ",".join(f"{k}={v!r}" for k, v in f.items()))
def test_a_bad_setup_is_refused(fields):
    with pytest.raises(ValueError):
        LabSetup(**fields)


def test_every_listed_size_is_accepted():
    for width in WIDTHS:
        for heads in HEAD_COUNTS:
            if heads <= width:
                assert LabSetup(d_model=width, heads=heads, tokens=TOKEN_COUNTS[0], depth=1).config.depth == 1
    assert LabSetup(depth=MAX_LAB_DEPTH, seed=99).depth == MAX_LAB_DEPTH


# ---------------------------------------------------------------------------------- seeded blocks


@pytest.mark.parametrize("scheme", INIT_SCHEMES)
def test_seeded_blocks_are_drawn_from_seed_and_index(scheme):
    blocks = SeededBlocks(seed=5, depth=4, d_model=8, heads=2, hidden=32, scheme=scheme, branch_gain=0.5)
    assert len(blocks) == 4 and len(list(blocks)) == 4
    for i in range(4):
        assert_same_arrays(blocks[i], blocks[i])  # read again: drawn again, identically
        expected = random_block(np.random.default_rng((5, i)), 8, 2, 32, scheme, "relu", 0.5)
        assert_same_arrays(blocks[i], expected)
    assert not np.array_equal(blocks[0].attention.w_value, blocks[1].attention.w_value)


@pytest.mark.parametrize("index", [-1, 4, 100])
def test_seeded_blocks_outside_the_stack_raise_index_error(index):
    with pytest.raises(IndexError):
        SeededBlocks(seed=0, depth=4, d_model=8, heads=2, hidden=32)[index]


@pytest.mark.parametrize("scale", RESIDUAL_SCALES)
def test_a_setups_params_are_its_seeded_blocks(scale):
    setup = replace(SMALL, residual_scale=scale, seed=7, init="bert")
    gain = deepnorm_beta(setup.depth) if scale == "deepnorm" else 1.0
    assert setup.branch_gain == gain
    params = setup.params
    assert len(params.blocks) == setup.depth
    for i in range(setup.depth):
        expected = random_block(np.random.default_rng((7, i)), 8, 2, 32, "bert", "relu", gain)
        assert_same_arrays(params.block(i), expected)
    assert_array_equal(params.final_norm.gain, np.ones(8))
    assert_array_equal(params.final_norm.bias, np.zeros(8))


def test_input_and_readout_depend_on_the_seed_only():
    a, b = LabSetup(seed=3, depth=2), LabSetup(seed=3, depth=40, placement="pre")
    assert_array_equal(a.input_tokens(), b.input_tokens())
    assert_array_equal(a.readout_direction(), b.readout_direction())
    assert a.input_tokens().shape == (1, 32, 64)
    assert not np.array_equal(a.input_tokens(), replace(a, seed=4).input_tokens())
    assert not np.array_equal(a.input_tokens() / np.sqrt(a.tokens), a.readout_direction())


def test_bert_embedding_tokens_are_layernorm_of_word_position_and_type():
    """Built independently: one word and one position vector per token, one type vector for all."""
    setup = replace(SMALL, embedding="bert", seed=5)
    rng = np.random.default_rng(5 + 1_000_003)
    std = 0.02 * np.sqrt(768 / setup.d_model)
    shape = (setup.tokens, setup.d_model)
    word, position = rng.normal(0, std, shape), rng.normal(0, std, shape)
    summed = word + position + rng.normal(0, std, setup.d_model)
    centred = summed - summed.mean(axis=-1, keepdims=True)
    expected = centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-12)
    tokens = setup.input_tokens()
    assert tokens.shape == (1, setup.tokens, setup.d_model)
    assert_allclose(tokens[0], expected, rtol=1e-12, atol=1e-14)
    assert_allclose(tokens.mean(axis=-1), 0.0, atol=1e-14)
    assert_allclose((tokens**2).mean(axis=-1), 1.0, rtol=1e-9)
    assert not np.array_equal(tokens, replace(setup, seed=6).input_tokens())
    assert_array_equal(forward_stream(replace(setup, depth=1))[0], tokens[0])


def test_the_shared_type_vector_makes_bert_tokens_start_less_spread():
    """A third of each token's variance is the type vector every token shares: the relative residual
    at the input is well below that of independent standard-normal tokens."""
    setup = LabSetup(d_model=64, tokens=32, heads=4, depth=1)
    for seed in range(3):
        normal = relative_residual(replace(setup, seed=seed).input_tokens()[0])
        bert = relative_residual(replace(setup, seed=seed, embedding="bert").input_tokens()[0])
        assert normal > 0.95 and 0.5 < bert < 0.7


# ------------------------------------------------------------------------------- forward and curves

WIRINGS = [
    {"placement": placement, "norm": norm, "residual": residual, "feed_forward": ffn}
    for placement in ("post", "pre") for norm in NORM_KINDS for residual in (True, False) for ffn in (True, False)
]
WIRING_IDS = ["{placement}-{norm}-{}-{}".format("res" if w["residual"] else "nores", "ffn" if w["feed_forward"]
              else "attn", **w) for w in WIRINGS]


@pytest.mark.parametrize("wiring", WIRINGS, ids=WIRING_IDS)
def test_forward_stream_is_run_stacks_stream(wiring):
    setup = replace(SMALL, **wiring)
    trace = run_stack(setup.input_tokens(), setup.params, setup.config)
    assert_array_equal(forward_stream(setup), trace.stream[:, 0])


@pytest.mark.parametrize("wiring", WIRINGS[::3], ids=WIRING_IDS[::3])
def test_curves_are_the_readouts_of_the_stream(wiring):
    setup = replace(SMALL, depth=5, **wiring)
    curves = depth_curves(setup, gradients=False)
    stream = forward_stream(setup)
    assert curves.setup == setup and curves.gradient_norm is None and curves.stream_gradient_norm is None
    assert_array_equal(curves.relative_residual, relative_residual(stream))
    assert_array_equal(curves.pairwise_cosine, mean_pairwise_cosine(stream))
    assert_array_equal(curves.stream_rms, rms(stream).mean(axis=-1))
    # ... and those of the lesson's readouts of the full trace (batch of one).
    reference = readouts(run_stack(setup.input_tokens(), setup.params, setup.config), action_token=0)
    assert_allclose(curves.relative_residual, reference.relative_residual[:, 0], rtol=1e-14)
    assert_allclose(curves.pairwise_cosine, reference.mean_pairwise_cosine[:, 0], rtol=1e-14)
    assert_allclose(curves.stream_rms, reference.token_rms[:, 0].mean(axis=-1), rtol=1e-14)


# --------------------------------------------------------------------------------- gradient norms


def reference_norms(setup: LabSetup) -> dict[str, np.ndarray]:
    grads = stack_backward(setup.input_tokens(), setup.params, setup.config, setup.readout_direction())
    return layer_gradient_norms(grads)


@pytest.mark.parametrize("wiring", [
    *WIRINGS,
    {"placement": "post", "residual_scale": "deepnorm"},
    {"placement": "post", "residual_scale": "deepnorm", "feed_forward": False},
    {"placement": "pre", "residual_scale": "inv_sqrt_depth", "norm": "rmsnorm"},
    {"placement": "pre", "residual_scale": "deepnorm", "init": "xiong"},
], ids=[*WIRING_IDS, "post-deepnorm", "post-deepnorm-attn", "pre-rms-inv-sqrt", "pre-deepnorm-xiong"])
def test_backward_norms_are_stack_backwards(wiring):
    setup = replace(SMALL, **wiring)
    weights, ffn_out, stream_grad = backward_norms(setup, forward_stream(setup))
    expected = reference_norms(setup)
    assert_allclose(weights, expected["block"], rtol=1e-12)
    assert_allclose(ffn_out, expected["ffn_w_out"], rtol=1e-12, atol=0)
    assert_allclose(stream_grad, expected["stream"], rtol=1e-12)
    assert np.all(weights > 0)
    assert np.all(ffn_out == 0) if not setup.feed_forward else np.all(ffn_out > 0)
    curves = depth_curves(setup)
    assert_array_equal(curves.gradient_norm, weights)
    assert_array_equal(curves.ffn_out_gradient_norm, ffn_out)
    assert_array_equal(curves.stream_gradient_norm, stream_grad)


# Issue #13's smallest case: a 2-wide Post-LN stack with BERT weights whose first gradients are
# ~1e-171, far below where their squares underflow (~1e-154).
TINY_GRADIENTS = LabSetup(d_model=2, tokens=2, heads=1, depth=18, init="bert", seed=0, placement="post",
                          norm="layernorm")


def test_tiny_gradient_norms_do_not_underflow():
    """The same backward with the readout scaled by 2^600 (exact: a power of two) lifts every
    gradient into the range where squares are safe; ours, times 2^600, must match those plain norms."""
    setup, lift = TINY_GRADIENTS, 2.0**600
    curves = depth_curves(setup)
    lifted = backward_steps(forward_stream(setup)[:, None], setup.params, setup.config,
                            setup.readout_direction() * lift)
    tiny = [i for i in range(setup.depth) if curves.gradient_norm[i] < 1e-150]  # lifted, still far from overflow
    plain = {i: (np.sqrt(sum(np.sum(a * a) for _, a in arrays(grads))), np.sqrt(np.sum(grads.feed_forward.w_out**2)),
                 np.sqrt(np.sum(grad * grad))) for i, grad, grads in lifted if i in tiny}  # (the others overflow)
    assert tiny == list(range(len(tiny))) and len(tiny) >= 3
    for i in tiny:
        assert curves.gradient_norm[i] * lift == pytest.approx(plain[i][0], rel=1e-13)
        assert curves.ffn_out_gradient_norm[i] * lift == pytest.approx(plain[i][1], rel=1e-13)
        assert curves.stream_gradient_norm[i] * lift == pytest.approx(plain[i][2], rel=1e-13)
    assert curves.gradient_norm[0] == pytest.approx(7.43095e-171, rel=1e-5)
    assert curves.gradient_norm[1] == pytest.approx(1.209729e-160, rel=1e-6)
    assert curves.ffn_out_gradient_norm[:2] == pytest.approx([2.44459e-176, 1.02290e-165], rel=1e-5)
    assert np.all(curves.gradient_norm > 0) and np.all(np.isfinite(curves.gradient_norm))


# ------------------------------------------------------------------------ progress and cancelling


@pytest.mark.parametrize("gradients", [True, False])
def test_progress_rises_to_one(gradients):
    seen = []
    depth_curves(replace(SMALL, depth=6), gradients, progress=seen.append)
    assert len(seen) == (12 if gradients else 6)
    assert np.all(np.diff(seen) > 0) and seen[0] > 0
    assert seen[-1] == pytest.approx(1.0, abs=1e-12)
    if gradients:
        assert seen[5] == pytest.approx(1 / 3)  # the forward pass is a third of the work


class Cancelled(Exception):
    pass


@pytest.mark.parametrize("stop_after", [0.2, 0.5])
def test_an_exception_in_progress_stops_the_run(stop_after):
    seen = []

    def cancel(fraction):
        seen.append(fraction)
        if fraction > stop_after:
            raise Cancelled

    with pytest.raises(Cancelled):
        depth_curves(replace(SMALL, depth=6), progress=cancel)
    assert seen[-1] > stop_after and all(f <= stop_after for f in seen[:-1])


# ------------------------------------------------------------------------------------------ budget


def test_small_setups_fit_the_budget():
    for runs in (1, 4):
        for gradients in (True, False):
            check_budget(SMALL, gradients, runs)
            check_budget(LabSetup(), gradients, runs)
            check_budget(LabSetup(d_model=16, tokens=8, depth=MAX_LAB_DEPTH), gradients, runs)


@pytest.mark.parametrize("width, tokens", [(512, 128), (512, 2), (256, 64), (128, 128), (64, 128), (32, 32)])
@pytest.mark.parametrize("runs", [1, 4])
@pytest.mark.parametrize("gradients", [True, False])
def test_the_budgets_max_depth_is_the_deepest_that_fits(width, tokens, runs, gradients):
    setup = LabSetup(d_model=width, tokens=tokens, depth=MAX_LAB_DEPTH)
    try:
        check_budget(setup, gradients, runs)
    except BudgetError as error:
        deepest = error.max_depth
        assert error.seconds == pytest.approx(MAX_LAB_DEPTH * runs * seconds_per_block(setup, gradients))
        assert isinstance(deepest, int) and 1 <= deepest < MAX_LAB_DEPTH
        assert str(deepest) in str(error)
    else:  # all of it fits: nothing deeper to check
        assert MAX_LAB_DEPTH * runs * seconds_per_block(setup, gradients) <= MAX_SECONDS
        return
    check_budget(replace(setup, depth=deepest), gradients, runs)
    with pytest.raises(BudgetError) as deeper:
        check_budget(replace(setup, depth=deepest + 1), gradients, runs)
    assert deeper.value.max_depth == deepest


def test_the_widest_setup_is_over_budget_in_every_way():
    """512 x 128 floats are 512 KiB a layer: the stream alone limits it to MAX_STREAM_BYTES."""
    setup = LabSetup(d_model=512, tokens=128, depth=MAX_LAB_DEPTH)
    with pytest.raises(BudgetError) as error:
        check_budget(setup, gradients=False, runs=1)
    assert error.value.max_depth <= MAX_STREAM_BYTES // (8 * 512 * 128) - 1
    assert issubclass(BudgetError, ValueError)


def test_depth_curves_refuses_an_over_budget_setup_before_running():
    calls = []
    with pytest.raises(BudgetError):
        depth_curves(LabSetup(d_model=512, tokens=128, depth=MAX_LAB_DEPTH), progress=calls.append)
    assert calls == []


# ------------------------------------------------------------------------------------- comparisons


def differing(a: LabSetup, b: LabSetup) -> set[str]:
    return {f.name for f in dataclasses.fields(LabSetup) if getattr(a, f.name) != getattr(b, f.name)}


@pytest.mark.parametrize("norm", NORM_KINDS)
@pytest.mark.parametrize("residual", [True, False])
def test_stabiliser_variants_change_only_residual_and_norm(norm, residual):
    setup = LabSetup(norm=norm, residual=residual, placement="pre", residual_scale="deepnorm", seed=3)
    kind = "layernorm" if norm == "none" else norm
    variants = compared_setups(setup, "stabilisers")
    assert list(variants) == ["neither", "residual_only", "norm_only", "both"]
    expected = {"neither": (False, "none"), "residual_only": (True, "none"),
                "norm_only": (False, kind), "both": (True, kind)}
    for name, variant in variants.items():
        assert (variant.residual, variant.norm) == expected[name]
        assert differing(setup, variant) <= {"residual", "norm"}


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_placement_variants_change_only_the_placement(placement):
    setup = LabSetup(placement=placement, norm="rmsnorm", residual=False, d_model=16, heads=2)
    variants = compared_setups(setup, "placement")
    assert list(variants) == ["post", "pre"]
    for name, variant in variants.items():
        assert variant.placement == name
        assert differing(setup, variant) == ({"placement"} if name != placement else set())


def test_no_comparison_is_the_setup_alone_and_others_are_refused():
    assert compared_setups(SMALL, "none") == {"this": SMALL}
    assert set(COMPARISONS) == {"none", "stabilisers", "placement"}
    with pytest.raises(ValueError):
        compared_setups(SMALL, "seeds")


# ---------------------------------------------------------------------------------------- property

small_setups = st.builds(
    lambda width, heads, **fields: LabSetup(d_model=width, heads=min(heads, width), **fields),
    width=st.sampled_from([w for w in WIDTHS if w <= 16]),
    heads=st.sampled_from(HEAD_COUNTS),
    tokens=st.sampled_from([t for t in TOKEN_COUNTS if t <= 8]),
    depth=st.integers(1, 6),
    init=st.sampled_from(INIT_SCHEMES),
    seed=st.integers(0, 99),
    placement=st.sampled_from(["post", "pre"]),
    norm=st.sampled_from(NORM_KINDS),
    residual=st.booleans(),
    residual_scale=st.sampled_from(RESIDUAL_SCALES),
    feed_forward=st.booleans(),
)


def finite(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values)]


def mean_centred_bound(tokens: int) -> float:
    """Centring on the mean can grow each of the composite norm's two factors by up to 2(n-1)/n
    (it is not Dong et al.'s minimising shift), so the relative residual is at most that, not 1."""
    return 2 * (tokens - 1) / tokens


@pytest.mark.parametrize("tokens", [2, 4, 8, 128])
def test_the_relative_residual_can_exceed_one(tokens):
    """One token v, the others zero: ||X - 1 mean||_{1,inf} / ||X||_{1,inf} = sqrt(2) (n-1)/n."""
    x = np.zeros((tokens, 5))
    x[0] = [1.0, -2.0, 0.5, 3.0, -1.0]
    ratio = float(relative_residual(x))
    assert ratio == pytest.approx(np.sqrt(2) * (tokens - 1) / tokens, rel=1e-12)
    assert ratio <= mean_centred_bound(tokens)
    assert (ratio > 1) == (tokens > 3)


@PROPERTY
@given(setup=small_setups)
def test_curves_are_honest_and_deterministic(setup):
    curves = depth_curves(setup)
    depth = setup.depth
    for name, length in (("relative_residual", depth + 1), ("pairwise_cosine", depth + 1), ("stream_rms", depth + 1),
                         ("gradient_norm", depth), ("ffn_out_gradient_norm", depth),
                         ("stream_gradient_norm", depth + 1)):
        assert getattr(curves, name).shape == (length,), name
    residual = finite(curves.relative_residual)
    assert np.all((residual >= 0) & (residual <= mean_centred_bound(setup.tokens) + 1e-9)), curves.relative_residual
    cosine = finite(curves.pairwise_cosine)
    assert np.all(np.abs(cosine) <= 1 + 1e-9), curves.pairwise_cosine
    for name in ("stream_rms", "gradient_norm", "ffn_out_gradient_norm", "stream_gradient_norm"):
        assert np.all(finite(getattr(curves, name)) >= 0), name
    again = depth_curves(setup)
    for field in dataclasses.fields(curves):
        if field.name != "setup":
            assert_array_equal(getattr(again, field.name), getattr(curves, field.name), err_msg=field.name)
