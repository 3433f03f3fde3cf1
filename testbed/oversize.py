"""What one student's script may try to send the classroom server (issue #15), as a client sends it: the largest
messages the app's own pages make each way, an upload of a file and a WebSocket frame of a given size. Shared by
the tests (``tests/server/test_lan_limits.py``: the limits hold on a real server) and the benchmark that measures
what they cost it (``benchmarks/lan_limits.py``). Loopback only; every wait bounded."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import urllib.request
import uuid

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from blockstab.scenario import MAX_LABEL, MAX_TOKENS, Scenario, Token, encode
from testbed.protocol_client import ProtocolSession

LAB_QUERY = "lang=zh&lab_depth=1000&lab_width=2&lab_tokens=2&lab_heads=1&lab_compare=stabilisers"


def maximal_example() -> Scenario:
    """Every limit at once: 16 tokens, 40-character CJK names, long coordinates."""
    name = "字" * (MAX_LABEL - 2)
    tokens = tuple(Token(f"{name}{i:02d}", -9.123456789012, 9.123456789012) for i in range(MAX_TOKENS - 1))
    return Scenario(axes=(name + "甲", name + "乙"), tokens=tokens, context_slot=MAX_TOKENS - 1,
                    contexts=(Token(name + "上", 1.5, -2.5), Token(name + "下", -1.5, 2.5)), action=MAX_TOKENS - 2)


def editor_state(session: ProtocolSession, edits: dict) -> WidgetState:
    """The scenario editor's widget state carrying ``edits``, as the browser sends it."""
    for element in session.elements:
        proto = getattr(element, element.WhichOneof("type") or "", None)
        widget_id = getattr(proto, "id", "") if proto is not None else ""
        if "editor_table_" in widget_id:
            return WidgetState(id=widget_id, string_value=json.dumps(
                {"edited_rows": {}, "added_rows": [], "deleted_rows": [], **edits}))
    raise LookupError("no editor on the page")


async def largest_frames(port: int) -> dict:
    """The largest frame the app sends (the lab's deepest chart) and receives (a maximal example
    and every cell of its table edited)."""
    lab = ProtocolSession(port, LAB_QUERY, page_name="lab")
    await lab.connect(timeout=600)
    await lab.close()
    sc = encode(maximal_example())
    editor = ProtocolSession(port, f"lang=zh&sc={sc}", page_name="scenario")
    await editor.connect(timeout=120)
    cells = {str(r): {"label": "字" * MAX_LABEL, "x": "-9.123456789012", "y": "9.123456789012"}
             for r in range(MAX_TOKENS + 1)}
    await editor.rerun(extra=(editor_state(editor, {"edited_rows": cells}),), timeout=120)
    await editor.close()
    return {"largest_sent_by_app_bytes": lab.largest_received,
            "largest_received_by_app_bytes": editor.largest_sent, "sc_characters": len(sc)}


def upload(base: str, session_id: str, size: int) -> int:
    """PUT ``size`` bytes as a file for a made-up file id; the HTTP status."""
    with urllib.request.urlopen(base + "/_stcore/health", timeout=30) as page:  # the XSRF cookie
        cookie = next(c.split(";")[0] for c in page.headers.get_all("Set-Cookie") or [] if "_streamlit_xsrf" in c)
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.json\"\r\n"
            f"Content-Type: application/json\r\n\r\n").encode() + b" " * size + f"\r\n--{boundary}--\r\n".encode()
    host, port = base.rsplit("//", 1)[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=20)
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": cookie.split("=", 1)[1],
               "Cookie": cookie}
    with contextlib.suppress(OSError):  # a server that answers before reading the body stops reading it
        connection.request("PUT", f"/_stcore/upload_file/{session_id}/{uuid.uuid4()}", body=body, headers=headers)
    try:
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return -1
    finally:
        connection.close()


def rerun_frame(megabytes: int) -> bytes:
    """A rerun request of ``megabytes`` million bytes (its query string), as one WebSocket frame."""
    msg = BackMsg()
    msg.rerun_script.query_string = "x" * (megabytes * 1_000_000)
    return msg.SerializeToString()


async def closed_after(session: ProtocolSession, frame: bytes, timeout: float = 20) -> bool:
    """Send ``frame`` on the session's socket: did the server close the socket (within ``timeout`` s)?"""
    with contextlib.suppress(Exception):
        await session.ws.send(frame)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.ws.wait_closed(), timeout)
    return session.ws.close_code is not None
