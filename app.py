"""BlockStab: the router. Page config once, language and projector mode, then the chosen page."""

import streamlit as st

from ui.text import Text
from ui.widgets import app_chrome, language, warn_about_url

st.set_page_config(page_title="BlockStab", page_icon="🧱", layout="wide")
t = Text(language())
warn_about_url(t)
st.session_state["projector_on"] = app_chrome(t)

pages = [
    st.Page("pages/explorer.py", title=t("page.explorer"), icon="🔬", url_path="explore", default=True),
    st.Page("pages/norm_geometry.py", title=t("page.geometry"), icon="📐", url_path="geometry"),
]
st.navigation(pages, position="sidebar").run()
