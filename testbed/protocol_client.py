"""A Streamlit session without a browser: the WebSocket protocol as the frontend speaks it.

Used by ``classroom_load.py`` to put many sessions on the server while only a few real Chromium
pages measure the end-to-end latency (40 rendering pages saturate a 2-core machine by themselves).
Like the frontend, each rerun sends every widget's current value (read from the elements the
server sent, refs resolved from a local message cache), the page's URL query string (as the
server last set it) and the hashes of the messages it holds; a change of a widget inside a fragment
(the instant Explorer's) asks for a rerun of that fragment alone. With ``follows``, a session follows a
live class as the teacher's page does (``widgets/follow.js``): it reads what its page shows of the class over
HTTP and, when that changed, asks for a run. Loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import random
import ssl
import tempfile
import time
import urllib.parse
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from testbed import local_server

FINISHED_OK = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
# The Explorer's switches and depth are the instant Explorer's (a custom component): the browser
# reports them as the component's state, the whole view at once (ui/explorer/main.js).
INSTANT = ("residual", "norm", "norm_kind", "placement", "depth", "block", "focus")
FOLLOWER = "blockstab.follow"  # a live class's follower (widgets/follow.js), the other component a page may have


def is_follower(component) -> bool:
    return component.component_name.endswith(FOLLOWER)


def trigger_id(component_id: str) -> str:
    """The widget id a component's events travel under (Streamlit 1.67's ``_make_trigger_id(id, "events")``)."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id  # noqa: PLC0415

    return _make_trigger_id(component_id, "events")


def widget_key(widget_id: str) -> str:
    """The user key at the end of a widget id (``$$ID-<hash>-<key>``)."""
    return widget_id.rsplit("-", 1)[-1]


def widget_state(element, remembered: dict[str, WidgetState]) -> tuple[WidgetState, WidgetState] | None:
    """(value the frontend would report, the element's default value) for a widget element just
    drawn. Like the frontend, a value the user chose is remembered and wins over the element's
    default unless the server sets the value itself (``set_value``)."""
    kind = element.WhichOneof("type")
    proto = getattr(element, kind)
    widget_id = getattr(proto, "id", "")
    if not widget_id or kind not in ("checkbox", "slider", "radio", "selectbox"):
        return None  # buttons and the like report nothing until used
    default = WidgetState(id=widget_id)
    if kind == "checkbox":
        default.bool_value = proto.default
    elif kind == "slider":
        default.double_array_value.data.extend(proto.default)
    elif proto.HasField("default") and len(proto.options) > proto.default >= 0:
        default.string_value = proto.options[proto.default]
    elif not (proto.set_value and proto.raw_value) and widget_key(widget_id) not in remembered:
        return None  # ``index=None`` and nothing chosen yet: the frontend reports no value
    state = WidgetState.FromString(default.SerializeToString())
    if proto.set_value:
        if kind == "checkbox":
            state.bool_value = proto.value
        elif kind == "slider":
            del state.double_array_value.data[:]
            state.double_array_value.data.extend(proto.value)
        elif proto.raw_value:
            state.string_value = proto.raw_value
    elif widget_key(widget_id) in remembered:
        state.CopyFrom(remembered[widget_key(widget_id)])
        state.id = widget_id
    return state, default


class ProtocolSession:
    """One session: connect, run the page, then change widgets by key and time each rerun."""

    def __init__(self, port: int, query: str = "lang=en", page_name: str = "", follows: bool = False,
                 headers: dict[str, str] | None = None, source: str = "", tls: ssl.SSLContext | None = None):
        self.port, self.query, self.page_name = port, query, page_name  # page_name: a page's url_path
        self.tls = tls  # HTTPS (and wss) with this context, as a page served by HAProxy with --tls
        self.origin = f"{'https' if tls else 'http'}://localhost:{port}"
        # The handshake's extra headers (e.g. a forged X-Forwarded-For), and the loopback address to connect
        # from (any 127.x.y.z: another computer, as a proxy counts addresses).
        self.headers, self.source = dict(headers or {}), source
        self.follows = follows  # follow a live class, as the teacher's page does
        self.follower: asyncio.Task | None = None  # reading what the page shows of a live class (widgets/follow.js)
        self.cache: dict[str, ForwardMsg] = {}
        self.page_hash = ""
        self.widgets: dict[str, WidgetState] = {}  # by widget id, from the last finished run
        self.run_widgets: dict[str, WidgetState] = {}
        self.defaults: dict[str, WidgetState] = {}  # by key
        self.bound: set[str] = set()  # keys of widgets bound to a URL query parameter
        self.remembered: dict[str, WidgetState] = {}  # by key: what "the user" set
        self.url_bound: dict[str, str | None] = {}  # bound widgets' URL values (None: left out)
        self.exceptions = 0
        self.elements: list = []  # every element of the current run, as sent (a fragment's run: with the rest)
        self.element_fragments: list[str] = []  # the fragment each element was drawn in ("" for none)
        self.component_fragment = ""  # the fragment the instant Explorer is drawn in
        self.running_fragment = ""  # the fragment the rerun in flight runs ("" for the whole page)
        self.bytes_received = 0
        self.largest_received = self.largest_sent = 0  # bytes of one WebSocket frame
        self.session_id = ""  # the server's id for this session (file uploads name it)
        self.view: dict | None = None  # the instant Explorer's view, as its page would report it
        self.component_bytes = b""  # the instant Explorer's data, as last sent
        self.finished_elements: list = []  # every element of the last run that finished
        self._finished: asyncio.Future | None = None
        self._reader: asyncio.Task | None = None

    async def connect(self, timeout: float = 30.0) -> float:
        self.ws = await websockets.connect(
            f"{'wss' if self.tls else 'ws'}://localhost:{self.port}/_stcore/stream", subprotocols=["streamlit"],
            origin=self.origin, max_size=None, open_timeout=timeout, additional_headers=self.headers,
            **({"ssl": self.tls} if self.tls else {}), **({"local_addr": (self.source, 0)} if self.source else {}))
        self._reader = asyncio.create_task(self._read())
        return await self.rerun(timeout=timeout)

    def _take(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                return
            msg = cached
            kind = msg.WhichOneof("type")
        elif msg.metadata.cacheable and msg.hash:
            self.cache[msg.hash] = msg
        if kind == "new_session":
            if self.follows and msg.metadata.HasField("run"):  # the server says what runs: the page or a fragment
                self.running_fragment = next(iter(msg.metadata.run.fragment_ids), "")
                if not self.running_fragment:  # a run of the page mounts its follower afresh
                    self._stop_following()
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            kept = [i for i, f in enumerate(self.element_fragments) if self.running_fragment not in ("", f)]
            self.elements = [self.elements[i] for i in kept]
            self.element_fragments = [self.element_fragments[i] for i in kept]
            if not self.running_fragment:
                self.run_widgets = {}
        elif kind == "navigation" and msg.navigation.page_script_hash:
            # As the frontend: later reruns name the page shown by its hash, no longer by url path.
            self.page_hash, self.page_name = msg.navigation.page_script_hash, ""
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "exception":
                self.exceptions += 1
            self.elements.append(element)
            self.element_fragments.append(msg.delta.fragment_id)
            if element.WhichOneof("type") == "bidi_component" and is_follower(element.bidi_component):
                if self.follows:
                    self._stop_following()
                    self.follower = asyncio.get_running_loop().create_task(self._follow(element.bidi_component))
            elif element.WhichOneof("type") == "bidi_component":
                self.component_fragment = msg.delta.fragment_id
                self._take_component(element.bidi_component)
            found = widget_state(element, self.remembered)
            if found is not None:
                state, default = found
                key = widget_key(state.id)
                self.run_widgets[state.id] = state
                self.remembered[key] = state
                self.defaults[key] = default
                proto = getattr(element, element.WhichOneof("type"))
                if getattr(proto, "query_param_key", ""):
                    self.bound.add(key)
        elif kind == "script_finished":
            if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self.widgets = {**self.widgets, **self.run_widgets} if self.running_fragment else dict(self.run_widgets)
                self.finished_elements = list(self.elements)
            if self._finished is not None and not self._finished.done():
                self._finished.set_result(msg.script_finished)

    def _take_component(self, proto) -> None:
        """The instant Explorer: the view it opens on; once "the user" changed it, its state."""
        key = widget_key(proto.id)
        self.component_bytes = proto.bytes or self.component_bytes
        if self.view is None and proto.bytes:
            self.view = json.loads(proto.bytes).get("view")
        if key in self.remembered:
            state = WidgetState.FromString(self.remembered[key].SerializeToString())
            state.id = proto.id
            self.run_widgets[proto.id] = state

    def _stop_following(self) -> None:
        if self.follower is not None:
            self.follower.cancel()
            self.follower = None

    async def _follow(self, component) -> None:
        """As ``widgets/follow.js``: read what the page shows about every ``every`` s on one kept-alive connection
        (the handshake's cookie: a cluster's affinity); when it is not ``seen``, or another process answered, ask
        for a run, and read again after ``retry`` s, twice as long each time; a refused read (429) waits as long
        as its Retry-After says."""
        data = json.loads(component.json)
        source = (self.source, 0) if self.source else None
        connection = (http.client.HTTPSConnection("localhost", self.port, timeout=30, source_address=source,
                                                  context=self.tls) if self.tls else
                      http.client.HTTPConnection("localhost", self.port, timeout=30, source_address=source))
        headers = {k: v for k, v in self.headers.items() if k.lower() == "cookie"}

        def read() -> tuple[dict | None, float]:
            """The answer (``None``: refused; what the page shows already: no answer) and the seconds the server
            asked to wait."""
            try:
                connection.request("GET", data["url"], headers=headers)
                response = connection.getresponse()
                body = response.read()
                if response.status != 200:
                    return None, float(response.getheader("Retry-After") or 0)
                return json.loads(body), 0.0
            except (OSError, http.client.HTTPException, ValueError):
                connection.close()  # (reopened by the next request)
                return {"version": data["seen"], "process": data["process"]}, 0.0

        def interval() -> float:
            return data["every"] * random.uniform(1 - data["spread"], 1 + data["spread"])

        wait, backoff = interval(), data["retry"]
        try:
            while True:
                await asyncio.sleep(wait)
                answer, retry_after = await asyncio.to_thread(read)
                wait = interval()
                if answer is None:
                    wait = max(wait, retry_after)
                elif (answer.get("version"), answer.get("process")) != (data["seen"], data["process"]):
                    event = [{"event": "moved", "value": answer.get("version")}]
                    moved = WidgetState(id=trigger_id(component.id), json_trigger_value=json.dumps(event))
                    with contextlib.suppress(websockets.ConnectionClosed):
                        await self.send_rerun(extra=(moved,))
                    wait, backoff = backoff, backoff * 2
        finally:
            connection.close()

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                if isinstance(data, bytes):
                    self.bytes_received += len(data)
                    self.largest_received = max(self.largest_received, len(data))
                    msg = ForwardMsg()
                    msg.ParseFromString(data)
                    self._take(msg)
        except websockets.ConnectionClosed:
            pass
        if self._finished is not None and not self._finished.done():
            self._finished.set_exception(ConnectionError("WebSocket closed"))

    async def toggle_times(self, count: int, timeout: float, pause: float,
                           stop: asyncio.Event | None = None) -> list[float]:
        """Flip the residual switch ``count`` times (until ``stop``), ``pause`` s apart: each rerun's ms."""
        times = []
        for n in range(count):
            if stop is not None and stop.is_set():
                break
            times.append(await self.rerun({"residual": n % 2 == 0}, timeout=timeout))
            await asyncio.sleep(pause)
        return times

    async def rerun(self, changes: dict[str, object] | None = None, timeout: float = 30.0,
                    extra: tuple[WidgetState, ...] = ()) -> float:
        """Send a rerun with the widgets whose key ends a widget id set to new values (and ``extra``
        states, e.g. a data editor's edits); return the time (ms) until the server says the script
        finished. Raises on timeout or a failed run."""
        self._finished = asyncio.get_running_loop().create_future()
        start = time.perf_counter()
        await self.send_rerun(changes, extra)
        status = await asyncio.wait_for(self._finished, timeout)
        elapsed = (time.perf_counter() - start) * 1e3
        if status not in FINISHED_OK:
            raise RuntimeError(f"script finished with status {status}")
        return elapsed

    async def next_run(self, timeout: float = 30.0) -> int:
        """Wait for the next run to finish (one asked for by the page itself, e.g. its follower): its status."""
        self._finished = asyncio.get_running_loop().create_future()
        return await asyncio.wait_for(self._finished, timeout)

    async def send_rerun(self, changes: dict[str, object] | None = None, extra: tuple[WidgetState, ...] = ()) -> None:
        """Send a rerun request without waiting for its run (as a browser does for each change); the
        elements then arriving replace the page's, or only its fragment's for a fragment rerun."""
        frame = self._rerun_request(changes, extra)
        self.running_fragment = BackMsg.FromString(frame).rerun_script.fragment_id
        self.run_widgets = {}
        self.largest_sent = max(self.largest_sent, len(frame))
        await self.ws.send(frame)

    def _rerun_request(self, changes: dict[str, object] | None = None, extra: tuple[WidgetState, ...] = ()) -> bytes:
        """The rerun request :meth:`send_rerun` sends, as the frontend builds it (the changed values are
        remembered as the user's)."""
        states = []
        query = dict(urllib.parse.parse_qsl(self.query, keep_blank_values=True))
        instant = {k: v for k, v in (changes or {}).items() if k in INSTANT}
        component = next((e.bidi_component.id for e in self.finished_elements or self.elements
                          if e.WhichOneof("type") == "bidi_component" and not is_follower(e.bidi_component)), None)
        if instant and component and self.view is not None:  # as the browser reports a change
            self.view = {**self.view, **instant}
            state = WidgetState(id=component, json_value=json.dumps({"view": self.view}))
            self.remembered[widget_key(component)] = state
            self.widgets[component] = state
        for state in self.widgets.values():
            state = WidgetState.FromString(state.SerializeToString())
            key = widget_key(state.id)
            if changes and key in changes:
                value = changes[key]
                if isinstance(value, bool):
                    state.bool_value = value
                    text = "true" if value else "false"
                elif isinstance(value, str):  # a radio's option, named by its shown label
                    state.string_value = text = value
                else:
                    del state.double_array_value.data[:]
                    state.double_array_value.data.append(float(value))
                    text = str(int(value))
                self.remembered[key] = state
                if key in self.bound:  # the frontend writes a bound widget's value into the URL
                    default = self.defaults.get(key)
                    same = default is not None and default.SerializeToString() == WidgetState(
                        id=state.id, **{state.WhichOneof("value"): getattr(state, state.WhichOneof("value"))}
                    ).SerializeToString()
                    self.url_bound[key] = None if same else text
            states.append(state)
        states.extend(extra)
        for key, text in self.url_bound.items():  # the server's page_info leaves these to the frontend
            if text is None:
                query.pop(key, None)
            else:
                query[key] = text
        self.query = urllib.parse.urlencode(sorted(query.items()))
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = self.query
        client.page_script_hash = self.page_hash
        client.page_name = self.page_name
        if instant and component and set(changes) <= set(INSTANT):  # the browser reruns its fragment alone
            client.fragment_id = self.component_fragment
        client.widget_states.widgets.extend(states)
        client.cached_message_hashes.extend(self.cache)
        client.context_info.timezone = "UTC"
        client.context_info.locale = "en-US"
        client.context_info.url = f"{self.origin}/"
        return msg.SerializeToString()

    def value(self, key: str):
        if key in INSTANT and self.view is not None:
            return self.view[key]
        for state in self.widgets.values():
            if widget_key(state.id) == key:
                kind = state.WhichOneof("value")
                return list(state.double_array_value.data)[0] if kind == "double_array_value" else getattr(state, kind)
        return None

    async def close(self) -> None:
        self._stop_following()
        with contextlib.suppress(TimeoutError, websockets.WebSocketException, OSError):
            await asyncio.wait_for(self.ws.close(), 5)
        if self._reader is not None:
            self._reader.cancel()


@contextlib.asynccontextmanager
async def served_session(root: Path, query: str = "lang=en"):
    """A fresh server of the app at ``root`` and one session connected to it: ``(port, session)``."""
    log = Path(tempfile.mkdtemp()) / "server.log"
    with local_server.streamlit_server("app.py", log, root) as (base, _server):
        port = int(base.rsplit(":", 1)[1])
        session = ProtocolSession(port, query)
        await session.connect(timeout=60)
        try:
            yield port, session
        finally:
            await session.close()
