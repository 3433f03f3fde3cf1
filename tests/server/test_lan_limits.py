"""What one student's script may send the classroom server (issue #15, resource exhaustion):
uploads and WebSocket frames are refused over the configured limits, which the app's largest
legitimate messages stay well under; an editor edit adding thousands of rows is refused before
Streamlit applies it."""

import asyncio
import time
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from support import in_own_loop
from testbed import oversize
from testbed.local_server import streamlit_server
from testbed.protocol_client import ProtocolSession
from ui.text import Text

ROOT = Path(__file__).resolve().parents[2]


MB = 1024 * 1024


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def config() -> dict:
    return tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))


def test_uploads_and_messages_are_limited_to_one_megabyte():
    server = config()["server"]
    assert server.get("maxUploadSize") == 1 and server.get("maxMessageSize") == 1  # the smallest Streamlit allows


def test_the_server_refuses_oversize_uploads_and_frames_and_serves_the_largest_real_ones(tmp_path):
    with streamlit_server("app.py", tmp_path / "server.log", ROOT) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        largest = in_own_loop(oversize.largest_frames(port))
        assert largest["largest_sent_by_app_bytes"] < MB / 2 and largest["largest_received_by_app_bytes"] < MB / 50
        assert in_own_loop(oversized(port, base)) == (413, True)


async def oversized(port: int, base: str) -> tuple[int, bool]:
    """(the HTTP status of a 3 MB upload, whether the server closed the socket a 3 MB frame came on)."""
    holder = ProtocolSession(port, "lang=en", page_name="scenario")  # the session an upload is for
    await holder.connect(timeout=60)
    try:
        status = await asyncio.to_thread(oversize.upload, base, holder.session_id, 3 * MB)
    finally:
        await holder.close()
    sender = ProtocolSession(port, "lang=en")
    await sender.connect(timeout=60)
    try:
        return status, await oversize.closed_after(sender, oversize.rerun_frame(3))
    finally:
        await sender.close()


def test_an_edit_adding_thousands_of_rows_is_refused_before_it_is_applied():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["lang"] = "en"
    at.run()
    at.switch_page("pages/scenario_editor.py").run()
    rows = [{"label": f"w{i}", "x": "0", "y": "1", "role": "plain"} for i in range(10_000)]
    at.session_state["editor_table_0"] = {"edited_rows": {}, "added_rows": rows, "deleted_rows": []}
    start = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - start
    assert not at.exception
    t = Text("en")
    assert [e.value for e in at.error] == [t("editor.table_too_long", count=10_006, limit=34)]
    assert at.data_editor[0].key == "editor_table_1" and len(at.data_editor[0].value) == 6  # the table restarted
    assert seconds < 10, seconds  # applying them took 53 s on ff59289
