"""Normalization in 2-D and 3-D: where RMSNorm and LayerNorm send random vectors, computed."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from blockstab.geometry import layernorm_plane_coordinates
from blockstab.sublayers import NormParams, layer_norm, rms_norm

from ..controls import ExplorerState
from ..text import Text
from .style import OTHER_TOKENS, TARGET, layout, plane_axes, style


def normalized_2d(samples: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random 2-D vectors, and what RMSNorm and LayerNorm (unit gain, no bias) make of them."""
    x = np.random.default_rng(seed).normal(scale=1.5, size=(samples, 2))
    identity = NormParams.identity(2)
    return x, rms_norm(x, identity, 1e-5), layer_norm(x, identity, 1e-5)


def normalized_3d_plane(samples: int = 200, seed: int = 0) -> np.ndarray:
    """Random 3-D vectors after LayerNorm, in coordinates of the plane orthogonal to (1, 1, 1)."""
    x = np.random.default_rng(seed).normal(scale=1.5, size=(samples, 3))
    return layernorm_plane_coordinates(layer_norm(x, NormParams.identity(3), 1e-5))


def geometry_2d_figure(state: ExplorerState, t: Text) -> go.Figure:
    """Random 2-D vectors and where each normalization sends them (computed, not drawn by hand);
    side by side, or one above the other on a phone."""
    s = style(state)
    x, rms, ln = normalized_2d()
    rows, cols = (2, 1) if state.phone else (1, 2)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=(t("geometry.rms_panel"), t("geometry.ln_panel")),
                        vertical_spacing=0.15)
    for panel, out in enumerate((rms, ln), start=1):
        cell = {"row": panel, "col": 1} if state.phone else {"row": 1, "col": panel}
        fig.add_trace(go.Scatter(x=x[:, 0], y=x[:, 1], mode="markers", name=t("geometry.inputs"),
                                 marker={"color": OTHER_TOKENS, "size": s["marker"] * 0.7}, showlegend=panel == 1),
                      **cell)
        fig.add_trace(go.Scatter(x=out[:, 0], y=out[:, 1], mode="markers", name=t("geometry.outputs"),
                                 marker={"color": TARGET, "size": s["marker"]}, showlegend=panel == 1),
                      **cell)
        plane_axes(fig, t, x, **cell)
    layout(fig, state, t, t("geometry.title_2d"))
    if state.phone:
        fig.update_layout(height=2 * s["height"], legend={"y": -0.1})
    return fig


def geometry_3d_figure(state: ExplorerState, t: Text) -> go.Figure:
    """3-D LayerNorm outputs seen in the plane orthogonal to (1, 1, 1): a circle of radius sqrt(3)."""
    s = style(state)
    plane = normalized_3d_plane()
    fig = go.Figure(go.Scatter(x=plane[:, 0], y=plane[:, 1], mode="markers", name=t("geometry.outputs"),
                               marker={"color": TARGET, "size": s["marker"] * 0.8}))
    layout(fig, state, t, t("geometry.title_3d"))
    fig.update_xaxes(title_text=t("geometry.plane_u"), range=[-2.2, 2.2])
    fig.update_yaxes(title_text=t("geometry.plane_v"), range=[-2.2, 2.2], scaleanchor="x")
    return fig
