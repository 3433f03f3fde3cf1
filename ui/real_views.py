"""The Real model page's verdict, figures and tables: pure functions of a
:class:`~blockstab.ablations.Comparison`, no Streamlit.

The verdict is computed from the numbers (:func:`findings`); each of its sentences is checked
against the engine in tests/views/test_real_views.py. Tokens are user text: Plotly labels are escaped.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import plotly.graph_objects as go

from blockstab.ablations import Comparison, LayerReadouts
from blockstab.pretrained import DEPTH
from blockstab.readouts import pairwise_cosines

from .examples import plotly_text
from .numbers import readable
from .text import Text
from .views.describe import curve_text
from .views.style import OTHER_TOKENS, PLOTLY_WHITE, ink_layout, subplot_grid, unvalidated, wrap

ABLATED, INTACT = "#0072B2", OTHER_TOKENS
# (catalog key, which run, colour, line dash) of the two runs every figure draws
RUNS = (("real.intact", "intact", INTACT, "dash"), ("real.ablated", "ablated", ABLATED, "solid"))
COLLAPSED = 0.99  # cosine from which two tokens count as pointing the same way
SIZE_CHANGE = 10.0  # RMS ratio (ablated / intact) worth naming, either way
MEANING_KEPT, MEANING_LOST = 0.9, 0.5  # cosine of the ablated to the intact sentence embedding
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
        said = [("real.verdict.intact", {"closest": f"{pair_cosines(c.intact)[-1].max():.3f}",
                                         "cosine": readable(c.intact.pairwise_cosine[-1])})]
    else:
        said = [_tokens(c), _size(c), _meaning(c)]
    apart = c.paraphrase - c.unrelated >= TELLS_APART
    said.append(("real.verdict.tells_apart" if apart else "real.verdict.confused",
                 {"paraphrase": f"{c.paraphrase:.3f}", "unrelated": f"{c.unrelated:.3f}"}))
    return said


def pair_cosines(run: LayerReadouts) -> np.ndarray:
    """The cosine of every pair of tokens after each layer, ``(layers, pairs)``: a readout no merge
    hides (the mean pairwise cosine can be 0.86 while 82 of 136 pairs point the same way)."""
    gram = pairwise_cosines(np.asarray(run.stream, dtype=np.float64))
    return gram[:, *np.triu_indices(gram.shape[-1], 1)]


def _tokens(c: Comparison) -> tuple[str, dict]:
    pairs = pair_cosines(c.ablated)
    spread = {"cosine": readable(c.ablated.pairwise_cosine[-1]), "intact": readable(c.intact.pairwise_cosine[-1])}
    one_way = np.all(pairs >= COLLAPSED, axis=1)[1:]  # blocks 1-6
    if one_way[-1]:  # from the block after the last one with a pair apart
        block = 1 if one_way.all() else len(one_way) - int(np.argmin(one_way[::-1])) + 1
        return "real.verdict.collapse", {"block": block, "floor": f"{COLLAPSED:g}"}
    merged = int(np.sum(pairs[-1] >= COLLAPSED))
    if merged:
        return "real.verdict.merged", {"merged": merged, "pairs": pairs.shape[1], "floor": f"{COLLAPSED:g}", **spread}
    return "real.verdict.distinct", {"closest": f"{pairs[-1].max():.3f}", **spread}


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
    if c.embedding_cosine >= MEANING_KEPT:
        return "real.verdict.meaning_kept", cosine
    if c.embedding_cosine >= MEANING_LOST:
        return "real.verdict.meaning_moved", cosine
    return "real.verdict.meaning_lost", cosine


def verdict_text(c: Comparison, t: Text) -> str:
    """The verdict as a Markdown list (no user text in it)."""
    return "\n".join(f"- {t(key, **fields)}" for key, fields in findings(c))


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain dicts, without Plotly's validation (validating the three figures cost ~60 ms of
    every page update, docs/benchmarks.md)."""
    return unvalidated({"data": data, "layout": ink_layout(layout)})


def layers_figure(c: Comparison, t: Text, projector: bool = False, phone: bool = False) -> go.Figure:
    """The three per-layer readouts, intact (grey, dashed) beside ablated: collapse, size, identity;
    one under another on a phone."""
    layers = list(range(DEPTH + 1))
    titles = tuple(wrap(t(f"real.panel.{p}")) for p in PANELS)
    rows, cols = (3, 1) if phone else (1, 3)
    layout = subplot_grid(rows, cols, titles, 0.16, 0.08)
    data = []
    for index, panel in enumerate(PANELS):
        axis = "" if index == 0 else str(index + 1)  # panel i's axes: x, y; x2, y2; x3, y3
        for name, run, colour, dash in shown_runs(c):
            data.append({"type": "scatter", "x": layers, "y": [float(v) for v in getattr(getattr(c, run), panel)],
                         "mode": "lines+markers", "name": t(name), "legendgroup": name, "showlegend": index == 0,
                         "line": {"color": colour, "dash": dash, "width": 4 if projector else 2.5},
                         "xaxis": "x" + axis, "yaxis": "y" + axis})
        layout["xaxis" + axis].update(title={"text": t("real.axis.block")}, tickvals=layers)
    title_font = 20 if projector else 14
    for annotation in layout["annotations"]:
        annotation["font"]["size"] = title_font
    layout["yaxis"]["range"] = [-0.05, 1.05]
    layout["yaxis2"].update(type="log", exponentformat="power")
    layout["yaxis3"]["range"] = [-1.05, 1.05]
    # Above the panels, in pixels: the panel titles' lines, then one legend row over them.
    above = int(1.3 * title_font * max(title.count("<br>") + 1 for title in titles)) + 10
    height, top, bottom = int((460 if projector else 380) * (2.6 if phone else 1)), above + 2 * title_font + 10, 40
    layout.update(height=height, template=PLOTLY_WHITE,
                  font={"size": 18 if projector else 13}, margin={"l": 50, "r": 20, "t": top, "b": bottom},
                  legend={"orientation": "h", "yanchor": "bottom", "y": 1 + above / (height - top - bottom), "x": 0})
    return _figure(data, layout)


def meaning_figure(c: Comparison, t: Text, projector: bool = False) -> go.Figure:
    """Similarity of the incident sentence to its paraphrase and to the unrelated sentence, intact
    and ablated, on a fixed axis from -1 to 1."""
    labels = [t("real.bar.paraphrase"), t("real.bar.unrelated")]
    data = []
    for name, run, colour, _ in shown_runs(c):
        values = (c.intact_paraphrase, c.intact_unrelated) if run == "intact" else (c.paraphrase, c.unrelated)
        data.append({"type": "bar", "y": labels, "x": list(values), "name": t(name), "orientation": "h",
                     "marker": {"color": colour}, "text": [f"{v:.3f}" for v in values], "textposition": "outside"})
    return _figure(data, {
        "xaxis": {"range": [-1.1, 1.25], "title": {"text": wrap(t("real.axis.similarity"))}},
        "yaxis": {"autorange": "reversed"},
        "title": {"text": wrap(t("real.meaning_title"))}, "barmode": "group", "height": 300 if projector else 260,
        "template": PLOTLY_WHITE, "font": {"size": 18 if projector else 13},
        "margin": {"l": 20, "r": 20, "t": 70, "b": 60}, "legend": {"orientation": "h", "y": -0.45}})


def layers_description(c: Comparison, t: Text) -> str:
    """The per-layer readouts in words: per panel, each run's value at the embeddings and at the last block."""
    return t.sentences(t("describe.panel", panel=t(f"real.panel.{panel}"), curves=t("describe.separator").join(
        t("describe.run", run=t(name), curve=curve_text(getattr(getattr(c, run), panel), 0, t))
        for name, run, _, _ in shown_runs(c))) for panel in PANELS)


def meaning_description(c: Comparison, t: Text) -> str:
    """The similarity bars in words, as their labels print them."""
    values = {"intact": (c.intact_paraphrase, c.intact_unrelated), "ablated": (c.paraphrase, c.unrelated)}
    return t("describe.meaning", bars=t("describe.separator").join(
        t("describe.run", run=t(name), curve=t("describe.similarities", paraphrase=f"{values[run][0]:.3f}",
                                                unrelated=f"{values[run][1]:.3f}"))
        for name, run, _, _ in shown_runs(c)))


def separate_points(points: np.ndarray) -> int:
    """How many separate points ``points`` make on the projection (within 0.01: one point)."""
    return len(np.unique(np.round(points, 2), axis=0))


def projection_description(c: Comparison, t: Text) -> str:
    """The projection in words: per run, how many separate points the tokens make at the embeddings
    and at the last block."""
    return t("describe.projection", n=len(c.tokens), runs=t("describe.separator").join(
        t("describe.run", run=t(name), curve=t("describe.points", first=separate_points(getattr(c, f"{run}_points")[0]),
                                                last=separate_points(getattr(c, f"{run}_points")[-1]), block=DEPTH))
        for name, run, _, _ in shown_runs(c)))


PROJECTION_COLUMNS = 4  # seven panels on two rows, the legend in the eighth place (two a row on a phone)
PANEL_STEP = 2.4  # panel centres apart, in the units of the unit disk each panel shows (radius 1.05)
HALF = 1.05
PHONE_PLOT_WIDTH = 330  # px: the projection's plot on a 390 px phone, which sets its height there


def panel_centre(layer: int, columns: int = PROJECTION_COLUMNS) -> tuple[float, float]:
    """Where layer ``layer``'s panel sits in the figure's one pair of axes."""
    row, col = divmod(layer, columns)
    return col * PANEL_STEP, -row * PANEL_STEP


def projection_figure(c: Comparison, t: Text, projector: bool = False, phone: bool = False) -> go.Figure:
    """Each layer's unit-length tokens on two axes fitted on the intact model at that layer, the
    same axes for every ablation: seven fixed squares side by side on one pair of equal axes (so
    nothing rescales), and tokens that merge land on one point."""
    columns = 2 if phone else PROJECTION_COLUMNS
    layers = range(DEPTH + 1)
    centres = np.array([panel_centre(layer, columns) for layer in layers])
    words = [f"{plotly_text(token)} · {layer_name(layer, t)}" for layer in layers for token in c.tokens]
    data = []
    for name, run, colour, _ in shown_runs(c):
        points = (getattr(c, f"{run}_points") + centres[:, None, :]).reshape(-1, 2)
        data.append({"type": "scatter", "x": points[:, 0], "y": points[:, 1], "mode": "markers", "text": words,
                     "name": t(name), "hovertemplate": "%{text}<extra></extra>",
                     "marker": {"color": colour, "size": 10 if projector else 7,
                                "opacity": 0.5 if run == "intact" else 0.9}})
    frame = {"line": {"color": "#BBBBBB", "width": 1}, "layer": "below"}
    shapes = [shape for x, y in centres for shape in (
        {"type": "rect", "x0": x - HALF, "x1": x + HALF, "y0": y - HALF, "y1": y + HALF, **frame},
        {"type": "line", "x0": x - HALF, "x1": x + HALF, "y0": y, "y1": y, **frame},
        {"type": "line", "x0": x, "x1": x, "y0": y - HALF, "y1": y + HALF, **frame})]
    titles = [{"x": x, "y": y + HALF, "text": layer_name(layer, t), "showarrow": False, "yanchor": "bottom",
               "font": {"size": 18 if projector else 13}} for layer, (x, y) in zip(layers, centres, strict=True)]
    hidden = {"visible": False, "fixedrange": True}
    rows = -(-len(layers) // columns)
    left, right = -HALF - 0.05, (columns - 1) * PANEL_STEP + HALF + 0.05
    bottom, top = -(rows - 1) * PANEL_STEP - HALF - 0.05, HALF + 0.35
    legend_x, legend_y = panel_centre(len(layers), columns)  # the first free place
    return _figure(data, {
        "title": {"text": wrap(t("real.projection_title"))}, "template": PLOTLY_WHITE,
        "height": int(PHONE_PLOT_WIDTH * (top - bottom) / (right - left)) + 90 if phone else 680 if projector else 600,
        "font": {"size": 16 if projector else 12}, "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
        "xaxis": {**hidden, "range": [left, right]},
        "yaxis": {**hidden, "range": [bottom, top], "scaleanchor": "x"},
        "shapes": shapes, "annotations": titles,
        "legend": {"orientation": "v", "xanchor": "left", "x": (legend_x - HALF - left) / (right - left),
                   "y": (legend_y - bottom) / (top - bottom)}})


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
