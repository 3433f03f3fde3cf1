"""``streamlit run app.py`` (what Streamlit's hosts and READMEs run) lacks the app's own routes and the patches
``python -m server`` installs: it serves one sentence naming the command to run, on the page (in the page's
language) and in its log, rather than an app whose Explorer shows nothing. ``python -m server`` takes its port and
address from the environment where its arguments name none (the image's settings)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from server.__main__ import streamlit_args
from support import in_own_loop
from testbed.local_server import streamlit_server
from testbed.protocol_client import ProtocolSession
from ui.text import Text

ROOT = Path(__file__).resolve().parents[2]
STREAMLIT = [str(Path(sys.executable).with_name("streamlit")), "run", "app.py"]


async def page_alerts(port: int, lang: str) -> list[str]:
    """The alerts' texts of the page's first run, as the browser would be sent them."""
    session = ProtocolSession(port, f"lang={lang}")
    await session.connect(timeout=60)
    await session.close()
    return [element.alert.body for element in session.finished_elements if element.WhichOneof("type") == "alert"]


def test_streamlit_run_app_py_says_which_command_to_run(tmp_path):
    log = tmp_path / "server.log"
    with streamlit_server("app.py", log, ROOT, command=STREAMLIT) as (base, _server):
        port = int(base.rsplit(":", 1)[1])
        for lang in ("en", "zh"):
            assert in_own_loop(page_alerts(port, lang)) == [Text(lang)("app.run_with_server")]
        assert Text("en")("app.run_with_server") in log.read_text()
    assert "bash scripts/start.sh" in Text("en")("app.run_with_server")


def test_python_m_server_serves_the_app_and_not_the_sentence(tmp_path):
    with streamlit_server("app.py", tmp_path / "server.log", ROOT) as (base, _server):
        alerts = in_own_loop(page_alerts(int(base.rsplit(":", 1)[1]), "en"))
    assert Text("en")("app.run_with_server") not in alerts


@pytest.mark.parametrize(("argv", "env", "expected"), [
    ([], {}, []),
    ([], {"PORT": "7860", "BLOCKSTAB_ADDRESS": "0.0.0.0"},
     ["--server.port", "7860", "--server.address", "0.0.0.0"]),
    (["--server.port", "8502", "--lan"], {"PORT": "7860", "BLOCKSTAB_ADDRESS": "127.0.0.1"},
     ["--server.port", "8502", "--server.address", "0.0.0.0"]),
    (["--server.port=8502"], {"PORT": "7860"}, ["--server.port=8502"]),
    ([], {"PORT": ""}, []),
])
def test_the_environment_names_the_port_and_address_where_the_arguments_do_not(argv, env, expected):
    assert streamlit_args(argv, env) == expected
