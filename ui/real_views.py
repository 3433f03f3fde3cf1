"""The Real model page's verdict, figures and tables: pure functions of a
:class:`~blockstab.ablations.Comparison`, no Streamlit.

The verdict is computed from the numbers (:func:`findings`); each of its sentences is checked
against the engine in tests/test_real_views.py. Tokens are user text: Plotly labels are escaped.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from blockstab.ablations import Comparison
from blockstab.pretrained import DEPTH

from .examples import plotly_text
from .numbers import readable
from .text import Text
from .views.style import OTHER_TOKENS, ink

ABLATED, INTACT = "#0072B2", OTHER_TOKENS
# (catalog key, which run, colour, line dash) of the two runs every figure draws
RUNS = (("real.intact", "intact", INTACT, "dash"), ("real.ablated", "ablated", ABLATED, "solid"))
COLLAPSED = 0.99  # mean pairwise cosine from which the tokens count as pointing one way
SIZE_CHANGE = 10.0  # RMS ratio (ablated / intact) worth naming, either way
KEPT, LOST = 0.9, 0.5  # cosine of the ablated to the intact sentence embedding
TELLS_APART = 0.1  # paraphrase similarity minus unrelated similarity
PANELS = ("pairwise_cosine", "rms", "cosine_to_input")


def shown_runs(c: Comparison) -> tuple:
    """The intact run, and the ablated one when something is switched off."""
    return RUNS[:1] if c.ablation.intact else RUNS


def layer_name(layer: int, t: Text) -> str:
    return t("real.layer.embeddings") if layer == 0 else t("real.layer.block", block=layer)


def findings(c: Comparison) -> list[tuple[str, dict]]:
    """The verdict's sentences (catalog key, fields), in reading order: tokens, size, meaning, test."""
    if c.ablation.intact:
        said = [("real.verdict.intact", {"cosine": readable(c.intact.pairwise_cosine[-1])})]
    else:
        said = [_tokens(c), _size(c), _meaning(c)]
    apart = c.paraphrase - c.unrelated >= TELLS_APART
    said.append(("real.verdict.tells_apart" if apart else "real.verdict.confused",
                 {"paraphrase": f"{c.paraphrase:.3f}", "unrelated": f"{c.unrelated:.3f}"}))
    return said


def _tokens(c: Comparison) -> tuple[str, dict]:
    collapsed = np.flatnonzero(c.ablated.pairwise_cosine[1:] >= COLLAPSED) + 1  # blocks 1-6
    if collapsed.size:
        return "real.verdict.collapse", {"block": int(collapsed[0]),
                                         "cosine": f"{c.ablated.pairwise_cosine[collapsed[0]]:.3f}"}
    return "real.verdict.distinct", {"cosine": readable(c.ablated.pairwise_cosine[-1]),
                                     "intact": readable(c.intact.pairwise_cosine[-1])}


def _size(c: Comparison) -> tuple[str, dict]:
    ratio = c.ablated.rms / c.intact.rms
    layer = int(np.argmax(np.abs(np.log(ratio))))
    if ratio[layer] >= SIZE_CHANGE:
        return "real.verdict.grows", {"ratio": readable(ratio[layer]), "block": layer}
    if ratio[layer] <= 1 / SIZE_CHANGE:
        return "real.verdict.shrinks", {"ratio": readable(1 / ratio[layer]), "block": layer}
    return "real.verdict.size_kept", {"ratio": readable(ratio[-1])}


def _meaning(c: Comparison) -> tuple[str, dict]:
    cosine = {"cosine": f"{c.embedding_cosine:.3f}"}
    if c.embedding_cosine >= KEPT:
        return "real.verdict.meaning_kept", cosine
    if c.embedding_cosine >= LOST:
        return "real.verdict.meaning_moved", cosine
    return "real.verdict.meaning_lost", cosine


def verdict_text(c: Comparison, t: Text) -> str:
    """The verdict as a Markdown list (no user text in it)."""
    return "\n".join(f"- {t(key, **fields)}" for key, fields in findings(c))


def layers_figure(c: Comparison, t: Text, projector: bool = False) -> go.Figure:
    """The three per-layer readouts, intact (grey, dashed) beside ablated: collapse, size, identity."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t(f"real.panel.{p}") for p in PANELS],
                        horizontal_spacing=0.08)
    layers = list(range(DEPTH + 1))
    for col, panel in enumerate(PANELS, start=1):
        for name, run, colour, dash in shown_runs(c):
            fig.add_trace(go.Scatter(x=layers, y=[float(v) for v in getattr(getattr(c, run), panel)],
                                     mode="lines+markers",
                                     name=t(name), legendgroup=name, showlegend=col == 1,
                                     line={"color": colour, "dash": dash, "width": 4 if projector else 2.5}),
                          row=1, col=col)
    fig.update_xaxes(title_text=t("real.axis.block"), tickvals=layers)
    fig.update_yaxes(range=[-0.05, 1.05], row=1, col=1)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=2)
    fig.update_yaxes(range=[-1.05, 1.05], row=1, col=3)
    fig.update_annotations(font_size=20 if projector else 14)
    fig.update_layout(height=460 if projector else 380, template="plotly_white",
                      font={"size": 18 if projector else 13}, margin={"l": 50, "r": 20, "t": 90, "b": 40},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.12, "x": 0})
    return ink(fig)


def meaning_figure(c: Comparison, t: Text, projector: bool = False) -> go.Figure:
    """Similarity of the incident sentence to its paraphrase and to the unrelated sentence, intact
    and ablated, on a fixed axis from -1 to 1."""
    labels = [t("real.bar.paraphrase"), t("real.bar.unrelated")]
    fig = go.Figure()
    for name, run, colour, _ in shown_runs(c):
        values = (c.intact_paraphrase, c.intact_unrelated) if run == "intact" else (c.paraphrase, c.unrelated)
        fig.add_trace(go.Bar(y=labels, x=list(values), name=t(name), orientation="h", marker_color=colour,
                             text=[f"{v:.3f}" for v in values], textposition="outside"))
    fig.update_xaxes(range=[-1.1, 1.25], title_text=t("real.axis.similarity"))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title={"text": t("real.meaning_title")}, barmode="group", height=300 if projector else 260,
                      template="plotly_white", font={"size": 18 if projector else 13},
                      margin={"l": 20, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.35})
    return ink(fig)


PROJECTION_COLUMNS = 4  # seven panels on two rows, the legend in the eighth place


def _panel(layer: int) -> dict:
    return {"row": layer // PROJECTION_COLUMNS + 1, "col": layer % PROJECTION_COLUMNS + 1}


def projection_figure(c: Comparison, t: Text, projector: bool = False) -> go.Figure:
    """Each layer's unit-length tokens on two axes fitted on the intact model at that layer, the
    same axes for every ablation and a fixed range: tokens that merge land on one point."""
    fig = make_subplots(rows=2, cols=PROJECTION_COLUMNS, subplot_titles=[layer_name(i, t) for i in range(DEPTH + 1)],
                        horizontal_spacing=0.03, vertical_spacing=0.08)
    words = [plotly_text(token) for token in c.tokens]
    for layer in range(DEPTH + 1):
        for name, run, colour, _ in shown_runs(c):
            points = getattr(c, f"{run}_points")
            fig.add_trace(go.Scatter(x=points[layer, :, 0], y=points[layer, :, 1], mode="markers", text=words,
                                     hovertemplate="%{text}<extra></extra>", name=t(name), legendgroup=name,
                                     showlegend=layer == 0,
                                     marker={"color": colour, "size": 10 if projector else 7,
                                             "opacity": 0.5 if run == "intact" else 0.9}),
                          **_panel(layer))
    fig.update_xaxes(range=[-1.05, 1.05], showticklabels=False, zeroline=True)
    fig.update_yaxes(range=[-1.05, 1.05], showticklabels=False, zeroline=True)
    fig.update_xaxes(visible=False, **_panel(DEPTH + 1))  # the eighth place holds the legend
    fig.update_yaxes(visible=False, **_panel(DEPTH + 1))
    for layer in range(DEPTH + 1):
        fig.update_yaxes(scaleanchor=f"x{layer + 1 if layer else ''}", **_panel(layer))
    fig.update_annotations(font_size=18 if projector else 13)
    fig.update_layout(title={"text": t("real.projection_title")}, height=680 if projector else 600,
                      template="plotly_white", font={"size": 16 if projector else 12},
                      margin={"l": 10, "r": 10, "t": 80, "b": 10},
                      legend={"orientation": "v", "x": 0.78, "y": 0.25, "xanchor": "left"})
    return ink(fig)


COLUMNS = ("pairwise_cosine", "rms", "cosine_to_input")


def layer_rows(c: Comparison, t: Text) -> list[dict]:
    """The numbers behind the figures, one row per layer (intact · ablated)."""
    return [{t("real.column.layer"): layer_name(i, t),
             **{t(f"real.panel.{p}"): f"{readable(getattr(c.intact, p)[i])} · {readable(getattr(c.ablated, p)[i])}"
                for p in COLUMNS}}
            for i in range(DEPTH + 1)]


def comparison_csv(c: Comparison) -> str:
    """Every number of the page, language-neutral: one row per layer, then the sentence-level ones."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["layer", *(f"{p}_{run}" for p in COLUMNS for run in ("intact", "ablated"))])
    for i in range(DEPTH + 1):
        writer.writerow([i, *(repr(float(getattr(run, p)[i])) for p in COLUMNS for run in (c.intact, c.ablated))])
    for name in ("embedding_cosine", "paraphrase", "unrelated", "intact_paraphrase", "intact_unrelated"):
        writer.writerow([name, repr(getattr(c, name))])
    return out.getvalue()
