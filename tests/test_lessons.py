"""The tour, exercises, checklist and presets are data: check each record against the engine."""

import json
from pathlib import Path

import numpy as np
import pytest

from ui.controls import BY_KEY, ExplorerState, check_query, explorer_query
from ui.lessons import CHECKLIST, PRESETS, QUESTIONS, TOUR
from ui.text import Text
from ui.verdicts import verdict_findings
from ui.views import FIGURES, explore

EN = Text("en")
CATALOGS = {lang: json.loads((Path(__file__).parents[1] / "ui/locales" / f"{lang}.json").read_text()) for lang in
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
    """The prose says: collapse by block 3; past 1e40 by block 24, about 50x per block; holds at 100."""
    collapse = explore(ExplorerState(residual=False, depth=24)).readouts.relative_residual
    assert int(np.nonzero(np.all(collapse <= 1e-3, axis=1))[0][0]) == 3
    size = explore(ExplorerState(norm=False, depth=24)).readouts.action_norm
    assert np.all(size[-1] / size[0] > 1e40)
    per_block = (size[-1] / size[0]) ** (1 / 24)
    assert np.all((per_block > 35) & (per_block < 65))
    held = explore(ExplorerState(depth=100)).readouts
    assert np.all(held.relative_residual[-1] > 0.1)
    pre = explore(ExplorerState(placement="pre", depth=100)).readouts.action_norm
    assert np.all(pre[-1] > 10 * pre[0])  # "the stream grows" under Pre-LN
