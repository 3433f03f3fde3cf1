"""The tour, exercises, checklist and presets are data: check each record against the engine."""

import json
from pathlib import Path

import numpy as np
import pytest

from blockstab.block import StackConfig
from blockstab.lesson import ACTION_TOKEN, TOKENS, lesson_params, lesson_trace
from blockstab.readouts import DISTINCT_DEGREES, angle_degrees
from blockstab.sublayers import feed_forward_hidden
from support.oracles import groups_of, value_of
from ui.controls import BY_KEY, ExplorerState, check_query, explorer_query
from ui.lessons import CHECKLIST, PRESETS, QUESTIONS, TOUR, lesson_facts
from ui.text import Text
from ui.verdicts import OWN_DIRECTION, verdict_findings
from ui.views import FIGURES, explore

EN = Text("en")
CATALOGS = {lang: json.loads((Path(__file__).parents[2] / "ui/locales" / f"{lang}.json").read_text()) for lang in
            ("en", "zh")}


def verdict_kind(view: dict) -> str:
    """The headline of the Explorer's verdict for a view (collapse / grew / overflow / stable / ...)."""
    state = ExplorerState(**view)
    return verdict_findings(state, explore(state), EN)[0].key.removeprefix("verdict.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_lesson_text_key_exists(lang):
    keys = [f"tour.{s.id}.{part}" for s in TOUR for part in ("title", "body")]
    for q in QUESTIONS:
        keys += [f"ex.{q.id}.prompt", f"ex.{q.id}.explain", *(q.choice_key(c) for c in q.choices)]
    keys += [f"check.{c.id}" for c in CHECKLIST] + [f"preset.{p.id}" for p in PRESETS]
    missing = [k for k in keys if not CATALOGS[lang].get(k)]
    assert missing == []


@pytest.mark.parametrize("step", TOUR, ids=lambda s: s.id)
def test_every_tour_step_draws_its_figure(step):
    state = step.state()
    figure = FIGURES[step.figure](state, explore(state), EN)
    assert len(figure.data) > 0


def test_tour_ends_with_the_two_failures_the_course_names():
    assert verdict_kind(TOUR[-2].view) == "collapse"
    assert verdict_kind(TOUR[-1].view) == "grew"
    assert verdict_kind(TOUR[-3].view) == "stable"


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.id)
def test_every_show_me_demonstrates_the_answer(question):
    """Residual answers open a collapse, normalization answers a runaway range, 'hold' a stable stack."""
    expected = {"residual": "collapse", "overwrite": "collapse", "normalization": "grew", "unstable": "grew",
                "hold": "stable"}[question.answer]
    assert verdict_kind(question.show_me).replace("overflow", "grew") == expected
    assert question.answer in question.choices


@pytest.mark.parametrize("item", [*CHECKLIST, *PRESETS], ids=lambda d: d.id)
def test_every_demonstration_link_is_a_valid_url(item):
    query = explorer_query(item.view, lang="zh")
    assert check_query(query) == []
    assert {k: BY_KEY[k].parse(v) for k, v in query.items() if k != "lang"} == {
        k: v for k, v in item.view.items() if v != BY_KEY[k].default}


def test_numbers_quoted_in_the_lesson_text_are_what_the_engine_computes():
    """Every number the prose quotes (lesson_facts) recomputed here from the engine's own stack."""
    facts = lesson_facts()
    stream = lesson_trace(StackConfig(depth=24, residual=False)).stream
    same = [all(groups_of(x[row]) == 1 for row in range(2)) for x in stream]
    assert same.index(True) == int(facts["collapse_block"]) and all(same[same.index(True):])
    size = np.linalg.norm(lesson_trace(StackConfig(depth=24, norm="none")).stream[:, :, ACTION_TOKEN], axis=-1)
    growth = size[-1] / size[0]
    assert value_of(facts["growth_24"]) == pytest.approx(growth.min(), rel=5e-3)
    assert value_of(facts["growth_per_block"]) == pytest.approx(growth.min() ** (1 / 24), rel=1e-2)
    for depth in (24, 100):
        x = lesson_trace(StackConfig(depth=depth)).stream[-1]
        nearest = min(angle_degrees(x[row, ACTION_TOKEN], x[row, j]) for row in range(2) for j in range(4))
        assert value_of(facts[f"nearest_{depth}"]) == pytest.approx(nearest, rel=1e-2)
    x = lesson_trace(StackConfig(depth=24)).stream[-1, :, ACTION_TOKEN]
    assert value_of(facts["sentences_24"]) == pytest.approx(angle_degrees(x[0], x[1]), rel=1e-2)
    pre = np.linalg.norm(lesson_trace(StackConfig(depth=100, placement="pre")).stream[:, :, ACTION_TOKEN], axis=-1)
    assert value_of(facts["pre_growth_100"]) == pytest.approx((pre[-1] / pre[0]).max(), rel=1e-2)
    keys = lesson_params().blocks[0].feed_forward.w_out
    assert int(facts["memory_keys"]) == len(keys) and int(facts["strong_keys"]) == len(keys) - 1


def test_the_tours_words_are_true_of_the_lesson():
    """Step 2: the blend leans to recovery with 'confirmed', to the symptom without; step 3: one
    weak key is the one that writes into the action token in block 1, and it writes less than any
    strong key could; step 6: the action token keeps its own direction at 24 (and 100) blocks,
    'confirmed' nearer the recovery axis, while the symptom words and the recovery words gather."""
    one = lesson_trace(StackConfig(depth=1))
    blend = one.stage("attention")[0, :, ACTION_TOKEN]
    up = np.array([0.0, 1.0])
    assert angle_degrees(blend[0], up) < angle_degrees(blend[1], up)
    memory = lesson_params().blocks[0].feed_forward
    fired = feed_forward_hidden(one.stage("attention_norm")[0, :, ACTION_TOKEN], memory) > 0
    strength = np.linalg.norm(memory.w_out, axis=1)
    weak = int(np.argmin(strength))
    assert fired[:, weak].all() and fired.sum() == 2  # only the weak key, in both sentences
    for depth in (24, 100):
        x = lesson_trace(StackConfig(depth=depth)).stream[-1]
        assert all(angle_degrees(x[row, ACTION_TOKEN], x[row, j]) >= OWN_DIRECTION
                   for row in range(2) for j in range(4))
        assert angle_degrees(x[0, ACTION_TOKEN], up) < angle_degrees(x[1, ACTION_TOKEN], up)
        errors, after, rollback, status = (TOKENS.index(n) for n in ("errors", "after_deploy", "rollback", "status"))
        for row in range(2):  # the symptom words are one direction
            assert angle_degrees(x[row, errors], x[row, after]) < DISTINCT_DEGREES
        assert angle_degrees(x[0, rollback], x[0, status]) < DISTINCT_DEGREES  # rollback = confirmed
        assert angle_degrees(x[1, errors], x[1, status]) < DISTINCT_DEGREES  # not confirmed = errors
    pre = explore(ExplorerState(placement="pre", depth=100)).readouts.action_norm
    assert np.all(pre[-1] > 10 * pre[0])  # "the stream grows" under Pre-LN


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_position_and_length_give_no_answer_away(lang):
    """Exercise 1's answers sit at different places, and none is the longest choice of its question."""
    t = Text(lang)
    ones = [q for q in QUESTIONS if q.exercise == 1]
    assert len({q.choices.index(q.answer) for q in ones}) > 1
    assert all(q.choices.index(q.answer) != 0 for q in ones)
    for q in ones:
        lengths = {c: len(t(q.choice_key(c))) for c in q.choices}
        assert lengths[q.answer] < max(lengths.values()), (q.id, lengths)


def test_one_axis_show_me_shows_one_axis_far_too_large():
    """Exercise 2, 'one axis alone has become far too large': its view shows exactly that after the
    residual add in block 1 (one component at least 5 times the other and far beyond the input)."""
    question = next(q for q in QUESTIONS if q.id == "one_axis")
    state = ExplorerState(**question.show_me)
    trace = explore(state).trace
    after_add = trace.stage(state.focus)[state.shown_block - 1, :, ACTION_TOKEN]
    start = np.linalg.norm(trace.stream[0, 0, ACTION_TOKEN])
    big, small = np.abs(after_add).max(axis=1), np.abs(after_add).min(axis=1)
    assert np.any((big >= 5 * small) & (big >= 5 * start))
