"""The Depth lab's state, figures and tables: pure functions, no Streamlit.

``lab_setup`` turns the controls' values into a runnable :class:`~blockstab.lab.LabSetup` (and says
what it had to change); ``curves_figure`` draws the four per-layer readouts of any set of runs;
``finding_rows`` lays out a paper preset's claims beside ours.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from blockstab.lab import FLOAT_FLOOR, MAX_SECONDS, BudgetError, DepthCurves, LabSetup, check_budget, compared_setups
from blockstab.papers import PaperRun

from .text import Text

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


def _plotted(values: np.ndarray, floored: bool) -> tuple[list, bool, bool]:
    """Values ready for the chart: clipped up to the float floor where ``floored``; non-finite
    values left out (a gap). Also whether anything was clipped and whether anything overflowed."""
    values = np.asarray(values, dtype=float)
    overflow = bool((~np.isfinite(values)).any())
    clipped = bool(floored and (values[np.isfinite(values)] < FLOAT_FLOOR).any())
    shown = np.maximum(values, FLOAT_FLOOR) if floored else values
    return [float(v) if np.isfinite(v) else None for v in shown], clipped, overflow


def curves_figure(curves: dict[str, DepthCurves], t: Text, projector: bool = False) -> go.Figure:
    """Four panels against depth, one line per run: token collapse, token similarity, stream size
    and the gradient norm of each block's weights at initialisation."""
    font = 20 if projector else 13
    fig = make_subplots(rows=2, cols=2, subplot_titles=[t(f"lab.panel.{p}") for p in PANELS],
                        horizontal_spacing=0.09, vertical_spacing=0.16)
    clipped = overflow = False
    for index, (variant, run) in enumerate(curves.items()):
        colour = PALETTE[index % len(PALETTE)]
        for panel_index, panel in enumerate(PANELS):
            values = getattr(run, panel)
            if values is None:
                continue
            layers = np.arange(len(values)) + (1 if panel == "gradient_norm" else 0)
            y, was_clipped, overflowed = _plotted(values, panel in FLOORED_PANELS)
            clipped, overflow = clipped or was_clipped, overflow or overflowed
            fig.add_trace(go.Scatter(x=layers, y=y, mode="lines", name=variant_label(variant, t),
                                     legendgroup=variant, showlegend=panel_index == 0,
                                     line={"color": colour, "width": 4 if projector else 2.5}),
                          row=panel_index // 2 + 1, col=panel_index % 2 + 1)
    for panel_index, panel in enumerate(PANELS):
        where = {"row": panel_index // 2 + 1, "col": panel_index % 2 + 1}
        fig.update_xaxes(title_text=t("lab.axis.block"), **where)
        fig.update_yaxes(type="log" if panel in LOG_PANELS else "linear", exponentformat="power", **where)
    notes = [t("lab.floor_note", floor=FLOAT_FLOOR)] if clipped else []
    notes += [t("lab.overflow_note")] if overflow else []
    fig.update_layout(
        height=760 if projector else 680, template="plotly_white", font={"size": font},
        margin={"l": 60, "r": 20, "t": 60, "b": 110},
        legend={"orientation": "h", "yanchor": "top", "y": -0.09, "x": 0},
        annotations=[*fig.layout.annotations,
                     *([go.layout.Annotation(text=" ".join(notes), showarrow=False, xref="paper", yref="paper",
                                              x=0, y=-0.2, xanchor="left", font={"size": font - 2})]
                       if notes else [])],
    )
    return fig


COLLAPSED = 1e-3  # relative residual below which the tokens count as one vector
SIZE_CHANGE = 10.0  # stream RMS growth or shrinkage worth naming


def run_reading(variant: str, run: DepthCurves, t: Text) -> str:
    """One sentence on a run, computed from its curves: whether and when the tokens collapsed,
    and what happened to the stream's size."""
    collapsed = np.flatnonzero(run.relative_residual < COLLAPSED)
    tokens = (t("lab.reading.collapsed", block=int(collapsed[0])) if collapsed.size
              else t("lab.reading.distinct", residual=_number(run.relative_residual[-1])))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        change = run.stream_rms[-1] / run.stream_rms[0]
    if not np.isfinite(change):
        size = t("lab.reading.overflow")
    elif change > SIZE_CHANGE:
        size = t("lab.reading.grew", factor=_number(change))
    elif change < 1 / SIZE_CHANGE:
        size = t("lab.reading.shrank", factor=_number(1 / change))
    else:
        size = t("lab.reading.steady")
    return t("lab.reading", run=variant_label(variant, t), tokens=tokens, size=size)


def _number(value: float) -> str:
    return f"{value:.3g}" if np.isfinite(value) else "∞"


def summary_rows(curves: dict[str, DepthCurves], t: Text) -> list[dict]:
    """One row per run: where each readout ends up after the last block."""
    rows = []
    for variant, run in curves.items():
        gradient = run.gradient_norm
        rows.append({
            t("lab.col.run"): variant_label(variant, t),
            t("lab.col.residual"): _number(run.relative_residual[-1]),
            t("lab.col.cosine"): _number(run.pairwise_cosine[-1]),
            t("lab.col.rms"): _number(run.stream_rms[-1]),
            t("lab.col.gradient_ratio"): "–" if gradient is None else _number(gradient[0] / gradient[-1]),
        })
    return rows


def _formatted(values: dict) -> dict:
    return {k: _number(v) if isinstance(v, float) else v for k, v in values.items()}


def finding_rows(run: PaperRun, t: Text) -> list[dict]:
    """The paper's claim, ours, and a pass/fail badge, one row per finding."""
    return [{
        t("lab.col.published"): t(f"paper.{run.paper}.finding.{f.claim}.published"),
        t("lab.col.ours"): t(f"paper.{run.paper}.finding.{f.claim}.ours", **_formatted(f.values)),
        t("lab.col.badge"): t("lab.pass") if f.passed else t("lab.fail"),
    } for f in run.findings]
