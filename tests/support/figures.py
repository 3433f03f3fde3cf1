"""A figure as the browser receives it: Plotly's JSON with typed arrays read as numbers."""

import base64
import json
import re

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


def contrast(colour: str, background: str = "#ffffff") -> float:
    """WCAG 2 contrast ratio of two colours written #rrggbb (or rgba(...) on white, alpha ignored)."""
    def luminance(c: str) -> float:
        if c.startswith("rgb"):
            channels = [float(v) / 255 for v in re.findall(r"[\d.]+", c)[:3]]
        else:
            channels = [int(c.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(colour), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)
