"""Helpers the tests share: oracles, AppTest and browser readers, worker jobs (never tests)."""

import asyncio
import concurrent.futures
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
MESSAGE_LIMIT = 1_000_000  # .streamlit/config.toml: server.maxMessageSize = 1 (MB)


def in_own_loop(coroutine):
    """Run ``coroutine`` to its end in a thread of its own: a browser test earlier in the same worker leaves
    Playwright's event loop running in this thread, where ``asyncio.run`` cannot run."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
