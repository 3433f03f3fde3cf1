"""For every test: no page test builds bundle parts ahead, and no test leaves such a build running.

The instant Explorer has the server build a sentence's block ranges ahead in the background, in
worker processes (``server/bundles.py`` build_around), and a live class the parts a question's "show
me" opens (build_ahead); page tests (AppTest) only record what they ask for (``ranges_asked_ahead``,
``parts_asked_ahead``), since a build ahead there would outlive its test (the next test would find its
worker process running, or its parts landing in what it keeps). The build itself is tested in
tests/app/test_bundles.py and, in the app's real server, in Chromium.
"""

import pytest

from server import bundles
from support import ROOT
from widgets import explorer


@pytest.fixture(autouse=True)
def ranges_asked_ahead(monkeypatch):
    """The (look, language, first block) of each build ahead the Explorer asked for (each started)."""
    asked = []
    monkeypatch.setattr(explorer, "build_around",
                        lambda look, lang, first: asked.append((look, lang, first)) or True)
    yield asked
    with bundles._BUILDING:  # a test of its own that started one waits for it
        pass


@pytest.fixture(autouse=True)
def parts_asked_ahead(monkeypatch):
    """The parts of each build ahead a live class asked for (each started)."""
    asked = []
    monkeypatch.setattr(bundles, "build_ahead", lambda parts: asked.append(parts) or True)
    yield asked
    with bundles._AHEAD:  # a test of its own that started one waits for it
        pass


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    """AppTest runs the app from the repository's root, as ``streamlit run`` does."""
    monkeypatch.chdir(ROOT)
