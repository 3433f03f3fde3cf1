"""Streamlit's internals the app uses (``server.streamlit_internals``) are pinned to one version: on another
the module refuses to load, naming the file to check; and every ``data-testid`` by which our CSS, scripts,
tests and benchmarks find Streamlit's elements is one the pinned frontend still draws."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest
import streamlit

from support import ROOT

FRONTEND = Path(streamlit.__file__).parent / "static"
WHERE = ("widgets", "ui", "server", "pages", "tests", "benchmarks", "scripts")


def test_another_streamlit_is_refused_at_once(monkeypatch):
    monkeypatch.setattr(streamlit, "__version__", "1.68.0")
    monkeypatch.delitem(sys.modules, "server.streamlit_internals", raising=False)
    with pytest.raises(ImportError, match=r"server/streamlit_internals\.py"):
        importlib.import_module("server.streamlit_internals")
    monkeypatch.undo()
    importlib.import_module("server.streamlit_internals")  # the pinned one loads


def test_every_data_testid_we_look_for_is_one_the_frontend_draws():
    sources = [path for folder in WHERE for path in (ROOT / folder).rglob("*.[pj][ys]")
               if path.is_file() and "node_modules" not in path.parts]
    used = {match for path in sources
            for match in re.findall(r"data-testid[=\"'\s]*\\?[\"']?(st[A-Za-z]+)", path.read_text(encoding="utf-8"))}
    assert len(used) > 20  # (what the pattern finds: a change that hides them fails here)
    drawn = "".join(path.read_text(encoding="utf-8", errors="replace") for path in FRONTEND.rglob("*.js"))
    made = re.findall(r"`(st[A-Za-z]+)\$\{", drawn)  # (made in a template: stAlertContent${kind})
    assert sorted(testid for testid in used if not re.search(rf"[\"'`]{testid}[\"'`]", drawn)
                  and not testid.startswith(tuple(made))) == []
