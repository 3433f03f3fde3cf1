"""Helpers the tests share: oracles, AppTest and browser readers, worker jobs (never tests)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
MESSAGE_LIMIT = 1_000_000  # .streamlit/config.toml: server.maxMessageSize = 1 (MB)
