"""The Depth lab's state, figures and tables: pure functions, no Streamlit.

``lab_setup`` turns the controls' values into a runnable :class:`~blockstab.lab.LabSetup` (and says
what it had to change); ``curves_figure`` draws the four per-layer readouts of any set of runs;
``finding_rows`` lays out a paper preset's claims beside ours, ``published_figure`` our curves beside a
paper's figure. Numbers are written as a student reads them (``readable``: 1.21 × 10⁻¹⁶⁰).
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from blockstab.lab import FLOAT_FLOOR, MAX_SECONDS, BudgetError, DepthCurves, LabSetup, check_budget, compared_setups
from blockstab.papers import PaperRun, PublishedCurve

from .numbers import readable, value_range
from .text import Text
from .views.describe import curve_text
from .views.style import ink

# Okabe-Ito, in a fixed order so a variant keeps its colour from chart to chart.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999")
# Every part of a variant id ("attention.bert", "one.96", "both"): each has a label in the catalogs.
VARIANT_PARTS = ("this", "neither", "residual_only", "norm_only", "both", "post", "pre", "attention", "skip", "mlp",
                 "bert", "fan_in", "one", "inv_sqrt_depth", "plain", "deepnorm")
PANELS = ("relative_residual", "pairwise_cosine", "stream_rms", "gradient_norm")
LOG_PANELS = {"relative_residual", "stream_rms", "gradient_norm"}
# Only the relative residual is a ratio whose float64 rounding floor is known; tiny sizes and
# gradients are real values (a vanishing stream reaches 1e-40 honestly) and are drawn as they are.
FLOORED_PANELS = {"relative_residual"}


def lab_setup(values: dict) -> tuple[LabSetup, list[tuple[str, dict]]]:
    """The setup the lab's controls describe, made runnable, and a note (catalog key, fields) for
    every value that had to change: more heads than features, or runs (all the compared ones,
    with or without gradients) over the time budget."""
    notes = []
    heads = values["lab_heads"]
    if heads > values["lab_width"]:
        notes.append(("lab.note.heads", {"heads": heads, "width": values["lab_width"]}))
        heads = values["lab_width"]
    setup = LabSetup(d_model=values["lab_width"], tokens=values["lab_tokens"], heads=heads,
                     depth=values["lab_depth"], init=values["lab_init"], seed=values["lab_seed"],
                     placement=values["lab_placement"], norm=values["lab_norm"],
                     residual=values["lab_residual"], residual_scale=values["lab_scale"])
    runs = len(compared_setups(setup, values["lab_compare"]))
    try:
        check_budget(setup, values["lab_gradients"], runs)
    except BudgetError as error:
        notes.append(("lab.note.budget", {"depth": setup.depth, "max_depth": error.max_depth,
                                          "seconds": error.seconds, "limit": MAX_SECONDS}))
        setup = replace(setup, depth=error.max_depth)
    return setup, notes


def variant_label(variant: str, t: Text) -> str:
    """``"skip.bert"`` -> "attention + skip · BERT init"; a number is a depth."""
    return " · ".join(t("lab.variant_depth", depth=part) if part.isdigit() else t(f"lab.variant.{part}")
                      for part in variant.split("."))


def _plotted(values: np.ndarray, floored: bool) -> list:
    """Values ready for the chart: clipped up to the float floor where ``floored``; non-finite
    values left out (a gap, explained by :func:`chart_notes`)."""
    values = np.asarray(values, dtype=float)
    shown = np.maximum(values, FLOAT_FLOOR) if floored else values
    return [float(v) if np.isfinite(v) else None for v in shown]


def shown_panels(curves: dict[str, DepthCurves]) -> tuple[str, ...]:
    """The panels with something to draw (the gradient panel only when gradients were run)."""
    return tuple(p for p in PANELS if any(getattr(run, p) is not None for run in curves.values()))


def curves_figure(curves: dict[str, DepthCurves], t: Text, projector: bool = False,
                  phone: bool = False) -> go.Figure:
    """Readouts against depth, one line per run and one panel per readout: token collapse, token
    similarity, stream size and (when run) the gradient norm of each block's weights; on a phone
    one panel a row."""
    panels = shown_panels(curves)
    columns = 1 if phone else 2 if len(panels) == 4 else len(panels)
    rows = len(panels) // columns

    def cell(index):
        return {"row": index // columns + 1, "col": index % columns + 1}

    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[t(f"lab.panel.{p}") for p in panels],
                        horizontal_spacing=0.09, vertical_spacing=(0.2 if projector else 0.16) / (2 if phone else 1))
    colours = variant_colours(curves)
    for variant, run in curves.items():
        for panel_index, panel in enumerate(panels):
            values = getattr(run, panel)
            layers = np.arange(len(values)) + (1 if panel == "gradient_norm" else 0)
            fig.add_trace(go.Scatter(x=layers, y=_plotted(values, panel in FLOORED_PANELS), mode="lines",
                                     name=variant_label(variant, t), legendgroup=variant,
                                     showlegend=panel_index == 0,
                                     line={"color": colours[variant], "width": 4 if projector else 2.5}),
                          **cell(panel_index))
    for panel_index, panel in enumerate(panels):
        fig.update_xaxes(title_text=t("lab.axis.block"), **cell(panel_index))
        fig.update_yaxes(type="log" if panel in LOG_PANELS else "linear", exponentformat="power",
                         **cell(panel_index))
    fig.update_annotations(font_size=20 if projector else 14)  # the panel titles
    plot_height, top = (380 if projector else 340 if not phone else 300) * rows, 130 if projector else 100
    fig.update_layout(  # the legend sits above the panel titles, in the top margin
        height=plot_height + top + 60, template="plotly_white", font={"size": 20 if projector else 13},
        margin={"l": 60, "r": 20, "t": top, "b": 60},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1 + (46 if projector else 34) / plot_height, "x": 0},
    )
    return ink(fig)


def curves_description(curves: dict[str, DepthCurves], t: Text) -> str:
    """The lab's chart in words: per panel, each run's curve from its first block to its last."""
    parts = []
    for panel in shown_panels(curves):
        runs = [(variant, getattr(run, panel)) for variant, run in curves.items() if getattr(run, panel) is not None]
        first = 1 if panel == "gradient_norm" else 0
        parts.append(t("describe.panel", panel=t(f"lab.panel.{panel}"), curves=t("describe.separator").join(
            t("describe.run", run=variant_label(variant, t), curve=curve_text(values, first, t))
            for variant, values in runs)))
    return t.sentences(parts)


def chart_notes(curves: dict[str, DepthCurves], t: Text) -> list[str]:
    """What the chart leaves out: collapse values at the float floor, and overflowed values."""
    notes = []
    if any((run.relative_residual < FLOAT_FLOOR).any() for run in curves.values()):
        notes.append(t("lab.floor_note", floor=readable(FLOAT_FLOOR)))
    if any(not np.isfinite(getattr(run, p)).all() for run in curves.values() for p in PANELS
           if getattr(run, p) is not None):
        notes.append(t("lab.overflow_note"))
    return notes


COLLAPSED = 1e-3  # relative residual below which the tokens count as one vector
ALIGNED = 0.95  # mean pairwise cosine above which the tokens are on their way to one direction
SIZE_CHANGE = 10.0  # stream RMS growth or shrinkage worth naming


def run_reading(variant: str, run: DepthCurves, t: Text) -> str:
    """One sentence on a run, computed from its curves: whether and when the tokens collapsed,
    and what happened to the stream's size."""
    collapsed = np.flatnonzero(run.relative_residual < COLLAPSED)
    if collapsed.size:
        tokens = t("lab.reading.collapsed", block=int(collapsed[0]), threshold=readable(COLLAPSED))
    elif run.pairwise_cosine[-1] > ALIGNED:
        tokens = t("lab.reading.aligning", cosine=readable(run.pairwise_cosine[-1]),
                   residual=readable(run.relative_residual[-1]))
    else:
        tokens = t("lab.reading.distinct", residual=readable(run.relative_residual[-1]))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        change = run.stream_rms[-1] / run.stream_rms[0]
    if not np.isfinite(change):
        size = t("lab.reading.overflow")
    elif change > SIZE_CHANGE:
        size = t("lab.reading.grew", factor=readable(change))
    elif change < 1 / SIZE_CHANGE:
        size = t("lab.reading.shrank", factor=readable(1 / change))
    else:
        size = t("lab.reading.steady")
    reading = t("lab.reading", run=variant_label(variant, t), tokens=tokens, size=size)
    return t.sentences([reading, *(t(key) for key in both_on_notes(run, bool(collapsed.size), change))])


def both_on_notes(run: DepthCurves, collapsed: bool, change: float) -> list[str]:
    """Catalog keys that square a run with both stabilisers on with the Explorer's lesson: plain
    Post-LN at initialisation can still collapse when deep (what DeepNorm and 1/sqrt(L) scaling
    fix), and a Pre-LN stream grows while every sublayer reads a normalized copy."""
    setup = run.setup
    if not (setup.residual and setup.norm != "none" and setup.residual_scale == "one"):
        return []
    notes = []
    if collapsed and setup.placement == "post":
        notes.append("lab.reading.post_ln_deep")
    if setup.placement == "pre" and np.isfinite(change) and change > SIZE_CHANGE:
        notes.append("lab.reading.pre_ln_grows")
    return notes


def summary_rows(curves: dict[str, DepthCurves], t: Text) -> list[dict]:
    """One row per run: where each readout ends up after the last block."""
    rows = []
    for variant, run in curves.items():
        gradient = run.gradient_norm
        collapse = run.relative_residual[-1]
        rows.append({
            t("lab.col.run"): variant_label(variant, t),
            t("lab.col.residual"): (f"< {readable(FLOAT_FLOOR)}" if collapse < FLOAT_FLOOR
                                    else readable(collapse)),
            t("lab.col.cosine"): readable(run.pairwise_cosine[-1]),
            t("lab.col.rms"): readable(run.stream_rms[-1]),
            t("lab.col.gradient_ratio"): "–" if gradient is None else readable(gradient[0] / gradient[-1]),
        })
    return rows


def _formatted(values: dict) -> dict:
    return {k: readable(v) if isinstance(v, float) else v for k, v in values.items()}


def finding_rows(run: PaperRun, t: Text) -> list[dict]:
    """The paper's claim, ours, and a pass/fail badge, one row per finding."""
    return [{
        t("lab.col.published"): t(f"paper.{run.paper}.finding.{f.claim}.published"),
        t("lab.col.ours"): t(f"paper.{run.paper}.finding.{f.claim}.ours", **_formatted(f.values)),
        t("lab.col.badge"): t("lab.pass") if f.passed else t("lab.fail"),
    } for f in run.findings]


def variant_colours(variants) -> dict[str, str]:
    """One colour per variant, in the curves' order, so a variant keeps its colour from figure to figure."""
    return {variant: PALETTE[index % len(PALETTE)] for index, variant in enumerate(variants)}


def published_figure(run: PaperRun, t: Text, projector: bool = False) -> go.Figure:
    """Each published curve (dashed) beside ours, the mean over seeds (solid), layer by layer on
    a linear axis, as the paper draws them; one colour per variant."""
    fig = go.Figure()
    width = 4 if projector else 2.5
    colours = variant_colours([*run.curves, *(c.variant for c in run.published if c.variant not in run.curves)])
    for curve in run.published:
        colour, label = colours[curve.variant], variant_label(curve.variant, t)
        layers = np.arange(len(curve.ours))
        fig.add_trace(go.Scatter(x=layers, y=_plotted(curve.ours, False), mode="lines+markers",
                                 name=t("lab.published.ours", run=label, seeds=curve.seeds),
                                 line={"color": colour, "width": width}))
        fig.add_trace(go.Scatter(x=layers, y=_plotted(curve.published, False), mode="lines+markers",
                                 name=t("lab.published.paper", run=label), marker={"symbol": "x"},
                                 line={"color": colour, "width": width, "dash": "dash"}))
    fig.update_xaxes(title_text=t("lab.published.axis"), dtick=1)
    fig.update_yaxes(title_text=t("lab.published.value"), rangemode="tozero")
    fig.update_layout(title=t("lab.published.title"), height=560 if projector else 460, template="plotly_white",
                      font={"size": 20 if projector else 13}, margin={"l": 60, "r": 20, "t": 60, "b": 60})
    return ink(fig)


def published_description(run: PaperRun, t: Text) -> str:
    """The published curves beside ours, in words: per variant, each curve's first and last layer."""
    return t.sentences(t("describe.published", run=variant_label(c.variant, t), ours=curve_text(c.ours, 0, t, "layer"),
                         paper=curve_text(c.published, 0, t, "layer")) for c in run.published)


def layer_zero(curves: tuple[PublishedCurve, ...]) -> dict[str, str]:
    """Where the curves start (layer 0, the tokens fed in): ``ours`` and ``published``."""
    two_digits = functools.partial(readable, digits=2)
    return {"ours": value_range([c.ours[0] for c in curves], two_digits),
            "published": value_range([c.published[0] for c in curves], two_digits)}


def published_notes(run: PaperRun, t: Text) -> list[str]:
    """One line per published curve that ours does not reproduce: the layers where it is off."""
    return [t("lab.published.off", run=variant_label(c.variant, t), tolerance=readable(c.tolerance),
              layers=", ".join(str(layer) for layer in c.layers_beyond)) for c in run.published if c.layers_beyond]
