"""A page back on a server process that does not have its session: the process restarted, or a cluster's
replica died and HAProxy sent the page to another. Streamlit's page reconnects and keeps showing what it
had, but the new session has never run: its first request is a fragment's timer (which a new session
skips: it knows no fragment) or a click carrying the old session's widget values. Such a first request
runs the whole page, which rebuilds the view from the URL, and the page says so (:data:`RESUMED`)."""

from __future__ import annotations

RESUMED = "blockstab_resumed"  # set in the new session's state for its first run
RAN = "_blockstab_ran"  # the attribute a session gets at its first request


def resumed(state) -> bool:
    """Whether a session's first request comes from a page that had a session before."""
    return state is not None and bool(state.fragment_id or state.widget_states.widgets)


def install() -> None:
    """Hook Streamlit 1.67's rerun request (tests/browser/test_cluster_browser.py kills a replica
    under a page and fails if the page does not come back)."""
    from streamlit.runtime.app_session import AppSession

    rerun = AppSession._handle_rerun_script_request

    def first_runs_whole(session, state=None) -> None:
        if not vars(session).get(RAN):
            setattr(session, RAN, True)
            if resumed(state):
                state.fragment_id, state.is_auto_rerun = "", False
                session.session_state[RESUMED] = True
        rerun(session, state)

    AppSession._handle_rerun_script_request = first_runs_whole
