"""A bare Streamlit baseline for the browser benchmarks: one slider, one toggle, one small chart.

Run from the repo root (so the same ``.streamlit/config.toml`` applies):
``streamlit run benchmarks/baseline_app.py``. ``benchmarks/browser_latency.py`` starts it itself.
The chart's data depends on both widgets, so every interaction changes what Plotly draws.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

depth = st.slider("Depth", 1, 100, 24, key="depth")
residual = st.toggle("Residual", value=True, key="residual")

x = np.arange(depth + 1)
y = np.sqrt(x) if residual else np.cos(x / 3.0) * depth / 10.0
st.plotly_chart(go.Figure(go.Scatter(x=x, y=y, mode="lines+markers")), key="baseline_chart")
