"""Explorer: switch the stabilisers off and watch the action token.

The switches, the depth, the block and stage in focus, the verdict, the three figures and the
numbers of the block in focus are the instant Explorer (``ui/instant_explorer.py``): they change in
the browser. The sentence is Streamlit's; the page keeps the URL in step with the view the browser
reports, and a report reruns only the fragment that keeps the URL and the downloads (and has a
block range built when the block in focus moves to one not built yet)."""

from functools import partial

import streamlit as st

from server.caches import explored_csv, take_home_zip
from ui.chrome import language
from ui.controls import Control, ExplorerState
from ui.examples import sentence_caption
from ui.instant_explorer import instant_explorer
from ui.text import Text
from ui.widgets import explorer_controls, with_reported_view

t = Text(language())


@st.fragment
def switched(state: ExplorerState, instant: list[Control], shown: dict) -> None:
    """What the instant Explorer's view decides: the component, the URL, the CSV download and what
    the take-home download opens on (``shown``)."""
    state = shown["state"] = with_reported_view(state, instant)
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
shown = st.session_state.setdefault("explorer_shown", {})  # the view the browser last reported
switched(state, instant, shown)
# Outside the fragment, so a report-back does not resend it; zipped when clicked, for the view then shown.
# A download reruns nothing ("ignore"): a rerun replaced the file being fetched, and the click saved nothing.
st.download_button(t("download.take_home"), lambda: take_home_zip(shown["state"], t.lang),
                   file_name="blockstab-explorer.zip", mime="application/zip", key="download_take_home",
                   on_click="ignore")
