"""The Real model page's numbers and words: the ablations against the engine, each verdict sentence
against the numbers it names, the fixed-axis projection, the figures and the CSV."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from blockstab.ablations import INCIDENT, NORM_OFF, SCOPES, Ablation, compare, project, projection_axes
from blockstab.pretrained import DEPTH, load_model
from ui import real_views
from ui.numbers import readable
from ui.real_views import (
    COLLAPSED,
    MEANING_KEPT,
    MEANING_LOST,
    SIZE_CHANGE,
    TELLS_APART,
    comparison_csv,
    findings,
    layers_description,
    layers_figure,
    meaning_description,
    meaning_figure,
    panel_centre,
    projection_description,
    projection_figure,
)
from ui.text import Text

# Every scope of both switches, the one block first or in the middle, both meanings of "norm off".
ABLATIONS = sorted({Ablation(residual=r, norm=n, layer=layer, norm_off=kind)
                    for r, n, layer, kind in itertools.product(SCOPES, SCOPES, (1, 4), NORM_OFF)
                    if ("one" in (r, n) or layer == 1) and (n != "on" or kind == "identity")}, key=repr)


@pytest.fixture(scope="module")
def model():
    return load_model()


@pytest.fixture(scope="module")
def runs(model):
    return {a: compare(model, INCIDENT, a) for a in ABLATIONS}


def test_residual_off_everywhere_collapses_the_tokens_by_block_4(runs):
    c = runs[Ablation(residual="all")]
    assert c.ablated.pairwise_cosine[4:].min() > 0.999
    assert c.intact.pairwise_cosine.max() < 0.5


def test_layernorm_off_everywhere_blows_up_and_points_every_sentence_one_way(runs):
    c = runs[Ablation(norm="all")]
    assert 500 < c.ablated.rms[-1] / c.ablated.rms[0] < 650  # the README: "about 570 times"
    assert c.unrelated > 0.98 and c.intact_unrelated < 0.3
    kept = runs[Ablation(norm="all", norm_off="gain_bias")]
    assert c.ablated.rms[-1] > 20 * kept.ablated.rms[-1]  # the page's note: "tens of times larger"


@pytest.mark.parametrize("layer", range(1, DEPTH + 1))
def test_one_residual_off_in_any_block_makes_the_embedding_unrelated(model, layer):
    assert compare(model, INCIDENT, Ablation(residual="one", layer=layer)).embedding_cosine < MEANING_LOST


def test_the_intact_model_passes_the_meaning_test(runs):
    c = runs[Ablation()]
    assert c.paraphrase - c.unrelated > 0.5 and c.embedding_cosine == pytest.approx(1.0)
    assert (round(c.paraphrase, 2), round(c.unrelated, 2)) == (0.81, 0.09)  # as the README says


def _number(text: str) -> float:
    return float(text)


def _cosines(layer: np.ndarray) -> np.ndarray:
    """The cosine of every pair of tokens of one layer's ``(tokens, 384)`` states, computed here."""
    unit = layer / np.linalg.norm(layer.astype(np.float64), axis=-1, keepdims=True)
    return np.array([unit[i] @ unit[j] for i, j in itertools.combinations(range(len(unit)), 2)])


@pytest.mark.parametrize("ablation", ABLATIONS, ids=repr)
def test_every_verdict_sentence_is_true_of_the_numbers(runs, ablation):
    c = runs[ablation]
    said = dict(findings(c))
    ratio = c.ablated.rms / c.intact.rms
    for key, fields in said.items():
        if key == "real.verdict.collapse":  # every pair, from that block on
            block = fields["block"]
            closest = [_cosines(c.ablated.stream[b]).min() for b in range(1, DEPTH + 1)]
            assert min(closest[block - 1:]) >= COLLAPSED and (block == 1 or closest[block - 2] < COLLAPSED)
            assert float(fields["floor"]) == COLLAPSED
        elif key == "real.verdict.merged":
            cosines = _cosines(c.ablated.stream[-1])
            assert fields["merged"] == np.sum(cosines >= COLLAPSED) and 0 < fields["merged"] < len(cosines)
            assert fields["pairs"] == len(cosines) == math.comb(c.ablated.stream.shape[1], 2)
        elif key == "real.verdict.distinct":
            assert _cosines(c.ablated.stream[-1]).max() < COLLAPSED
            assert _number(fields["closest"]) == pytest.approx(_cosines(c.ablated.stream[-1]).max(), abs=5e-4)
        elif key == "real.verdict.grows":
            assert ratio[fields["block"]] >= SIZE_CHANGE and ratio[fields["block"]] == ratio.max()
        elif key == "real.verdict.shrinks":
            assert ratio[fields["block"]] <= 1 / SIZE_CHANGE and ratio[fields["block"]] == ratio.min()
        elif key == "real.verdict.size_kept":
            assert np.all((ratio > 1 / SIZE_CHANGE) & (ratio < SIZE_CHANGE))
        elif key == "real.verdict.meaning_kept":
            assert c.embedding_cosine >= MEANING_KEPT
        elif key == "real.verdict.meaning_moved":
            assert MEANING_LOST <= c.embedding_cosine < MEANING_KEPT
        elif key == "real.verdict.meaning_lost":
            assert c.embedding_cosine < MEANING_LOST
        elif key == "real.verdict.tells_apart":
            assert c.paraphrase - c.unrelated >= TELLS_APART
        elif key == "real.verdict.confused":
            assert c.paraphrase - c.unrelated < TELLS_APART
        elif key == "real.verdict.intact":  # no two tokens point the same way
            assert ablation.intact and _cosines(c.intact.stream[-1]).max() < COLLAPSED
            assert _number(fields["closest"]) == pytest.approx(_cosines(c.intact.stream[-1]).max(), abs=5e-4)
        else:
            raise AssertionError(key)
    assert ("real.verdict.intact" in said) == ablation.intact
    assert len(said) == (2 if ablation.intact else 4)
    if "real.verdict.tells_apart" in said or "real.verdict.confused" in said:
        fields = said.get("real.verdict.tells_apart") or said["real.verdict.confused"]
        assert _number(fields["paraphrase"]) == pytest.approx(c.paraphrase, abs=5e-4)


def test_the_verdicts_cover_collapse_blow_up_and_both_test_results(runs):
    keys = {key for c in runs.values() for key, _ in findings(c)}
    assert {"real.verdict.collapse", "real.verdict.grows", "real.verdict.meaning_lost", "real.verdict.confused",
            "real.verdict.tells_apart", "real.verdict.distinct", "real.verdict.merged"} <= keys


def test_the_projection_axes_are_the_intact_models_for_every_ablation(runs):
    intact = runs[Ablation()].intact_points
    for c in runs.values():
        np.testing.assert_array_equal(c.intact_points, intact)
        assert np.nanmax(np.abs(c.ablated_points)) <= 1 + 1e-12


def test_projection_by_hand():
    # tokens spread along features 0 and 1 (more along 0): the axes are those two features, signed +
    stream = np.array([[[3.0, 0.0, 0.1], [-3.0, 0.0, 0.1], [0.0, 1.0, 0.1], [0.0, -1.0, 0.1]]])
    axes = projection_axes(stream)
    np.testing.assert_allclose(np.abs(axes[0]), [[1, 0, 0], [0, 1, 0]], atol=0.05)
    assert axes[0, 0, 0] > 0 and axes[0, 1, 1] > 0
    same = np.repeat(stream[:, :1], 4, axis=1)  # collapsed: every token one vector, one point
    points = project(same, axes)
    assert np.ptp(points[0], axis=0).max() == 0


def test_the_layers_figure_draws_the_readouts(runs):
    c = runs[Ablation(residual="all")]
    fig = layers_figure(c, Text("en"))
    drawn = {(trace.name, trace.xaxis): list(trace.y) for trace in fig.data}
    t = Text("en")
    assert drawn[t("real.ablated"), "x"] == pytest.approx(list(c.ablated.pairwise_cosine))
    assert drawn[t("real.intact"), "x2"] == pytest.approx(list(c.intact.rms))
    assert len(layers_figure(runs[Ablation()], t).data) == 3  # intact only when nothing is off


def test_projection_figure_has_fixed_axes_and_escaped_tokens(model, runs):
    c = compare(model, "<b>deploy</b> failed", Ablation(norm="all"))
    fig = projection_figure(c, Text("zh"))
    layout = json.loads(fig.to_json())["layout"]
    other = json.loads(projection_figure(runs[Ablation()], Text("en")).to_json())["layout"]
    assert [layout[a]["range"] for a in ("xaxis", "yaxis")] == [other[a]["range"] for a in ("xaxis", "yaxis")]
    assert layout["shapes"] == other["shapes"]  # the same squares, whatever the sentence and switches
    centres = np.repeat([panel_centre(layer) for layer in range(DEPTH + 1)], len(c.tokens), axis=0)
    for trace, points in zip(fig.data, (c.intact_points, c.ablated_points), strict=True):
        drawn = np.column_stack([trace.x, trace.y]) - centres
        np.testing.assert_allclose(drawn, points.reshape(-1, 2))
        assert np.abs(drawn).max() <= 1 + 1e-12
    words = {w.split(" · ")[0] for trace in fig.data for w in trace.text}
    assert "&lt;" in words and not any("<" in w for w in words)


@pytest.mark.parametrize(("lang", "projector", "phone"),
                         [("en", False, False), ("zh", True, False), ("en", False, True)])
def test_figures_built_without_validation_are_what_validation_would_make(model, runs, lang, projector, phone):
    """The figures skip Plotly's validation for speed: validated, each is accepted and sent unchanged."""
    t = Text(lang)
    for c in (runs[Ablation(residual="one", norm="all", layer=4)], compare(model, "<b>回滚</b> 🚀", Ablation())):
        for fig in (layers_figure(c, t, projector, phone), meaning_figure(c, t, projector),
                    projection_figure(c, t, projector, phone)):
            validated = go.Figure(fig.to_dict())  # raises on any property Plotly does not know
            assert json.loads(validated.to_json()) == json.loads(fig.to_json())


def test_csv_holds_every_number(runs):
    c = runs[Ablation(norm="one", layer=4)]
    rows = list(csv.reader(io.StringIO(comparison_csv(c))))
    assert rows[0][0] == "layer" and len(rows) == 1 + DEPTH + 1 + 5
    assert float(rows[1 + 6][2]) == c.ablated.pairwise_cosine[6]
    assert dict(rows[-5:])["embedding_cosine"] == repr(c.embedding_cosine)
    assert all(math.isfinite(float(v)) for row in rows[1:] for v in row[1:])


def test_rows_name_every_layer_in_both_languages(runs):
    for lang in ("en", "zh"):
        rows = real_views.layer_rows(runs[Ablation()], Text(lang))
        assert len(rows) == DEPTH + 1


def test_canonical_ablations_name_one_view_once():
    views = {Ablation(r, n, layer, kind).canonical for r in SCOPES for n in SCOPES for layer in range(1, DEPTH + 1)
             for kind in NORM_OFF}
    assert len(views) == 1 + 5 + 6 * 9  # intact; the whole-stack switches; a block times each "one" case
    for view in views:
        assert view.canonical == view
        for layer in range(1, DEPTH + 1):
            other = Ablation(view.residual, view.norm, layer, view.norm_off)
            assert (other.canonical == view) == (other.config == view.config)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("ablation", ABLATIONS[:6], ids=repr)
def test_each_figures_description_states_what_it_draws(runs, ablation, lang):
    """Every number a Real model figure's description gives is read here off the figure's own
    traces: each line's first and last point, each bar's label, each run's separate points."""
    c, t = runs[ablation], Text(lang)
    layers = layers_figure(c, t)
    text = layers_description(c, t)
    for trace in layers.data:
        finite = np.all(np.isfinite(trace.y))
        assert trace.name in text and readable(trace.y[0]) in text and (not finite or readable(trace.y[-1]) in text)
    text = meaning_description(c, t)
    for bar in meaning_figure(c, t).data:
        assert bar.name in text and all(label in text for label in bar.text)
    text = projection_description(c, t)
    for trace in projection_figure(c, t).data:
        points = np.column_stack([trace.x, trace.y]).reshape(DEPTH + 1, len(c.tokens), 2)
        last = len(np.unique(np.round(points[-1] - panel_centre(DEPTH), 2), axis=0))  # (as the panel shows them)
        assert trace.name in text and str(last) in text
