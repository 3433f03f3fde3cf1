"""The bundles' store (server/bundles.py): parts built once and written as the files the app serves,
each listed in the bundle's index once written, the least recently used bundles let go, the other
block ranges built ahead in the background, names no other session can work out, and the machine's
folder of built-in examples' parts. These tests build on demand: the run's shared folder
(tests/conftest.py) is unset here."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from blockstab.scenario import MAX_LABEL, MAX_TOKENS, Scenario, Token, encode
from server import bundles
from server.bundles import (
    ROUTE,
    build_ahead,
    build_around,
    build_in_worker,
    built,
    bundle_url,
    by_distance,
    ensure,
    file_name,
)
from server.lab_worker import WorkerCrashed
from support import ROOT
from support.explorer_view import component_data, report, shown
from ui.bundle import (
    FIGURES,
    RANGE_BLOCKS,
    RANGE_FIRSTS,
    built_part,
    range_first,
    range_part,
    read_part,
    sentence_and_look,
)
from ui.controls import MAX_EXPLORER_DEPTH, ExplorerState
from ui.text import Text

LOOK = sentence_and_look(ExplorerState())


@pytest.fixture(autouse=True)
def built_here(monkeypatch):
    monkeypatch.delenv("BLOCKSTAB_BUNDLE_CACHE", raising=False)


@given(st.integers(1, MAX_EXPLORER_DEPTH))
def test_a_block_is_in_the_range_from_its_first(block):
    first = range_first(block)
    assert first <= block < first + RANGE_BLOCKS and first in RANGE_FIRSTS


@given(st.sampled_from(RANGE_FIRSTS))
def test_the_ranges_around_one_are_every_other_nearest_first_the_next_before_the_one_before(first):
    order = by_distance(first)
    assert sorted([*order, first]) == list(RANGE_FIRSTS)
    assert [abs(n - first) for n in order] == sorted(abs(n - first) for n in order)
    beside = [n for n in (first + RANGE_BLOCKS, first - RANGE_BLOCKS) if n in RANGE_FIRSTS]
    assert order[:len(beside)] == beside


@pytest.fixture
def cheap(monkeypatch, tmp_path):
    """Parts that are cheap to build (their name, as text), in a folder of this test's, kept afresh,
    built ahead in this process; the builds counted."""
    made = []
    folder = tmp_path / "bundles"
    folder.mkdir()
    monkeypatch.setattr(bundles, "bundles_folder", lambda: folder)
    monkeypatch.setattr(bundles, "_built", OrderedDict())
    monkeypatch.setattr(bundles, "built_part", lambda look, lang, name: made.append(name) or f"part {name}")
    monkeypatch.setattr(bundles, "build_in_worker", lambda *part: bundles.built_part(*part))
    return made, folder


def served(folder, look, lang, name) -> str | None:
    """What the app serves for a part (None: 404)."""
    path = folder / file_name(look, lang, name)
    return path.read_text(encoding="ascii") if path.exists() else None


def test_a_part_is_built_once_written_whole_and_listed_in_the_index(cheap):
    made, folder = cheap
    ensure(LOOK, "en", FIGURES, "blocks-41")
    ensure(LOOK, "en", FIGURES, "blocks-41", "blocks-51")
    assert made == [FIGURES, "blocks-41", "blocks-51"]  # nothing built twice
    assert served(folder, LOOK, "en", "blocks-51") == "part blocks-51"
    assert read_part(served(folder, LOOK, "en", "index"))["built"] == sorted([FIGURES, "blocks-41", "blocks-51"])
    assert served(folder, LOOK, "zh", FIGURES) is None and built(LOOK, "zh") == set()  # another language
    assert not list(folder.glob("*.part"))  # written whole, then moved into place


def test_only_the_most_recently_used_bundles_are_kept_files_and_all(cheap, monkeypatch):
    made, folder = cheap
    monkeypatch.setattr(bundles, "BUNDLES_KEPT", 2)
    other, third = (sentence_and_look(ExplorerState(scenario=s)) for s in ("confirmed", "not_confirmed"))
    ensure(LOOK, "en", FIGURES)
    ensure(other, "en", FIGURES)
    built(LOOK, "en")  # used: now the most recent
    ensure(third, "en", FIGURES)  # the least recently used, other's, goes
    assert built(other, "en") == set() and served(folder, other, "en", FIGURES) is None
    assert served(folder, other, "en", "index") is None
    assert built(LOOK, "en") == {FIGURES} and built(third, "en") == {FIGURES}
    assert len(list(folder.iterdir())) == 4  # two bundles: a part and an index each


def test_the_ranges_around_are_built_in_the_background_one_build_at_a_time_the_nearest_first(cheap, monkeypatch):
    made, _ = cheap
    ensure(LOOK, "en", FIGURES, "blocks-61")  # built already: not built again
    hold = threading.Event()
    monkeypatch.setattr(bundles, "built_part", lambda look, lang, name: hold.wait(10) and made.append(name) or name)
    assert build_around(LOOK, "en", 41)
    assert not build_around(LOOK, "en", 71)  # one is running: no second build, nothing queued
    hold.set()
    with bundles._BUILDING:  # released when the build is done
        assert made[2:] == [range_part(n) for n in (51, 31, 21, 71, 11, 81, 1, 91)]
    assert built(LOOK, "en") == {FIGURES, *(range_part(n) for n in RANGE_FIRSTS if n != 41)} and not built(LOOK, "zh")


def test_a_part_two_sessions_need_at_once_is_built_once_and_another_part_waits_for_neither(cheap, monkeypatch):
    made, _ = cheap
    hold, started = threading.Event(), threading.Event()

    def slow_figures(look, lang, name):
        if name == FIGURES:
            started.set()
            hold.wait(10)
        made.append(name)
        return name

    monkeypatch.setattr(bundles, "built_part", slow_figures)
    sessions = [threading.Thread(target=ensure, args=(LOOK, "en", FIGURES)) for _ in range(3)]
    sessions[0].start()
    started.wait(10)
    for session in sessions[1:]:
        session.start()
    deadline = time.monotonic() + 10
    while bundles._ENSURING[LOOK, "en", FIGURES][1] < 3 and time.monotonic() < deadline:  # all three at it
        time.sleep(0.01)
    ensure(LOOK, "en", "blocks-1")  # not held up by the figures being built
    assert made == ["blocks-1"]
    hold.set()
    for session in sessions:
        session.join(10)
    assert made == ["blocks-1", FIGURES] and built(LOOK, "en") == {FIGURES, "blocks-1"} and not bundles._ENSURING


def test_the_parts_a_class_will_open_are_built_in_the_background_in_order_beside_the_ranges_around(cheap,
                                                                                                  monkeypatch):
    made, _ = cheap
    other = sentence_and_look(ExplorerState(phone=True))
    ensure(LOOK, "zh", FIGURES)  # built already: not built again
    hold = threading.Event()
    monkeypatch.setattr(bundles, "built_part", lambda look, lang, name: hold.wait(10) and made.append(
        (look, lang, name)) or name)
    parts = [(LOOK, "en", FIGURES), (LOOK, "en", "blocks-21"), (other, "en", FIGURES), (LOOK, "zh", FIGURES)]
    assert build_ahead(parts) and build_around(other, "zh", 91)  # one of each at a time: both start
    assert not build_ahead(parts[:1])  # one is running: no second, nothing queued
    hold.set()
    with bundles._AHEAD, bundles._BUILDING:  # released when the builds are done
        assert [part for part in made if part[1] == "en"] == parts[:3]
    assert built(LOOK, "en") == {FIGURES, "blocks-21"} and built(LOOK, "zh") == {FIGURES}


@pytest.mark.parametrize("failure,traceback", [(RuntimeError("a bug"), True),
                                               (WorkerCrashed("exit code -15"), False)])  # the server stopping
def test_a_build_ahead_that_fails_is_logged_and_frees_the_builder(cheap, monkeypatch, caplog, failure, traceback):
    def broken(look, lang, name):
        raise failure

    ensure(LOOK, "en", FIGURES)
    monkeypatch.setattr(bundles, "build_in_worker", broken)
    assert build_around(LOOK, "en", 41)
    with bundles._BUILDING:
        pass
    assert "building a bundle's block ranges ahead stopped" in caplog.text
    assert ("Traceback" in caplog.text) == traceback and str(failure) in caplog.text
    assert built(LOOK, "en") == {FIGURES} and build_around(LOOK, "en", 41)


def test_a_built_in_examples_part_is_built_once_on_the_machine_and_read_by_every_process_after(monkeypatch,
                                                                                               tmp_path):
    made, hold = [], threading.Event()
    monkeypatch.setattr(bundles, "built_part", lambda look, lang, name: hold.wait(10) and made.append(name) or name)
    shared = tmp_path / "shared"
    read = []
    asking = [threading.Thread(target=lambda: read.append(bundles.made(LOOK, "en", "blocks-1", shared)))
              for _ in range(3)]  # (each opens the lock afresh, as another process does)
    for thread in asking:
        thread.start()
    hold.set()
    for thread in asking:
        thread.join(10)
    assert made == ["blocks-1"] and read == ["blocks-1"] * 3
    assert bundles.made(LOOK, "zh", "blocks-1", shared) == "blocks-1" and made == ["blocks-1"] * 2  # another part
    monkeypatch.setattr(bundles, "code_version", lambda: "another version")
    assert bundles.made(LOOK, "en", "blocks-1", shared) == "blocks-1" and len(made) == 3  # built afresh


def test_a_users_own_sentences_parts_are_never_written_to_the_machines_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(bundles, "built_part", lambda look, lang, name: name)
    own = sentence_and_look(ExplorerState(example=largest_sentence()))
    assert bundles.made(own, "en", FIGURES, tmp_path) == FIGURES and list(tmp_path.iterdir()) == []
    bundles.made(LOOK, "en", FIGURES, tmp_path)  # the lesson's is
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".js", ".lock"]


def test_a_part_built_as_the_server_stops_is_let_go_not_written_into_a_removed_folder(cheap):
    _, folder = cheap
    ensure(LOOK, "en", FIGURES)
    bundles.remove_folder(folder)  # what the server does at exit
    ensure(LOOK, "en", "blocks-11")  # a build ahead that ends after it: no error, nothing written
    assert not folder.exists() and "blocks-11" not in built(LOOK, "en")


def test_a_bundles_files_are_named_by_a_key_of_this_server_never_by_the_sentence_alone(monkeypatch):
    url = bundle_url(LOOK, "en")
    assert url.startswith(ROUTE) and file_name(LOOK, "en", "blocks-11") == url.removeprefix(ROUTE) + "blocks-11.js"
    others = {bundle_url(sentence_and_look(ExplorerState(scenario="confirmed")), "en"), bundle_url(LOOK, "zh"),
              bundle_url(sentence_and_look(ExplorerState(projector=True)), "en")}
    assert url not in others and len(others) == 3
    monkeypatch.setattr(bundles, "_NAMING", b"another server's key")
    assert bundle_url(LOOK, "en") != url  # a student cannot work out another's link from a sentence


def test_a_part_built_in_a_worker_process_is_the_part_built_here():
    assert build_in_worker(LOOK, "zh", "blocks-91") == built_part(LOOK, "zh", "blocks-91")


def largest_sentence() -> Scenario:
    """As many tokens as the editor allows, every name as long as it allows, in Chinese (three
    bytes a character), spread over the whole plane."""
    name = "长" * MAX_LABEL
    tokens = tuple(Token(name, (-1) ** i * (i % 10), (i * 7 % 21) - 10.0) for i in range(MAX_TOKENS - 1))
    return Scenario(axes=(name, name), tokens=tokens, context_slot=3, contexts=(Token(name, 1.0, 2.0),
                    Token(name, -3.0, 4.0)), action=7)


def test_the_largest_sentence_is_mounted_with_no_figure_and_its_block_in_focus_is_drawn():
    """The component's data is the bundle's address, the controls and the texts, whatever the
    sentence: the figures are files the browser reads, built before the data is sent."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"lang": "zh", "sc": encode(largest_sentence()), "depth": "100"})
    at.run()
    assert not at.exception
    report(at, block=45)
    (element,) = at.get("bidi_component")
    assert len(element.proto.bytes) < 20_000 and "bundle" in component_data(at)
    assert shown(at)["numbers"]["title"] == Text("zh")("explorer.numbers", block=45)


HOLD_A_FOLDER = """import sys, tempfile
tempfile.tempdir = sys.argv[1]
from server.bundles import bundles_folder
print(bundles_folder(), flush=True)
sys.stdin.read()  # lives until the test closes its input, or kills it
"""


def test_a_folder_left_by_a_server_killed_is_removed_by_the_next_a_live_ones_and_an_unmarked_one_kept(tmp_path):
    """A server killed (SIGKILL: no exit handler runs) leaves its bundles' folder; the next server to make
    one removes it, never a folder whose server lives, nor one with no mark (being made, or older)."""
    servers = [subprocess.Popen([sys.executable, "-c", HOLD_A_FOLDER, str(tmp_path)], cwd=ROOT, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(2)]
    try:
        killed, living = [Path(server.stdout.readline().strip()) for server in servers]
        servers[0].send_signal(signal.SIGKILL)
        servers[0].wait(timeout=60)
        unmarked = tmp_path / f"{bundles.FOLDER_PREFIX}unmarked"
        unmarked.mkdir()
        assert killed.is_dir() and (killed / bundles.ALIVE).exists()  # left behind
        bundles.remove_abandoned(tmp_path)
        assert not killed.exists()
        assert living.is_dir() and unmarked.is_dir()
    finally:
        for server in servers:
            server.kill()
            server.wait(timeout=60)
