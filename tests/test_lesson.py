"""The lesson model tells the course's story with real computation."""

import numpy as np
import pytest

from blockstab.block import StackConfig
from blockstab.geometry import layernorm_points_2d
from blockstab.lesson import (
    ACTION_TOKEN,
    CONTEXT_TOKEN,
    SCENARIOS,
    lesson_embeddings,
    lesson_model_dict,
    lesson_params,
    lesson_trace,
    token_names,
)
from blockstab.readouts import readouts, vector_norm
from blockstab.sublayers import attention, attention_weights

SEED_TABLE = {"confirmed": [1.026, 1.978], "not_confirmed": [1.238, 1.814]}


def test_block_one_reproduces_the_course_table_to_three_decimals():
    trace = lesson_trace(StackConfig(depth=1))
    after_residual = trace.stage("attention_residual")[0, :, ACTION_TOKEN]
    for row, scenario in enumerate(SCENARIOS):
        np.testing.assert_array_equal(np.round(after_residual[row], 3), SEED_TABLE[scenario])


def test_seed_numbers_come_from_softmax_attention_not_from_a_table():
    """Recompute block 1 by hand from the published embeddings and weights."""
    x = lesson_embeddings()
    p = lesson_params().blocks[0].attention
    q, k, v = x @ p.w_query, x @ p.w_key, x @ p.w_value
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(2)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    by_hand = x + (weights @ v) @ p.w_out
    np.testing.assert_allclose(by_hand[:, ACTION_TOKEN], lesson_trace(StackConfig(depth=1)).stage(
        "attention_residual")[0, :, ACTION_TOKEN], rtol=1e-12)
    assert not np.allclose(weights[:, ACTION_TOKEN], weights[:, ACTION_TOKEN, :1])  # really mixes


def test_changing_the_context_embedding_changes_the_result():
    x = lesson_embeddings(("confirmed",)).copy()
    x[0, CONTEXT_TOKEN] += 0.1
    p = lesson_params().blocks[0].attention
    moved = x + attention(x, p, attention_weights(x, p))
    assert np.round(moved[0, ACTION_TOKEN], 3).tolist() != SEED_TABLE["confirmed"]


def test_scenarios_differ_only_in_the_status_token():
    x = lesson_embeddings()
    differs = np.any(x[0] != x[1], axis=-1)
    assert differs.tolist() == [t == CONTEXT_TOKEN for t in range(x.shape[1])]
    assert token_names("confirmed")[CONTEXT_TOKEN] == "confirmed"


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_residual_off_collapses_the_tokens_by_depth_24(placement):
    r = readouts(lesson_trace(StackConfig(depth=24, residual=False, placement=placement)), ACTION_TOKEN)
    assert np.all(r.relative_residual[-1] <= 1e-3)
    assert np.all(r.relative_residual[0] > 0.3)  # they started distinct


def test_norm_off_lets_the_action_token_range_run_away_by_depth_24():
    r = readouts(lesson_trace(StackConfig(depth=24, norm="none")), ACTION_TOKEN)
    ratio = r.action_norm[-1] / r.action_norm[0]
    assert np.all((ratio >= 10) | (ratio <= 0.1))


@pytest.mark.parametrize("depth", [24, 1000])
def test_both_stabilisers_hold_the_tokens_apart(depth):
    r = readouts(lesson_trace(StackConfig(depth=depth)), ACTION_TOKEN)
    assert np.all(r.relative_residual[-1] >= 0.1)
    assert r.scenario_angle[-1] >= 2.0
    np.testing.assert_allclose(r.token_rms[1:], 1.0, atol=1e-5)  # every RMSNorm output has unit RMS


def test_both_stabilisers_hold_at_every_depth_not_only_at_the_end():
    r = readouts(lesson_trace(StackConfig(depth=200)), ACTION_TOKEN)
    assert np.all(r.relative_residual >= 0.1)
    assert r.scenario_angle[0] < 1e-6  # the action token starts the same in both sentences
    assert np.all(r.scenario_angle[1:] >= 2.0)


def test_layernorm_in_two_dimensions_leaves_only_two_points():
    trace = lesson_trace(StackConfig(depth=3, norm="layernorm"))
    outputs = trace.stage("attention_norm").reshape(-1, 2)
    points = layernorm_points_2d()
    distance = np.min(np.linalg.norm(outputs[:, None] - points[None], axis=-1), axis=1)
    assert np.all(distance < 1e-3)


def test_rmsnorm_keeps_the_direction_and_puts_it_on_the_sqrt2_circle():
    trace = lesson_trace(StackConfig(depth=1))
    before = trace.stage("attention_residual")[0]
    after = trace.stage("attention_norm")[0]
    np.testing.assert_allclose(vector_norm(after), np.sqrt(2), rtol=1e-5)
    cos = (before * after).sum(-1) / (vector_norm(before) * vector_norm(after))
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)


def test_lesson_model_dict_is_enough_to_recompute_block_one():
    model = lesson_model_dict()
    att = model["block"]["attention"]
    x = np.array(model["scenarios"]["not_confirmed"]["embeddings"])
    q, k = x @ np.array(att["w_query"]), x @ np.array(att["w_key"])
    w = np.exp(q @ k.T / np.sqrt(2))
    w /= w.sum(-1, keepdims=True)
    out = x + w @ x @ np.array(att["w_value"]) @ np.array(att["w_out"])
    assert np.round(out[model["action_token"]], 3).tolist() == SEED_TABLE["not_confirmed"]
