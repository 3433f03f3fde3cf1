"""The app's safety settings, and no outbound network call at run time.

The server is started as the browser tests start it, with a socket guard (tests/support/netguard) that
records and refuses every non-loopback connection and every lookup of a name other than
localhost. Pages are then run through a loopback WebSocket session, good and hostile links alike.
"""

import json
import os
import subprocess
import sys
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

from blockstab.scenario import PRESETS, encode
from support import in_own_loop
from testbed.local_server import streamlit_server
from testbed.protocol_client import ProtocolSession
from ui.examples import localized
from ui.text import Text

ROOT = Path(__file__).resolve().parents[2]
GUARD = ROOT / "tests" / "support" / "netguard"



def guarded_env(log: Path) -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(GUARD), str(ROOT)]), "BLOCKSTAB_NET_LOG": str(log)}


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# --- configuration --------------------------------------------------------------------------------


def test_the_config_keeps_the_safety_settings():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server, browser = config.get("server", {}), config.get("browser", {})
    assert server.get("enableXsrfProtection", True) is True  # on unless someone turns it off
    assert server.get("enableCORS", True) is True
    assert browser.get("gatherUsageStats") is False
    # Both set: Streamlit then never asks a public service for this machine's external IP.
    assert server.get("address") == "localhost" and browser.get("serverAddress") == "localhost"
    assert config.get("client", {}).get("showErrorDetails") == "none"


def test_no_page_renders_user_content_as_html():
    sources = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"),
               *(ROOT / "server").rglob("*.py")]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert "unsafe_allow_html" not in text, path
        if "st.html(" in text:
            assert path.name == "chrome.py" and text.count("st.html(") == 2
            assert 'st.html(APP_CSS + (PROJECTOR_CSS if projector else ""))' in text
            # the one script: a constant and the page's language tag, nothing a user sent
            assert 'st.html(PAGE_SCRIPT.replace("LANG", LANG_TAGS[t.lang]), unsafe_allow_javascript=True)' in text
        assert text.count("unsafe_allow_javascript") == (path.name == "chrome.py"), path


# --- the guard can fail -----------------------------------------------------------------------------


def test_the_guard_records_a_connection_to_the_outside(tmp_path):
    log = tmp_path / "net.log"
    script = ("import socket\n"
              "try:\n    socket.create_connection(('192.0.2.1', 80), timeout=0.2)\nexcept OSError:\n    pass\n"
              "try:\n    socket.getaddrinfo('example.invalid', 443)\nexcept OSError:\n    pass\n"
              "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
              "socket.create_connection(s.getsockname(), timeout=1).close()\n")
    subprocess.run([sys.executable, "-c", script], env=guarded_env(log), check=True, timeout=30)
    seen = records(log)
    assert seen[0]["kind"] == "armed"
    outside = [r for r in seen if r["kind"] != "armed"]
    assert [r["kind"] for r in outside] == ["connect", "getaddrinfo"]
    assert "192.0.2.1" in outside[0]["destination"] and "example.invalid" in outside[1]["destination"]


# --- the real server ------------------------------------------------------------------------------------


TAMPERED = encode(localized(PRESETS["triage"], Text("en")))[:-9] + "%%"
QUERIES = [("", "lang=en"), ("", "lang=zh&sc=triage&depth=5"), ("", f"lang=en&sc={TAMPERED}&residual=banana"),
           ("", "lang=en&sc=" + "x" * 7000), ("scenario", "lang=en"), ("scenario", "lang=zh&sc=support"),
           ("walk", "lang=en&sc=support&step=6"), ("case", "lang=en&sc=triage"), ("teach", "lang=en"),
           ("lab", "lang=en&lab_show=geometry"), ("lab", "lang=zh&lab_depth=4&lab_width=7"),
           ("real", "lang=en&real_residual=all"),
           ("real", "lang=zh&real_norm=one&real_layer=3&real_text=" + urllib.parse.quote("回滚 🚀 [x](http://a.invalid)"))]


async def _visit(port: int) -> list[int]:
    exceptions = []
    for page, query in QUERIES:
        session = ProtocolSession(port, query, page_name=page)
        await session.connect(timeout=60)
        exceptions.append(session.exceptions)
        assert session.bytes_received > 5_000, (page, query)  # the page really ran
        await session.close()
    return exceptions


def test_the_server_makes_no_outbound_connection(tmp_path):
    log, server_log = tmp_path / "net.log", tmp_path / "server.log"
    with streamlit_server("app.py", server_log, ROOT, env=guarded_env(log)) as (url, server):
        port = int(url.rsplit(":", 1)[1])
        for path in ("/", "/scenario?lang=zh", "/?sc=" + TAMPERED):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                assert response.status == 200
        assert in_own_loop(_visit(port)) == [0] * len(QUERIES)  # every page ran, no exception shown
    seen = records(log)
    assert any(r["kind"] == "armed" and r["pid"] == server.pid for r in seen), "the guard was not in the server"
    assert [r for r in seen if r["kind"] != "armed"] == []
    assert "Traceback" not in server_log.read_text(errors="replace")


def test_serving_the_lan_still_asks_no_public_service(tmp_path):
    """The README's classroom recipe binds every interface; browser.serverAddress stays set."""
    log = tmp_path / "net.log"
    with streamlit_server("app.py", tmp_path / "server.log", ROOT, extra=("--server.address=0.0.0.0",),
                          env=guarded_env(log)) as (url, _):
        in_own_loop(_visit_one(int(url.rsplit(":", 1)[1])))
    assert [r for r in records(log) if r["kind"] != "armed"] == []


async def _visit_one(port: int) -> None:
    session = ProtocolSession(port, "lang=en&sc=triage")
    await session.connect(timeout=60)
    assert session.exceptions == 0
    await session.close()
