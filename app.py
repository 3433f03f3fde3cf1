"""BlockStab: the router. Page config once, language and projector mode, then the chosen page."""

import streamlit as st

from ui.text import Text
from ui.widgets import app_chrome, language, warn_about_url

projector_link = st.query_params.get("projector") == "true"
st.set_page_config(page_title="BlockStab", page_icon=":material/layers:", layout="wide",
                   initial_sidebar_state="collapsed" if projector_link else "auto")
t = Text(language())
warn_about_url(t)
st.session_state["projector_on"] = app_chrome(t)

pages = [
    st.Page("pages/explorer.py", title=t("page.explorer"), icon=":material/science:", url_path="explore", default=True),
    st.Page("pages/norm_geometry.py", title=t("page.geometry"), icon=":material/change_history:", url_path="geometry"),
]
st.navigation(pages, position="sidebar").run()
