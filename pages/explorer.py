"""Explorer: switch the stabilisers off and watch the action token.

The switches, the depth, the block and stage in focus, the verdict, the three figures and the
numbers of the block in focus are the instant Explorer (``widgets/explorer.py``): they change in
the browser. The sentence is Streamlit's; the page keeps the URL in step with the view the browser
reports, and a report reruns only the fragment that keeps the URL and the downloads (and has a
block range built when the block in focus moves to one not built yet)."""

from functools import partial

import streamlit as st

from blockstab.scenario import LESSON
from server.caches import explored_csv, take_home_zip
from ui.controls import Control, ExplorerState
from ui.examples import sentence_caption
from ui.study_page import Opened, address, view_of
from ui.text import Text
from widgets.chrome import language
from widgets.controls import explorer_controls, with_reported_view
from widgets.explorer import instant_explorer

t = Text(language())


@st.fragment
def switched(state: ExplorerState, instant: list[Control], for_download: dict) -> None:
    """What the instant Explorer's view decides: the component, the URL, the CSV download, and the view the
    take-home download opens on (``for_download``: its callable runs on a thread of its own, with no session
    to read the view from)."""
    state = for_download["state"] = with_reported_view(state, instant)
    if state.example == LESSON:  # (the light page is the lesson's sentence's)
        with st.container(key="study_link"):  # seen at a phone's width only (APP_CSS)
            st.markdown(t("study.phone_link", href=address(Opened("explorer", 1, view_of(state)), t.lang)))
    explorer = st.container()
    st.download_button(t("download.csv"), partial(explored_csv, state), file_name="blockstab-action-token.csv",
                       mime="text/csv", key="download_csv", on_click="ignore")  # written when clicked
    with explorer:  # above the download, and run last: it may build a block range once all else is sent
        instant_explorer(state, instant, t)


projector = st.session_state.get("projector_on", False)
if not projector:
    with st.container(key="explorer_head"):  # (the title and the sentence close together: DESKTOP_CSS)
        st.title(t("explorer.title"))
        caption = st.empty()
        with st.container(key="phone_hint"):  # shown at phone width only (APP_CSS)
            st.caption(t("explorer.phone_hint"))
state, instant = explorer_controls(t, projector)
if not projector:
    caption.caption(sentence_caption(state.example, t))
for_download = {"state": state}
switched(state, instant, for_download)
# Outside the fragment, so a report-back does not resend it; zipped when clicked, for the view then reported.
# A download reruns nothing ("ignore"): a rerun replaced the file being fetched, and the click saved nothing.
st.download_button(t("download.take_home"), lambda: take_home_zip(for_download["state"], t.lang),
                   file_name="blockstab-explorer.zip", mime="application/zip", key="download_take_home",
                   on_click="ignore")
