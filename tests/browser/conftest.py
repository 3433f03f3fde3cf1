"""One Streamlit server and one headless Chromium (Debian's, never a download) for all browser tests."""

import contextlib
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
sys.path.insert(0, str(ROOT / "benchmarks"))  # the server start is shared with the browser benchmarks

from local_server import CHROMIUM, CHROMIUM_ARGS, ServerFailed, streamlit_server  # noqa: E402

# Records every value the app's script-state attribute takes (old and new, so a short rerun that
# starts and ends between two observer callbacks is still seen), from the first byte of each page.
SCRIPT_STATE_LOG = """
window.__scriptStates = [];
new MutationObserver(records => {
  for (const r of records) {
    if (r.oldValue !== null) window.__scriptStates.push(r.oldValue);
    window.__scriptStates.push(r.target.getAttribute('data-test-script-state'));
  }
}).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                      attributeFilter: ['data-test-script-state']});
"""


SERVER_LOG: list[Path] = []  # the running server's log, shown under every failed browser test


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and SERVER_LOG and SERVER_LOG[-1].exists():
        lines = SERVER_LOG[-1].read_text(errors="replace").splitlines()
        report.sections.append(("streamlit server log (last 40 lines)", "\n".join(lines[-40:])))


SERVER: dict = {}  # the app's server process, for a test that pauses it


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """Start the app as scripts/start.sh does on a free port, wait for /_stcore/health, stop it afterwards."""
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    SERVER_LOG.append(log_path)
    try:
        with streamlit_server("app.py", log_path, ROOT) as (base, server):
            SERVER["process"] = server
            yield base
    except ServerFailed as error:  # raised only while starting, before the yield
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def browser(app_url):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium fonts-noto-cjk (browser tests never skip "
                    "and never download a browser)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Exception as error:  # any launch failure is a test failure, with its reason
            pytest.fail(f"could not start {CHROMIUM}: {error}", pytrace=False)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser, request):
    """``new_page(width, height, locale, user_agent)``: a fresh context (cold cache, no session) per
    call; a ``user_agent`` makes it a phone's browser (touch, no desktop viewport).

    Every page records uncaught JavaScript errors in ``page.js_errors`` and the app's script
    states in ``window.__scriptStates``; each is screenshotted into test-artifacts/ at teardown.
    """
    contexts = []

    def make(width: int = 1400, height: int = 900, locale: str = "en-US", user_agent: str | None = None):
        context = browser.new_context(viewport={"width": width, "height": height}, locale=locale,
                                      user_agent=user_agent, is_mobile=user_agent is not None)
        context.add_init_script(SCRIPT_STATE_LOG)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.js_errors = []
        page.on("pageerror", lambda error: page.js_errors.append(str(error)))
        contexts.append((context, page))
        return page

    yield make
    ARTIFACTS.mkdir(exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    for n, (context, page) in enumerate(contexts):
        with contextlib.suppress(Exception):  # a screenshot must never hide the test's own result
            page.screenshot(path=str(ARTIFACTS / f"{name}{'' if n == 0 else f'-{n}'}-final.png"))
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()
