"""One Streamlit server and one headless Chromium (Debian's, never a download) for all browser tests."""

import contextlib
import os
import re
from pathlib import Path

import pytest

from support import cluster
from testbed.local_server import CHROMIUM, CHROMIUM_ARGS, ServerFailed, streamlit_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


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


# The Depth lab's deadline out of the way: these tests check what the lab draws, and a loaded CI machine
# must not decide it (what the deadline stops has its own tests, tests/app/test_lab_fair.py). The Explorer
# draws nothing ahead but where a test says it tests that (``drawing_ahead``): it is a sixth of a load's work.
SERVER_ENV = {**os.environ, "BLOCKSTAB_LAB_SECONDS": "600", "BLOCKSTAB_DRAW_AHEAD": "false"}
SERVER_LOG: list[Path] = []  # the running server's log, shown under every failed browser test


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report shows the last log lines of its server (or cluster); its pages are
    screenshotted."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        item.failed_call = True
        for log in [*SERVER_LOG[-1:], *cluster.LOGS]:  # the server's, or a cluster's: HAProxy's and its replicas'
            if log.exists():
                lines = log.read_text(errors="replace").splitlines()
                report.sections.append((f"{log.name} (last 40 lines)", "\n".join(lines[-40:])))


@contextlib.contextmanager
def served(log_path: Path, extra: tuple[str, ...] = (), env: dict | None = None):
    """``(url, process)``: the app started as scripts/start.sh starts it (with ``extra`` arguments), on a
    free port, once healthy (``/_stcore/health``), its log shown under a failed test; stopped afterwards.
    ``env`` adds settings to the tests' own."""
    SERVER_LOG.append(log_path)
    try:
        settings = {**SERVER_ENV, **(env or {})}
        with streamlit_server("app.py", log_path, ROOT, extra=extra, env=settings) as (base, server):
            yield base, server
    except ServerFailed as error:  # raised only while starting, before the yield
        pytest.fail(str(error), pytrace=False)
    finally:
        SERVER_LOG.remove(log_path)


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """The app's server, one per test process (each xdist worker has its own)."""
    with served(tmp_path_factory.mktemp("streamlit") / "server.log") as running:
        yield running


@pytest.fixture(scope="module")
def lan_server(tmp_path_factory):
    """The app's server as ``scripts/start.sh --lan`` starts it (every interface), with the default limits, for a
    module of its own (its students all come from this machine: one address, as a school's NAT shows them)."""
    with served(tmp_path_factory.mktemp("lan") / "server.log", extra=("--lan",)) as running:
        yield running


@pytest.fixture(scope="module")
def hosted(tmp_path_factory):
    """The app as a hosted server runs it, with a teacher's passphrase, for a module of its own: ``(url, its
    log's path, the passphrase)``."""
    log, passphrase = tmp_path_factory.mktemp("hosted") / "server.log", "sixteen quiet otters paddle"
    with served(log, env={"BLOCKSTAB_TEACHER_PASSPHRASE": passphrase}) as (base, _):
        yield base, log, passphrase


@pytest.fixture(scope="module")
def drawing_ahead(tmp_path_factory):
    """The app's server as it runs by default, its Explorer drawing ahead, for a module of its own."""
    with served(tmp_path_factory.mktemp("ahead") / "server.log", env={"BLOCKSTAB_DRAW_AHEAD": "true"}) as running:
        yield running


@pytest.fixture
def fresh_app_server(tmp_path):
    """A server of the test's own, for a test that needs the server idle: the block ranges are
    built ahead one sentence at a time in a server, so a build another test started would hold back
    the one it waits for."""
    with served(tmp_path / "server.log") as running:
        yield running


@pytest.fixture(scope="session")
def app_url(app_server) -> str:
    return app_server[0]


@pytest.fixture(scope="session")
def playwright_driver(app_url):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium fonts-noto-cjk (browser tests never skip "
                    "and never download a browser)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@contextlib.contextmanager
def launch_failure_fails():
    try:
        yield
    except Exception as error:  # any launch failure is a test failure, with its reason
        pytest.fail(f"could not start {CHROMIUM}: {error}", pytrace=False)


@pytest.fixture(scope="session")
def browser(playwright_driver):
    """A Chromium for contexts of a test's own (``cold``: an empty cache, as on a first visit)."""
    with launch_failure_fails():
        chromium = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def warm_context(playwright_driver, tmp_path_factory):
    """``warm_context(locale, user_agent)``: the browser context shared by the tests for them, a Chromium with a
    profile on disk, as a student's browser has: its HTTP cache and the compiled code of Streamlit's
    and Plotly's scripts are kept (an in-memory context compiles them again at every load, a fifth of
    a load's CPU), while every page opened in it is a new tab and so a new Streamlit session (the app
    keeps nothing in the browser's storage)."""
    contexts: dict = {}

    def context_for(locale: str, user_agent: str | None):
        if (locale, user_agent) not in contexts:
            with launch_failure_fails():
                contexts[locale, user_agent] = playwright_driver.chromium.launch_persistent_context(
                    tmp_path_factory.mktemp("profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                    locale=locale, user_agent=user_agent, is_mobile=user_agent is not None)
            contexts[locale, user_agent].add_init_script(SCRIPT_STATE_LOG)
        return contexts[locale, user_agent]

    yield context_for
    for context in contexts.values():
        context.close()


@pytest.fixture
def new_page(warm_context, request):
    """``new_page(width, height, locale, user_agent, cold, self_signed)``: a new tab (a new session) in the shared
    context for its locale and user agent, or with ``cold`` a fresh context of its own (an empty cache,
    as on a first visit; with ``self_signed`` too, it accepts a test's own HTTPS certificate); a ``user_agent``
    makes it a phone's browser (touch, no desktop viewport).

    Every page records uncaught JavaScript errors in ``page.js_errors``, requests that got no answer in
    ``page.unanswered`` (a refused or reset connection; also those a navigation cancels) and the app's script
    states in ``window.__scriptStates``; if the test failed, each is screenshotted into
    test-artifacts/ at teardown (a test's own ``shot`` calls are kept in every run).
    """
    opened = []

    def context_for(locale: str, user_agent: str | None, cold: bool, self_signed: bool):
        if not cold:
            return warm_context(locale, user_agent)
        browser = request.getfixturevalue("browser")  # launched only for a worker that runs a cold test
        context = browser.new_context(locale=locale, user_agent=user_agent, is_mobile=user_agent is not None,
                                      ignore_https_errors=self_signed)
        context.add_init_script(SCRIPT_STATE_LOG)
        return context

    def make(width: int = 1400, height: int = 900, locale: str = "en-US", user_agent: str | None = None,
             cold: bool = False, self_signed: bool = False):
        assert cold or not self_signed, "a self-signed certificate is accepted in a cold context only"
        context = context_for(locale, user_agent, cold, self_signed)
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": height})
        page.set_default_timeout(60_000)  # a wait, not a budget: a loaded 2-core machine may be slow
        page.js_errors, page.unanswered = [], []
        page.on("pageerror", lambda error: page.js_errors.append(str(error)))
        page.on("requestfailed", lambda request: page.unanswered.append(f"{request.failure}: {request.url}"))
        opened.append((page, context if cold else None))
        return page

    yield make
    failed = getattr(request.node, "failed_call", False)
    ARTIFACTS.mkdir(exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    for n, (page, own_context) in enumerate(opened):
        if failed:
            with contextlib.suppress(Exception):  # a screenshot must never hide the test's own result
                page.screenshot(path=str(ARTIFACTS / f"{name}{'' if n == 0 else f'-{n}'}-final.png"))
        page.close()
        if own_context is not None:
            own_context.close()


@pytest.fixture
def page(new_page):
    return new_page()
