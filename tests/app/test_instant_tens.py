"""The tens of blocks the instant Explorer sends (built by ui/instant.py, kept by server/tens.py): which are
sent, what is kept
(in memory and as the files the browser fetches), what is built around, and that the largest
sentence the editor allows still fits one message."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from blockstab.scenario import MAX_LABEL, MAX_TOKENS, Scenario, Token, encode
from server import tens
from server.lab_worker import WorkerCrashed
from server.tens import (
    TENS_ROUTE,
    build_around,
    build_in_worker,
    built_ten,
    index_file,
    packed_ten,
    ten_file,
    ten_url,
    tens_folder,
    tens_to_send,
)
from support import MESSAGE_LIMIT, ROOT
from support.explorer_view import component_data, report, unpack
from ui.controls import MAX_EXPLORER_DEPTH, ExplorerState
from ui.instant import BLOCKS_SENT, around, beside, blocks_sent, packed_ten_of_blocks, sentence_and_look


@given(st.integers(1, MAX_EXPLORER_DEPTH))
def test_a_block_is_in_the_ten_from_its_first_and_the_tens_beside_exist(block):
    first = blocks_sent(block)
    assert first <= block < first + BLOCKS_SENT and first % BLOCKS_SENT == 1
    assert all(1 <= n <= MAX_EXPLORER_DEPTH and abs(n - first) == BLOCKS_SENT for n in beside(first))
    assert len(beside(first)) == (1 if first in (1, blocks_sent(MAX_EXPLORER_DEPTH)) else 2)


@given(st.sampled_from(range(1, MAX_EXPLORER_DEPTH + 1, BLOCKS_SENT)))
def test_around_a_ten_is_every_other_ten_nearest_first_the_tens_beside_leading(first):
    order = around(first)
    assert sorted(order + [first]) == list(range(1, MAX_EXPLORER_DEPTH + 1, BLOCKS_SENT))
    assert [abs(n - first) for n in order] == sorted(abs(n - first) for n in order)
    assert order[:len(beside(first))] == beside(first)


@pytest.fixture
def cheap(monkeypatch):
    """Tens that are cheap to build (their first block, as text), kept afresh, built ahead in this
    process; the builds counted."""
    built = []
    monkeypatch.setattr(tens, "_kept", OrderedDict())
    monkeypatch.setattr(tens, "packed_ten_of_blocks", lambda look, lang, first: built.append(first) or f"ten-{first}")
    monkeypatch.setattr(tens, "build_in_worker", lambda *ten: tens.packed_ten_of_blocks(*ten))
    return built


LOOK = sentence_and_look(ExplorerState())


def test_the_ten_in_focus_is_built_and_only_built_tens_beside_it_are_sent(cheap):
    assert tens_to_send(LOOK, "en", 41, room=10_000) == {41: "ten-41"}
    assert cheap == [41]
    packed_ten(LOOK, "en", 51)
    assert tens_to_send(LOOK, "en", 41, room=10_000) == {41: "ten-41", 51: "ten-51"}
    packed_ten(LOOK, "en", 31)
    assert list(tens_to_send(LOOK, "en", 41, room=10_000)) == [41, 51, 31]
    assert cheap == [41, 51, 31]  # nothing built twice
    assert built_ten(LOOK, "zh", 41) is None  # another language is another ten


def test_tens_beside_are_sent_only_while_they_fit(cheap):
    for first in (31, 41, 51):
        packed_ten(LOOK, "en", first)
    one = len("ten-41")
    assert list(tens_to_send(LOOK, "en", 41, room=2 * one)) == [41, 51]
    assert list(tens_to_send(LOOK, "en", 41, room=one)) == [41]  # the ten in focus is always sent


def test_only_the_most_recently_used_tens_are_kept(cheap, monkeypatch):
    monkeypatch.setattr(tens, "KEPT", 3)
    for first in (1, 11, 21):
        packed_ten(LOOK, "en", first)
    built_ten(LOOK, "en", 1)  # used: now the most recent
    packed_ten(LOOK, "en", 31)
    assert [built_ten(LOOK, "en", n) is not None for n in (1, 11, 21, 31)] == [True, False, True, True]


def test_the_tens_around_are_built_in_the_background_one_build_at_a_time_the_nearest_first(cheap, monkeypatch):
    packed_ten(LOOK, "en", 61)  # built already: not built again
    hold = threading.Event()
    monkeypatch.setattr(tens, "packed_ten_of_blocks",
                        lambda look, lang, first: hold.wait(10) and cheap.append(first) or f"ten-{first}")
    assert build_around(LOOK, "en", 41)
    assert not build_around(LOOK, "en", 71)  # one is running: no second build, nothing queued
    hold.set()
    with tens._BUILDING:  # released when the build is done
        assert cheap == [61, 51, 31, 21, 71, 11, 81, 1, 91]
    assert built_ten(LOOK, "en", 91) == "ten-91" and built_ten(LOOK, "zh", 91) is None


@pytest.mark.parametrize("failure,traceback", [(RuntimeError("a bug"), True),
                                               (WorkerCrashed("exit code -15"), False)])  # the server stopping
def test_a_build_ahead_that_fails_is_logged_and_frees_the_builder(cheap, monkeypatch, caplog, failure, traceback):
    def broken(look, lang, first):
        raise failure

    monkeypatch.setattr(tens, "build_in_worker", broken)
    assert build_around(LOOK, "en", 41)
    with tens._BUILDING:
        pass
    assert "building the tens of blocks ahead stopped" in caplog.text
    assert ("Traceback" in caplog.text) == traceback and str(failure) in caplog.text
    assert built_ten(LOOK, "en", 51) is None and build_around(LOOK, "en", 41)


def served(name: str) -> str | None:
    """What the app serves at ``TENS_ROUTE + name`` (None: 404)."""
    path = tens_folder() / name
    return path.read_text(encoding="ascii") if path.exists() else None


def test_every_ten_kept_is_a_file_in_the_index_and_a_ten_let_go_leaves_both(cheap, monkeypatch):
    monkeypatch.setattr(tens, "KEPT", 3)
    other = sentence_and_look(ExplorerState(scenario="confirmed"))
    for look, first in ((LOOK, 1), (LOOK, 11), (other, 1)):
        packed_ten(look, "en", first)
    assert served(ten_file(LOOK, "en", 11)) == "ten-11" and served(ten_file(other, "en", 1)) == "ten-1"
    assert json.loads(served(index_file(LOOK, "en"))) == [1, 11]
    assert json.loads(served(index_file(other, "en"))) == [1]
    packed_ten(other, "en", 21)  # the least recently used, LOOK's first ten, goes
    assert served(ten_file(LOOK, "en", 1)) is None and built_ten(LOOK, "en", 1) is None
    assert json.loads(served(index_file(LOOK, "en"))) == [11]
    assert json.loads(served(index_file(other, "en"))) == [1, 21]
    packed_ten(other, "en", 31)  # LOOK's last ten goes, and its index with it
    assert served(index_file(LOOK, "en")) is None and json.loads(served(index_file(other, "en"))) == [1, 21, 31]
    assert not list(tens_folder().glob("*.part"))  # written whole, then moved into place


def test_a_ten_built_as_the_server_stops_is_let_go_not_written_into_a_removed_folder(cheap, monkeypatch, tmp_path):
    folder = tmp_path / "tens"
    folder.mkdir()
    monkeypatch.setattr(tens, "tens_folder", lambda: folder)
    packed_ten(LOOK, "en", 1)
    assert (folder / ten_file(LOOK, "en", 1)).exists()
    tens.remove_folder(folder)  # what the server does at exit
    packed_ten(LOOK, "en", 11)  # a build ahead that ends after it: no error, nothing written
    assert not folder.exists() and built_ten(LOOK, "en", 11) is None


def test_a_sentences_files_are_named_by_a_key_of_this_server_never_by_the_sentence_alone(monkeypatch):
    url = ten_url(LOOK, "en")
    assert url.startswith(TENS_ROUTE) and ten_file(LOOK, "en", 11) == url.removeprefix(TENS_ROUTE) + "11.txt"
    others = {ten_url(sentence_and_look(ExplorerState(scenario="confirmed")), "en"), ten_url(LOOK, "zh"),
              ten_url(sentence_and_look(ExplorerState(projector=True)), "en")}
    assert url not in others and len(others) == 3
    monkeypatch.setattr(tens, "_NAMING", b"another server's key")
    assert ten_url(LOOK, "en") != url  # a student cannot work out another's link from a sentence


def test_a_ten_built_in_a_worker_process_is_the_ten_built_here():
    assert build_in_worker(LOOK, "zh", 91) == packed_ten_of_blocks(LOOK, "zh", 91)


def largest_sentence() -> Scenario:
    """As many tokens as the editor allows, every name as long as it allows, in Chinese (three
    bytes a character), spread over the whole plane."""
    name = "长" * MAX_LABEL
    tokens = tuple(Token(name, (-1) ** i * (i % 10), (i * 7 % 21) - 10.0) for i in range(MAX_TOKENS - 1))
    return Scenario(axes=(name, name), tokens=tokens, context_slot=3, contexts=(Token(name, 1.0, 2.0),
                    Token(name, -3.0, 4.0)), action=7)


def test_the_largest_sentence_and_every_ten_it_is_sent_fit_one_websocket_message():
    """Block 45 with the tens beside it built: what fits is sent, and the message stays under the
    limit (the ten in focus always goes)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"lang": "zh", "sc": encode(largest_sentence()), "depth": "100"})
    at.run()
    assert not at.exception
    look = sentence_and_look(ExplorerState(example=largest_sentence(), depth=100))
    for first in (31, 51):
        packed_ten(look, "zh", first)
    report(at, block=45)
    (element,) = at.get("bidi_component")
    assert len(element.proto.bytes) < MESSAGE_LIMIT
    assert [unpack(ten)["first"] for ten in component_data(at)["blocks"]][0] == 41


def test_a_preset_sentence_is_sent_with_both_tens_beside_the_block_in_focus():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"lang": "zh", "depth": "100"})
    at.run()
    look = sentence_and_look(ExplorerState(depth=100))
    for first in (31, 51):
        packed_ten(look, "zh", first)
    report(at, block=45)
    assert [unpack(ten)["first"] for ten in component_data(at)["blocks"]] == [41, 51, 31]
    assert len(at.get("bidi_component")[0].proto.bytes) < 0.8 * MESSAGE_LIMIT
