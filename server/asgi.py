"""The app as its server serves it (``st.App``, Streamlit's public ASGI app): app.py, BlockStab's own
routes (``server.routes``) and each WebSocket's message pacing (``fair_share.InboundLimit``); then the
process's garbage collector set for a server that holds thousands of open streams (:func:`collect_seldom`)."""

import gc
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from server.address_limits import AddressLimits
from server.compression import Compression
from server.fair_share import InboundLimit
from server.routes import ROUTES
from ui.controls import ExplorerState
from ui.text import Text
from ui.views import FIGURES, explore

app = st.App(Path(__file__).resolve().parents[1] / "app.py", routes=ROUTES,
             middleware=[Middleware(Compression), Middleware(InboundLimit), Middleware(AddressLimits)])
YOUNG_OBJECTS = 10_000  # allocations between two collections of the youngest generation (Python's default: 700)


def collect_seldom() -> None:
    """Every figure drawn once (Plotly makes its validators on first use), then everything the process holds by
    now set aside from the collector for good (``gc.freeze``), and the youngest generation collected after
    :data:`YOUNG_OBJECTS` allocations, not 700: a page's run then leaves its short-lived objects to die young
    instead of promoting them. With 50 classes of 40 phones on one replica (some 600,000 objects, most of them
    the phones' open streams) a full collection stopped the process 0.3-1.3 s every few seconds, and those pauses
    were the step's p95 (docs/benchmarks-rounds.md, round 43)."""
    state = ExplorerState()
    result = explore(state)
    for figure in FIGURES.values():
        figure(state, result, Text("en"))
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])


collect_seldom()
