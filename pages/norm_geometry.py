"""Why LayerNorm in 2-D leaves only two points, and what RMSNorm does instead."""

import streamlit as st

from ui.controls import ExplorerState
from ui.text import Text
from ui.views.describe import geometry_2d_description, geometry_3d_description
from ui.views.geometry import geometry_2d_figure, geometry_3d_figure
from widgets.chrome import chart, language, on_phone

t = Text(language())
state = ExplorerState(projector=st.session_state.get("projector_on", False), phone=on_phone())

st.title(t("geometry.title"))
st.markdown(t("geometry.intro"))
chart(geometry_2d_figure(state, t), t, "geometry_2d", geometry_2d_description(t))
st.markdown(t("geometry.why_2d"))
chart(geometry_3d_figure(state, t), t, "geometry_3d", geometry_3d_description(t))
st.markdown(t("geometry.why_3d"))
st.page_link("pages/explorer.py", label=t("geometry.back"))
