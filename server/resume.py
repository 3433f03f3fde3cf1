"""A page back on a server process that does not have its session: the process restarted, or a cluster's
replica died and HAProxy sent the page to another. Streamlit's page reconnects and keeps showing what it
had, but the new session has never run: its first request is a fragment's timer (which a new session
skips: it knows no fragment), a click carrying the old session's widget values, or a live class's teacher's
page asking for a run (``widgets/follow.js``: its poll was answered by another process). Such a first request
runs the whole page, which rebuilds the view from the URL and from what its components last held
(:func:`resumed_state`: the Explorer's view, touched just now), and the page says so (:data:`RESUMED`)."""

from __future__ import annotations

import json

RESUMED = "blockstab_resumed"  # set in the new session's state for its first run
RESUMED_STATES = "blockstab_resumed_states"  # the components' states the page came back with, by key
RAN = "_blockstab_ran"  # the attribute a session gets at its first request


def resumed(state) -> bool:
    """Whether a session's first request comes from a page that had a session before."""
    return state is not None and bool(state.fragment_id or state.widget_states.widgets)


def component_states(state) -> dict[str, str]:
    """The JSON states of the components in a request, by key (a new session maps a key to its id only when
    the widget registers in the run)."""
    from .streamlit_internals import widget_key  # noqa: PLC0415 - the server's process only

    return {widget_key(w.id): w.json_value for w in state.widget_states.widgets
            if w.WhichOneof("value") == "json_value"}


def resumed_state(key: str):
    """What the component ``key`` held when its page came back on this new session (``None`` if it
    did not, or if what the browser sent is not JSON: a script can send anything)."""
    import streamlit as st  # noqa: PLC0415 - a worker process imports this package without Streamlit

    try:
        return json.loads(st.session_state.get(RESUMED_STATES, {}).get(key, "null"))
    except ValueError:
        return None


def install() -> None:
    """Hook Streamlit's run requests (tests/browser/test_cluster_browser.py kills a replica under a page and
    fails if the page does not come back)."""
    from .streamlit_internals import hook_rerun_requests  # noqa: PLC0415 - the server's process only

    def first_runs_whole(rerun):
        def request(session, state=None) -> None:
            if not vars(session).get(RAN):
                setattr(session, RAN, True)
                if resumed(state):
                    state.fragment_id, state.is_auto_rerun = "", False
                    session.session_state[RESUMED] = True
                    session.session_state[RESUMED_STATES] = component_states(state)
            rerun(session, state)
        return request

    hook_rerun_requests(first_runs_whole)
