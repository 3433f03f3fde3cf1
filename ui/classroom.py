"""A live class (``ui.live_class``) on the teacher's page (/class; a student's page is not a Streamlit page:
``server.class_routes``): a change applied in the store with its refusal as a message, the join link, the
class's Explorer view, a question's words, and the poll that follows the class."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from server.class_store import class_store
from server.client_address import address_of, behind_proxy
from server.lan import students_address
from server.routes import CLASS_VERSION, PROCESS

from .chrome import app_address, on_phone
from .controls import ExplorerState
from .lessons import QUESTIONS, lesson_facts
from .live_class import LiveClass, Refused, shown, teacher_token, view_state
from .text import Text

POLL_SECONDS = 1.0  # how often, on average, the page asks whether the class moved on (followed within 2 s)
POLL_SPREAD = 0.3  # the page waits POLL_SECONDS ± this share (several teachers' tabs do not ask at once)
RETRY_SECONDS = 3.0  # a page that asked for a run and got none (asked while its socket was down) asks again

FOLLOW_JS = Path(__file__).parent / "follow.js"
follower = st.components.v2.component("blockstab.follow", js=FOLLOW_JS.read_text(encoding="utf-8"))


def client_address() -> str:
    """The address the page's connection came from (the per-address limits), by the rule the app's routes
    follow too (``server.client_address``): behind a proxy, the last entry of the last X-Forwarded-For header;
    "unknown" when the session has no address (AppTest gives a stand-in object)."""
    return address_of(st.context.ip_address, st.context.headers.get_all("X-Forwarded-For"), behind_proxy())


def act(t: Text, code: str, change: Callable[[LiveClass], LiveClass]) -> LiveClass | None:
    """``change`` applied to the class in the store; a refusal is shown as its message (``None``)."""
    try:
        return class_store().update(code, change)
    except Refused as refused:
        st.error(t(refused.key), icon=":material/block:")
        return None


def join_link(code: str, lang: str) -> tuple[str, bool]:
    """The class's join link in ``lang`` (a student's default), and whether phones on the LAN can open it."""
    public = os.environ.get("BLOCKSTAB_PUBLIC_ADDRESS")  # host:port, in front of this process (the cluster)
    host, port = public.rsplit(":", 1) if public else (st.get_option("server.address") or "",
                                                       st.get_option("server.port"))
    address, reachable = students_address(host, int(port), app_address())
    return f"{address}/join?{urlencode({'class': code, 'lang': lang})}", reachable


def class_state(c: LiveClass, projector: bool) -> ExplorerState:
    """The Explorer's state on the class's view, on this page."""
    return view_state(c.view, projector, on_phone())


def question_text(c: LiveClass, t: Text) -> None:
    """The class's question: its exercise's title and its prompt."""
    question = QUESTIONS[c.question]
    st.subheader(t(f"ex.{question.exercise}.title"))
    st.markdown(t(f"ex.{question.id}.prompt"))


def explanation(c: LiveClass, t: Text) -> None:
    st.markdown(t(f"ex.{QUESTIONS[c.question].id}.explain", **lesson_facts()))


def follow(c: LiveClass) -> None:
    """The teacher's page follows the class: the browser polls what the page shows of it over HTTP
    (``ui/follow.js``, with the teacher's token, which acts on nothing) and runs the page again when that
    changed (the class moved on, a student joined or answered, or the class ended) or when another server
    process answers (this one is gone: a cluster's replica died). Mounted first in a run: the browser then
    waits on what this run shows while it runs."""
    token = teacher_token(c)
    url = CLASS_VERSION.format(code=c.code) + "?" + urlencode({"me": token})
    data = {"url": url, "seen": shown(c, token), "process": PROCESS, "every": POLL_SECONDS, "spread": POLL_SPREAD,
            "retry": RETRY_SECONDS}
    follower(key="class_follower", data=data, on_moved_change=lambda: None)
