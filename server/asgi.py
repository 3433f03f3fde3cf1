"""The app as its server serves it (``st.App``, Streamlit's public ASGI app): app.py, BlockStab's own
routes (``server.routes``) and each WebSocket's message pacing (``fair_share.InboundLimit``)."""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from server.address_limits import AddressLimits
from server.compression import Compression
from server.fair_share import InboundLimit
from server.routes import ROUTES

app = st.App(Path(__file__).resolve().parents[1] / "app.py", routes=ROUTES,
             middleware=[Middleware(Compression), Middleware(InboundLimit), Middleware(AddressLimits)])
