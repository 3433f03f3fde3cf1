"""A figure as the browser receives it: Plotly's JSON with typed arrays read as numbers."""

import base64
import json

import numpy as np
import plotly.graph_objects as go

from ui.views.depth import AXIS_ROOM, depth_bottom


def plain(fig: go.Figure, animation: bool = False) -> dict:
    """The figure as the browser receives it (Plotly's JSON), typed arrays read as numbers (a NaN
    as ``"nan"``: one NaN's bits may differ from another's), without the depth view's animation:
    no frames, slider or play button, and no room below the plot for them (the plot keeps its size)."""
    spec = json.loads(fig.to_json(), object_hook=_numbers)
    if not animation and spec.pop("frames", None):
        for key in ("sliders", "updatemenus"):
            spec["layout"].pop(key)
        axis, bottom = depth_bottom(spec["layout"]["font"]["size"])
        spec["layout"]["margin"]["b"] = max(axis, AXIS_ROOM)
        spec["layout"]["height"] -= bottom - max(axis, AXIS_ROOM)
    return spec


def _numbers(node: dict):
    if set(node) >= {"dtype", "bdata"}:
        values = np.frombuffer(base64.b64decode(node["bdata"]), dtype=node["dtype"])
        return ["nan" if np.isnan(v) else v for v in values.tolist()]
    return node
