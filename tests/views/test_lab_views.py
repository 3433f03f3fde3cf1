"""The Depth lab's pure views (ui/lab_views.py), read in-process: the setup the controls make, the
numbers the chart draws, the findings table and the variant labels, in both languages."""

from __future__ import annotations

import re
import string
from dataclasses import replace

import numpy as np
import pytest

from blockstab.lab import (
    COMPARISONS,
    FLOAT_FLOOR,
    MAX_LAB_DEPTH,
    MAX_SECONDS,
    DepthCurves,
    LabSetup,
    check_budget,
    compared_setups,
    depth_curves,
)
from blockstab.papers import CLAIMS, PAPERS, Finding, PaperRun, PublishedCurve
from support.paper_runs import SLOW_PAPERS, paper_run
from ui.controls import LAB_CONTROLS
from ui.lab_views import (
    FLOORED_PANELS,
    LOG_PANELS,
    PALETTE,
    PANELS,
    VARIANT_PARTS,
    chart_notes,
    curves_description,
    curves_figure,
    finding_rows,
    lab_setup,
    layer_zero,
    published_description,
    published_figure,
    published_notes,
    run_reading,
    summary_rows,
    variant_label,
)
from ui.numbers import readable
from ui.text import LANGUAGES, Text, catalog

LANGS = pytest.mark.parametrize("lang", LANGUAGES)
DEFAULTS = {c.key: c.default for c in LAB_CONTROLS}
SMALL_VALUES = DEFAULTS | {"lab_width": 16, "lab_tokens": 8, "lab_heads": 2, "lab_depth": 5}


def says(text: str, lang: str, key: str) -> bool:
    """Is ``text`` the catalog message ``key`` with some values filled in?"""
    parts = [re.escape(literal) + ("(.+?)" if field is not None else "")
             for literal, field, _, _ in string.Formatter().parse(catalog(lang)[key])]
    return re.fullmatch("".join(parts), text, re.DOTALL) is not None


def placeholders(lang: str, key: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(catalog(lang)[key]) if field}


# ---------------------------------------------------------------------------------------- lab_setup


def test_defaults_make_the_default_setup_without_notes():
    setup, notes = lab_setup(DEFAULTS)
    assert setup == LabSetup() and notes == []


def test_every_value_reaches_the_setup():
    values = SMALL_VALUES | {"lab_init": "bert", "lab_seed": 7, "lab_placement": "pre", "lab_norm": "rmsnorm",
                             "lab_residual": False, "lab_scale": "inv_sqrt_depth", "lab_compare": "placement",
                             "lab_gradients": False}
    setup, notes = lab_setup(values)
    assert notes == []
    assert setup == LabSetup(d_model=16, tokens=8, heads=2, depth=5, init="bert", seed=7, placement="pre",
                             norm="rmsnorm", residual=False, residual_scale="inv_sqrt_depth")


@LANGS
@pytest.mark.parametrize("width, heads", [(2, 4), (2, 16), (4, 8), (8, 16)])
def test_more_heads_than_features_are_clamped_with_a_note(width, heads, lang):
    setup, notes = lab_setup(SMALL_VALUES | {"lab_width": width, "lab_heads": heads})
    assert setup.heads == width and setup.d_model == width
    assert notes == [("lab.note.heads", {"heads": heads, "width": width})]
    key, fields = notes[0]
    text = Text(lang)(key, **fields)
    assert says(text, lang, key) and str(heads) in text and str(width) in text


@LANGS
@pytest.mark.parametrize("compare", COMPARISONS)
@pytest.mark.parametrize("gradients", [True, False])
def test_too_deep_a_stack_is_clamped_to_the_budget_with_a_note(compare, gradients, lang):
    values = DEFAULTS | {"lab_width": 512, "lab_tokens": 128, "lab_depth": MAX_LAB_DEPTH, "lab_compare": compare,
                         "lab_gradients": gradients}
    setup, notes = lab_setup(values)
    runs = len(compared_setups(setup, compare))
    ((key, fields),) = notes
    assert key == "lab.note.budget"
    assert fields["depth"] == MAX_LAB_DEPTH and fields["max_depth"] == setup.depth < MAX_LAB_DEPTH
    assert fields["limit"] == MAX_SECONDS and fields["seconds"] > MAX_SECONDS
    check_budget(setup, gradients, runs)  # the clamped setup fits ...
    with pytest.raises(ValueError):       # ... and is the deepest that does
        check_budget(replace(setup, depth=setup.depth + 1), gradients, runs)
    text = Text(lang)(key, **fields)
    assert says(text, lang, key) and str(setup.depth) in text


# -------------------------------------------------------------------------------------- the chart


def as_array(values) -> np.ndarray | None:
    return None if values is None else np.asarray(values, dtype=float)


def made_curves(setup: LabSetup, residual, cosine, size, gradient=None) -> DepthCurves:
    """Curves with chosen values (the stream gradient gets one more entry than the blocks')."""
    return DepthCurves(setup, as_array(residual), as_array(cosine), as_array(size), as_array(gradient),
                       as_array(gradient), None if gradient is None else as_array([*gradient, 1.0]))


def traces(fig, variant_name: str) -> dict[int, object]:
    """The traces of one run, by subplot (0..3 in PANELS order)."""
    axes = {("x", "y"): 0, ("x2", "y2"): 1, ("x3", "y3"): 2, ("x4", "y4"): 3}
    return {axes[(tr.xaxis, tr.yaxis)]: tr for tr in fig.data if tr.name == variant_name}


@LANGS
def test_the_chart_draws_exactly_the_computed_values(lang):
    t = Text(lang)
    setup, _ = lab_setup(SMALL_VALUES)
    curves = {name: depth_curves(s) for name, s in compared_setups(setup, "stabilisers").items()}
    fig = curves_figure(curves, t)
    assert len(fig.data) == len(curves) * len(PANELS)
    assert [a.text for a in fig.layout.annotations][:4] == [t(f"lab.panel.{p}") for p in PANELS]
    for index, (variant, run) in enumerate(curves.items()):
        drawn = traces(fig, variant_label(variant, t))
        assert sorted(drawn) == [0, 1, 2, 3]
        for panel_index, panel in enumerate(PANELS):
            trace, values = drawn[panel_index], getattr(run, panel)
            first = 1 if panel == "gradient_norm" else 0  # gradients belong to blocks 1..L
            assert list(trace.x) == list(range(first, first + len(values)))
            expected = np.maximum(values, FLOAT_FLOOR) if panel in FLOORED_PANELS else values
            assert list(trace.y) == [float(v) for v in expected]
            assert trace.showlegend == (panel_index == 0) and trace.legendgroup == variant
            assert trace.line.color == PALETTE[index]
    for panel_index, panel in enumerate(PANELS):
        axis = fig.layout[f"yaxis{panel_index + 1 if panel_index else ''}"]
        assert axis.type == ("log" if panel in LOG_PANELS else "linear")
    legend_names = [tr.name for tr in fig.data if tr.showlegend]
    assert legend_names == [variant_label(v, t) for v in curves] and len(set(legend_names)) == len(curves)


@LANGS
def test_the_charts_description_gives_each_runs_first_and_last_value_per_panel(lang):
    """The description (the chart's accessible name) states, per panel and run, the first and the last
    value the chart draws; a run that overflows is said to, from the block where its line stops."""
    t = Text(lang)
    setup = LabSetup(d_model=16, tokens=8, heads=2, depth=3)
    curves = {"this": made_curves(setup, [1.0, 0.5, 0.1, 0.01], [0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0],
                                  [3.0, 2.0, 1.0]),
              "skip.bert": made_curves(setup, [1.0, 0.9, 0.8, 0.7], [0.1, 0.1, 0.1, 0.1], [1.0, 1e200, np.inf, np.nan],
                                       [5.0, 6.0, 7.0])}
    text = curves_description(curves, t)
    fig = curves_figure(curves, t)
    for panel_index, panel in enumerate(PANELS):
        said = text.split(t(f"lab.panel.{panel}"))[1]
        for variant in curves:
            trace = traces(fig, variant_label(variant, t))[panel_index]
            mine = said.split(t("describe.run", run=variant_label(variant, t), curve=""))[1]
            drawn = [v for v in trace.y if v is not None]
            if len(drawn) == len(trace.y):
                assert t("describe.curve.block", start=readable(drawn[0]), end=readable(drawn[-1]),
                         last=trace.x[-1]) in mine
            else:  # the line stops: said from the first block it does not reach
                assert t("describe.curve_lost.block", start=readable(drawn[0]), at=trace.x[len(drawn)]) in mine


@LANGS
def test_the_published_figures_description_gives_both_curves_ends(lang):
    t = Text(lang)
    run = published_run([[0.62, 0.04, 0.0], [0.62, 0.6, 0.5]], [[0.61, 0.02, 0.0], [0.61, 0.57, 0.56]])
    text = published_description(run, t)
    for curve in run.published:
        for values in (curve.ours, curve.published):
            assert t("describe.curve.layer", start=readable(values[0]), end=readable(values[-1]), last=2) in text


@LANGS
def test_floor_and_gaps_are_drawn_and_explained_only_when_needed(lang):
    t = Text(lang)
    setup = LabSetup(d_model=16, tokens=8, heads=2, depth=3)
    clean = made_curves(setup, [1.0, 0.5, 0.1, 0.01], [0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0], [3.0, 2.0, 1.0])
    assert chart_notes({"this": clean}, t) == []

    floored = made_curves(setup, [1.0, 1e-9, 1e-300, 0.0], [0.1, 0.99, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0])
    fig = curves_figure({"this": floored}, t)
    drawn = traces(fig, variant_label("this", t))
    assert sorted(drawn) == [0, 1, 2]  # no gradients: no gradient trace
    assert list(drawn[0].y) == [1.0, 1e-9, FLOAT_FLOOR, FLOAT_FLOOR]
    assert list(drawn[1].y) == [0.1, 0.99, 1.0, 1.0]
    assert chart_notes({"this": floored}, t) == [t("lab.floor_note", floor="10⁻¹⁵")]

    diverged = made_curves(setup, [1.0, 0.5, np.nan, np.nan], [0.0, -1e-17, np.nan, 0.5],
                           [1.0, 1e200, np.inf, np.inf], [np.inf, 1.0, np.nan])
    fig = curves_figure({"this": diverged}, t)
    drawn = traces(fig, variant_label("this", t))
    assert list(drawn[0].y) == [1.0, 0.5, None, None]
    assert list(drawn[1].y) == [0.0, -1e-17, None, 0.5]  # a linear panel is not floored
    assert list(drawn[2].y) == [1.0, 1e200, None, None]
    assert list(drawn[3].y) == [None, 1.0, None]
    assert chart_notes({"this": diverged}, t) == [t("lab.overflow_note")]

    both = {"this": floored, "neither": diverged}
    assert chart_notes(both, t) == [t("lab.floor_note", floor="10⁻¹⁵"), t("lab.overflow_note")]


def test_sizes_and_gradients_are_drawn_as_computed_however_small():
    """Only the relative residual has a known rounding floor; a vanishing stream is a real value."""
    t = Text("en")
    setup = LabSetup(d_model=16, tokens=8, heads=2, depth=3)
    fig = curves_figure({"this": made_curves(setup, [1.0] * 4, [0.0] * 4, [1.0, 1e-20, 1e-40, 1e-60],
                                             [1e-30, 1e-20, 1e-10])}, t)
    drawn = traces(fig, variant_label("this", t))
    assert list(drawn[2].y) == [1.0, 1e-20, 1e-40, 1e-60]
    assert list(drawn[3].y) == [1e-30, 1e-20, 1e-10]


def test_projector_mode_enlarges_the_chart():
    t = Text("en")
    setup = LabSetup(d_model=16, tokens=8, heads=2, depth=3)
    curves = {"this": made_curves(setup, [1.0, 0.5, 0.1, 0.01], [0.1] * 4, [1.0] * 4, [1.0] * 3)}
    small, large = curves_figure(curves, t), curves_figure(curves, t, projector=True)
    assert large.layout.font.size > small.layout.font.size and large.layout.height > small.layout.height
    assert large.data[0].line.width > small.data[0].line.width


@LANGS
def test_summary_has_one_row_per_run(lang):
    t = Text(lang)
    setup = LabSetup(d_model=16, tokens=8, heads=2, depth=3)
    curves = {"post": made_curves(setup, [1.0, 0.5, 0.1, 0.01], [0.1] * 4, [1.0, 1.0, 1.0, np.inf], [4.0, 2.0, 1.0]),
              "pre": made_curves(setup, [1.0, 0.5, 0.1, 0.01], [0.1] * 4, [1.0] * 4)}
    rows = summary_rows(curves, t)
    assert [r[t("lab.col.run")] for r in rows] == [variant_label("post", t), variant_label("pre", t)]
    assert rows[0][t("lab.col.gradient_ratio")] == "4" and rows[1][t("lab.col.gradient_ratio")] == "–"
    assert rows[0][t("lab.col.rms")] == "∞" and rows[0][t("lab.col.residual")] == "0.01"


# Issue #13's smallest case: its first gradients (~1e-171) square to 0 in float64.
TINY_GRADIENTS = LabSetup(d_model=2, tokens=2, heads=1, depth=18, init="bert", seed=0, placement="post",
                          norm="layernorm")


@LANGS
def test_tiny_gradients_are_drawn_and_tabled_as_finite_readable_numbers(lang):
    t = Text(lang)
    curves = {"this": depth_curves(TINY_GRADIENTS)}
    gradient = curves["this"].gradient_norm
    assert 0 < gradient[0] < 1e-160
    drawn = traces(curves_figure(curves, t), variant_label("this", t))[3]
    assert list(drawn.y) == [float(v) for v in gradient] and all(v > 0 for v in drawn.y)
    (row,) = summary_rows(curves, t)
    ratio = row[t("lab.col.gradient_ratio")]
    assert ratio == readable(gradient[0] / gradient[-1]) == "5.51 × 10⁻¹⁷¹"
    assert all("e-" not in str(value) and "e+" not in str(value) for value in row.values())
    assert t("lab.overflow_note") not in chart_notes(curves, t)  # nothing left out of the gradient panel


def test_log_axes_label_powers_of_ten():
    t = Text("en")
    fig = curves_figure({"this": depth_curves(TINY_GRADIENTS)}, t)
    for panel_index, panel in enumerate(PANELS):
        axis = fig.layout[f"yaxis{panel_index + 1 if panel_index else ''}"]
        assert axis.exponentformat == "power" and (axis.type == "log") == (panel in LOG_PANELS)


def published_run(ours, published, variants=("attention.bert", "skip.bert")) -> PaperRun:
    def curve(variant, ours_values, published_values):
        return PublishedCurve(variant, np.asarray(ours_values, dtype=float), np.asarray(published_values, dtype=float),
                              seeds=3, tolerance=0.1)

    return PaperRun("dong", {}, (), tuple(map(curve, variants, ours, published)))


@LANGS
@pytest.mark.parametrize("projector", [False, True])
def test_published_figure_draws_ours_beside_the_papers_curves(lang, projector):
    t = Text(lang)
    run = published_run([[0.62, 0.04, 0.0], [0.62, 0.6, 0.5]], [[0.61, 0.02, 0.0], [0.61, 0.57, 0.56]])
    fig = published_figure(run, t, projector)
    assert len(fig.data) == 4
    for curve, (ours, paper) in zip(run.published, zip(fig.data[::2], fig.data[1::2], strict=True), strict=True):
        label = variant_label(curve.variant, t)
        assert ours.name == t("lab.published.ours", run=label, seeds=3)
        assert paper.name == t("lab.published.paper", run=label)
        assert list(ours.x) == list(paper.x) == [0, 1, 2]
        assert list(ours.y) == curve.ours.tolist() and list(paper.y) == curve.published.tolist()
        assert ours.line.color == paper.line.color and paper.line.dash == "dash" and ours.line.dash is None
    assert fig.data[0].line.color != fig.data[2].line.color
    assert fig.layout.yaxis.type in (None, "linear") and fig.layout.title.text == t("lab.published.title")
    assert fig.layout.xaxis.title.text == t("lab.published.axis")


def test_a_variant_has_one_colour_in_the_published_figure_and_the_curves():
    t = Text("en")
    made = made_curves(LabSetup(d_model=16, tokens=8, heads=2, depth=2), [1.0, 0.5, 0.1], [0.0, 0.5, 0.9], [1, 1, 1])
    run = replace(published_run([[0.6, 0.1, 0.0], [0.6, 0.5, 0.4]], [[0.6, 0.1, 0.0], [0.6, 0.5, 0.4]]),
                  curves={"skip.bert": made, "attention.bert": made})  # drawn in the other order
    published = {trace.name: trace.line.color for trace in published_figure(run, t).data}
    drawn = {trace.name: trace.line.color for trace in curves_figure(run.curves, t).data if trace.showlegend}
    for variant in ("attention.bert", "skip.bert"):
        label = variant_label(variant, t)
        assert published[t("lab.published.ours", run=label, seeds=3)] == drawn[label]
    assert len(set(drawn.values())) == 2


def test_layer_zero_quotes_where_the_curves_start():
    run = published_run([[0.617, 0.04], [0.6171, 0.6]], [[0.612, 0.02], [0.597, 0.57]])
    assert layer_zero(run.published) == {"ours": "0.62", "published": "0.6–0.61"}
    run = published_run([[0.55, 0.04], [0.7, 0.6]], [[0.61, 0.02], [0.61, 0.57]])
    assert layer_zero(run.published) == {"ours": "0.55–0.7", "published": "0.61"}


@LANGS
def test_published_notes_name_each_curve_off_and_its_layers(lang):
    t = Text(lang)
    run = published_run([[0.9, 0.5, 0.3, 0.2], [0.9, 0.6, 0.45, 0.3]], [[0.6, 0.45, 0.42, 0.3], [0.6, 0.55, 0.4, 0.3]])
    assert [c.layers_beyond for c in run.published] == [(2,), ()]  # layer 0 never counts
    assert published_notes(run, t) == [t("lab.published.off", run=variant_label("attention.bert", t), tolerance="0.1",
                                         layers="2")]
    run = published_run([[0.9, 0.9, 0.9]], [[0.6, 0.6, 0.6]], variants=("skip.bert",))
    assert published_notes(run, t) == [t("lab.published.off", run=variant_label("skip.bert", t), tolerance="0.1",
                                         layers="1, 2")]
    assert published_notes(published_run([[0.6, 0.5]], [[0.9, 0.55]], variants=("mlp.bert",)), t) == []


@LANGS
def test_the_dong_figure_note_is_true_of_the_run(lang):
    """The note quotes where the curves start and says: ours start higher; pure attention and
    attention + MLP lose that within two blocks; with skip connections ours stays above in the first blocks."""
    run, _ = paper_run("dong")
    values = layer_zero(run.published)
    assert len({c.ours[0] for c in run.published}) == 1  # every variant is fed the same tokens
    assert values["ours"] == readable(run.published[0].ours[0], 2)
    text = Text(lang)("paper.dong.figure_note", **values)
    assert values["ours"] in text and values["published"] in text
    attention, mlp, skip = run.published
    assert attention.ours[0] > max(c.published[0] for c in run.published) + 0.05
    for curve in (attention, mlp):
        assert np.all(np.abs(curve.ours[2:] - curve.published[2:]) < 0.01)
    assert np.all(skip.ours[1:4] - skip.published[1:4] > 0.05)


# ------------------------------------------------------------------------------------ findings table


def made_run(paper: str, passed: bool) -> PaperRun:
    """A run of ``paper`` whose findings quote 0.25 for every value their sentences take."""
    return PaperRun(paper, {}, tuple(
        Finding(claim, passed, dict.fromkeys(placeholders("en", f"paper.{paper}.finding.{claim}.ours"), 0.25))
        for claim in CLAIMS[paper]))


@LANGS
@pytest.mark.parametrize("paper", list(PAPERS))
@pytest.mark.parametrize("passed", [True, False])
def test_finding_rows_quote_the_claim_ours_and_a_badge(paper, passed, lang):
    t = Text(lang)
    run = made_run(paper, passed)
    rows = finding_rows(run, t)
    assert len(rows) == len(CLAIMS[paper])
    for row, finding in zip(rows, run.findings, strict=True):
        assert list(row) == [t("lab.col.published"), t("lab.col.ours"), t("lab.col.badge")]
        assert row[t("lab.col.published")] == t(f"paper.{paper}.finding.{finding.claim}.published")
        ours = row[t("lab.col.ours")]
        assert says(ours, lang, f"paper.{paper}.finding.{finding.claim}.ours") and "0.25" in ours
        assert row[t("lab.col.badge")] == t("lab.pass" if passed else "lab.fail")


@pytest.mark.parametrize("paper", list(PAPERS))
def test_both_catalogs_quote_the_same_values(paper):
    for claim in CLAIMS[paper]:
        key = f"paper.{paper}.finding.{claim}.ours"
        assert placeholders("en", key) == placeholders("zh", key), key


@LANGS
def test_an_infinite_value_is_quoted_as_infinity(lang):
    t = Text(lang)
    run = PaperRun("dong", {}, (Finding("doubly_exponential", False, {"layers": 12, "growth": float("inf")}),))
    ours = finding_rows(run, t)[0][t("lab.col.ours")]
    assert "∞" in ours and "12" in ours and "inf" not in ours


PAPER_PARAMS = [pytest.param(p, marks=[pytest.mark.slow] if p in SLOW_PAPERS else [], id=p) for p in PAPERS]


@LANGS
@pytest.mark.parametrize("paper", PAPER_PARAMS)
def test_real_findings_fill_their_sentences(paper, lang):
    run, _ = paper_run(paper)
    t = Text(lang)
    for finding, row in zip(run.findings, finding_rows(run, t), strict=True):
        assert set(finding.values) == placeholders(lang, f"paper.{paper}.finding.{finding.claim}.ours")
        assert row[t("lab.col.badge")] == t("lab.pass" if finding.passed else "lab.fail")


# ----------------------------------------------------------------------------------- variant labels


def assert_labelled(variants, lang: str) -> None:
    t = Text(lang)
    labels = []
    for variant in variants:
        parts = variant.split(".")
        assert all(part.isdigit() or part in VARIANT_PARTS for part in parts), variant
        label = variant_label(variant, t)
        assert label.count(" · ") == len(parts) - 1 and "{" not in label
        labels.append(label)
    assert len(set(labels)) == len(labels), labels


@LANGS
def test_every_variant_part_has_a_label(lang):
    for part in VARIANT_PARTS:
        assert variant_label(part, Text(lang)) == catalog(lang)[f"lab.variant.{part}"]
    assert variant_label("one.96", Text(lang)) == f"{Text(lang)('lab.variant.one')} · " \
                                                 f"{Text(lang)('lab.variant_depth', depth='96')}"


@LANGS
@pytest.mark.parametrize("compare", COMPARISONS)
def test_compared_variants_are_labelled(compare, lang):
    assert_labelled(compared_setups(LabSetup(), compare), lang)


@LANGS
@pytest.mark.parametrize("paper", PAPER_PARAMS)
def test_paper_variants_are_labelled(paper, lang):
    run, _ = paper_run(paper)
    assert_labelled(run.curves, lang)


@LANGS
@pytest.mark.parametrize("residual,cosine,tokens", [
    ([1.0, 0.5, 1e-4, 1e-9], [0.0, 0.5, 1.0, 1.0], ("lab.reading.collapsed", {"block": 2, "threshold": "0.001"})),
    ([1.0, 0.5, 0.1, 0.06], [0.0, 0.5, 0.9, 0.995], ("lab.reading.aligning", {"cosine": "0.995", "residual": "0.06"})),
    ([1.0, 0.9, 0.8, 0.414], [0.0, 0.3, 0.5, 0.694], ("lab.reading.distinct", {"residual": "0.414"})),
])
@pytest.mark.parametrize("size,change", [
    ([1.0, 10.0, 100.0, 444.0], ("lab.reading.grew", {"factor": "444"})),
    ([1.0, 0.1, 1e-20, 1e-43], ("lab.reading.shrank", {"factor": "10⁴³"})),
    ([1.0, 2.0, 3.0, 3.83], ("lab.reading.steady", {})),
    ([1.0, 1e200, np.inf, np.inf], ("lab.reading.overflow", {})),
])
def test_each_run_gets_a_reading_computed_from_its_curves(lang, residual, cosine, tokens, size, change):
    t = Text(lang)
    run = made_curves(LabSetup(d_model=16, tokens=8, heads=2, depth=3), residual, cosine, size)
    expected = t("lab.reading", run=variant_label("both", t), tokens=t(tokens[0], **tokens[1]),
                 size=t(change[0], **change[1]))
    assert run_reading("both", run, t).startswith(expected)  # a note on Pre-LN's growth may follow


@LANGS
@pytest.mark.parametrize("placement, growth, collapsed, expected", [
    ("post", [1.0, 1.0], True, ["lab.reading.post_ln_deep"]),
    ("post", [1.0, 1.0], False, []),
    ("pre", [1.0, 50.0], False, ["lab.reading.pre_ln_grows"]),
    ("pre", [1.0, 2.0], False, []),
])
def test_a_run_with_both_stabilisers_on_is_read_with_the_lessons_story(lang, placement, growth, collapsed, expected):
    """The Explorer calls both stabilisers on stable; the lab says why a deep plain Post-LN stack
    can still collapse at initialisation and why a Pre-LN stream may grow."""
    t = Text(lang)
    setup = LabSetup(d_model=16, tokens=8, heads=2, depth=1, placement=placement)
    residual = [1.0, 1e-20] if collapsed else [1.0, 0.5]
    run = made_curves(setup, residual, [0.1, 0.1], growth)
    reading = run_reading("this", run, t)
    for key in ("lab.reading.post_ln_deep", "lab.reading.pre_ln_grows"):
        assert (t(key) in reading) == (key in expected)
    off = made_curves(replace(setup, residual=False), residual, [0.1, 0.1], growth)
    assert t("lab.reading.post_ln_deep") not in run_reading("this", off, t)
