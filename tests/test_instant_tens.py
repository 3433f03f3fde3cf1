"""The tens of blocks the instant Explorer sends (ui/instant_tens.py): which are sent, what is kept,
what is built beside, and that the largest sentence the editor allows still fits one message."""

from __future__ import annotations

import threading
from collections import OrderedDict

import pytest
from explorer_view import component_data, report, unpack
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from test_instant import MESSAGE_LIMIT, ROOT

import ui.instant_tens as tens
from blockstab.scenario import MAX_LABEL, MAX_TOKENS, Scenario, Token, encode
from ui.controls import MAX_EXPLORER_DEPTH, ExplorerState
from ui.instant import sentence_and_look
from ui.instant_tens import BLOCKS_SENT, beside, blocks_sent, build_beside, built_ten, packed_ten, tens_to_send


@given(st.integers(1, MAX_EXPLORER_DEPTH))
def test_a_block_is_in_the_ten_from_its_first_and_the_tens_beside_exist(block):
    first = blocks_sent(block)
    assert first <= block < first + BLOCKS_SENT and first % BLOCKS_SENT == 1
    assert all(1 <= n <= MAX_EXPLORER_DEPTH and abs(n - first) == BLOCKS_SENT for n in beside(first))
    assert len(beside(first)) == (1 if first in (1, blocks_sent(MAX_EXPLORER_DEPTH)) else 2)


@pytest.fixture
def cheap(monkeypatch):
    """Tens that are cheap to build (their first block, as text), kept afresh; the builds counted."""
    built = []
    monkeypatch.setattr(tens, "_kept", OrderedDict())
    monkeypatch.setattr(tens, "packed", lambda ten: f"ten-{ten}")
    monkeypatch.setattr(tens, "ten_of_blocks", lambda look, t, first: built.append(first) or first)
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


def test_the_tens_beside_are_built_in_the_background_one_build_at_a_time(cheap, monkeypatch):
    hold = threading.Event()
    monkeypatch.setattr(tens, "ten_of_blocks", lambda look, t, first: hold.wait(10) and cheap.append(first) or first)
    assert build_beside(LOOK, "en", 41)
    assert not build_beside(LOOK, "en", 71)  # one is running: no second build, nothing queued
    hold.set()
    with tens._BUILDING:  # released when the build is done
        assert sorted(cheap) == [31, 51]
    assert built_ten(LOOK, "en", 51) == "ten-51" and built_ten(LOOK, "en", 81) is None


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
