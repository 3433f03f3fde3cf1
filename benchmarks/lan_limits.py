"""What one student's script can cost the classroom server: uploads, WebSocket frames, editor rows
(issue #15), for this checkout and a baseline snapshot in the same run.

Run by hand from the repo root (never as a timed test)::

    git archive ff59289 | (mkdir -p /tmp/blockstab-ff59289 && tar -x -C /tmp/blockstab-ff59289)
    .venv/bin/python -m benchmarks.lan_limits --baseline /tmp/blockstab-ff59289

For each app it starts a server (free localhost port) and measures: the largest legitimate
WebSocket frame each way (a 1,000-block Depth lab chart of four runs; a maximal example and a full
editor table); uploads of ``--upload-mb`` bytes each (HTTP status, server RSS); oversized frames
(does the server close the socket; RSS; another session's toggle meanwhile); and one rerun of
the editor with N added rows (server time). Every wait is bounded; traffic stays on localhost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks import harness as h
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


async def uploads(base: str, port: int, pid: int, count: int, megabytes: int) -> dict:
    holder = ProtocolSession(port, "lang=en", page_name="scenario")
    await holder.connect(timeout=60)
    before = h.rss_mb(pid)
    statuses = [await asyncio.to_thread(upload, base, holder.session_id, megabytes * 1024 * 1024)
                for _ in range(count)]
    after = h.rss_mb(pid)
    await holder.close()
    return {"statuses": statuses, "rss_before_mb": before, "rss_after_mb": after}


async def big_frames(port: int, pid: int, count: int, megabytes: int) -> dict:
    """``count`` sessions each send one rerun frame of ``megabytes`` (a query string); another
    session toggles meanwhile. Was each socket closed by the server?"""
    other = ProtocolSession(port, "lang=en")
    await other.connect(timeout=60)
    senders = [ProtocolSession(port, "lang=en") for _ in range(count)]
    for s in senders:
        await s.connect(timeout=60)
    before = h.rss_mb(pid)
    msg = BackMsg()
    msg.rerun_script.query_string = "x" * (megabytes * 1_000_000)
    frame = msg.SerializeToString()

    async def send(session: ProtocolSession) -> bool:
        with contextlib.suppress(Exception):
            await session.ws.send(frame)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.ws.wait_closed(), 20)
        return session.ws.close_code is not None

    sending = [asyncio.create_task(send(s)) for s in senders]
    await asyncio.sleep(0.2)
    toggles = []
    for n in range(5):
        toggles.append(round(await other.rerun({"residual": n % 2 == 0}, timeout=180)))
    closed = await asyncio.gather(*sending)
    peak = h.rss_mb(pid)
    for s in (other, *senders):
        await s.close()
    return {"closed_by_server": closed, "rss_before_mb": before, "rss_after_mb": peak, "other_toggle_ms": toggles}


async def added_rows(port: int, rows: int) -> dict:
    session = ProtocolSession(port, "lang=en", page_name="scenario")
    await session.connect(timeout=60)
    state = editor_state(session, {"added_rows": [{"label": f"w{i}", "x": "0", "y": "1", "role": "plain"}
                                                  for i in range(rows)]})
    start = time.perf_counter()
    try:
        await session.rerun(extra=(state,), timeout=300)
        outcome = "ran"
    except TimeoutError:
        outcome = "timeout (300 s)"
    except (ConnectionError, RuntimeError) as error:
        outcome = f"refused: {type(error).__name__}"
    seconds = time.perf_counter() - start
    alerts = [e.alert.body[:90] for e in session.elements if e.WhichOneof("type") == "alert"]
    await session.close()
    return {"rows": rows, "seconds": round(seconds, 2), "outcome": outcome, "frame_bytes": session.largest_sent,
            "alerts": alerts}


async def measure(root: Path, args) -> dict:
    log = Path(tempfile.mkdtemp()) / "server.log"
    found: dict = {"app": f"{root} at {h.git_state(root)}"}
    with h.local_server.streamlit_server("app.py", log, root) as (base, server):
        port = int(base.rsplit(":", 1)[1])
        found["largest_frames"] = await largest_frames(port)
        found["uploads"] = await uploads(base, port, server.pid, args.uploads, args.upload_mb)
        found["big_frames"] = await big_frames(port, server.pid, args.frames, args.frame_mb)
        found["added_rows"] = [await added_rows(port, n) for n in args.rows]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a snapshot of the baseline commit (git archive)")
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--upload-mb", type=int, default=50)
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--frame-mb", type=int, default=20, help="under Streamlit's 25 MB widget-state cap")
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--out", type=Path, help="also write the results here (JSON)")
    args = parser.parse_args()
    results = {"ours": asyncio.run(measure(h.ROOT, args))}
    print(json.dumps(results["ours"], indent=1), flush=True)
    if args.baseline:
        results["baseline"] = asyncio.run(measure(args.baseline, args))
        print(json.dumps(results["baseline"], indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
