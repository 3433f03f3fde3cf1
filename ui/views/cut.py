"""A figure across depth, cut to a stack's first blocks.

The lesson stack repeats one block, so the first ``n`` blocks of a deep run are the run ``n``
blocks deep (``tests/engine/test_readouts.py``). A view across depth is therefore drawn as the figure of
every block of the deep run and a *cut*: a small patch, computed from the first ``n`` blocks only,
that keeps the first ``n + 1`` points of the traces that run along depth and sets what depends on
``n`` (ranges, titles, notes, the tokens at block ``n``). The views build their own figure this
way, so a cut sent ahead to a browser draws what the view draws at that depth.

A cut is plain JSON-able data::

    {"points": n + 1, "along": [trace indices], "data": {index: trace update},
     "layout": layout update, "notes": [annotations to add]}

The block view is drawn the same way (``ui.views.block``): a frame every block and stage shares and
a cut that adds the arrows of the block and stage in focus (``"traces"``, the other keys absent).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

ALONG_DEPTH = ("x", "y", "customdata")  # a trace's arrays indexed by block (and its marker's colour)


def apply_cut(fig: go.Figure, cut: dict) -> go.Figure:
    """``fig`` (every block) cut to ``cut["points"]`` blocks, in place: the ``along`` traces keep
    their first points, ``data`` updates traces by index, ``traces`` are added after the figure's
    own, ``layout`` updates the layout (nested dicts are merged, lists replaced) and ``notes`` are
    added after the figure's own annotations."""
    points = cut.get("points")
    for index in cut.get("along", ()):
        trace = fig.data[index]
        longer = {key: trace[key][:points] for key in ALONG_DEPTH
                  if trace[key] is not None and len(trace[key]) > points}
        if longer:  # (the full view is its own cut: nothing to validate again)
            trace.update(longer)
        if isinstance(trace.marker.color, (tuple, list, np.ndarray)) and len(trace.marker.color) > points:
            trace.marker.color = trace.marker.color[:points]
    for index, update in cut.get("data", {}).items():
        fig.data[int(index)].update(update)
    fig.add_traces(cut.get("traces", []))
    fig.update_layout(cut["layout"])
    for note in cut["notes"]:
        fig.add_annotation(note)
    return fig
