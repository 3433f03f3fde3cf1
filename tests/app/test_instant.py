"""The instant Explorer's Python side (issue #16): what it sends ahead is what the views draw and
the verdicts say at every depth, fits one WebSocket message, and a report from the browser moves
the URL and the words, is checked, and rebuilds nothing."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.commands import execution_control
from streamlit.runtime.scriptrunner import ScriptRunContext
from streamlit.testing.v1 import AppTest

import ui.instant_explorer as instant_explorer
from blockstab.scenario import PRESETS
from server.tens import packed_ten
from support import MESSAGE_LIMIT, ROOT
from support.explorer_view import component_data, entry, report, shown, unpack, view
from support.figures import plain
from ui.controls import MAX_EXPLORER_DEPTH, ExplorerState
from ui.examples import markdown_text, plain_text, visible
from ui.instant import SETTINGS, packed, sentence_and_look, setting_key, setting_payload
from ui.instant_explorer import KEY, packed_payload
from ui.text import Text
from ui.verdicts import verdict
from ui.views import explore
from ui.views.cut import apply_cut
from ui.views.depth import depth_figure, readouts_figure


@pytest.fixture(scope="module")
def lesson() -> dict:
    return unpack(packed_payload(sentence_and_look(ExplorerState()), "en"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_plain_text_undoes_markdown_text(value):
    assert plain_text(markdown_text(value)) == visible(value, 10_000).replace("\n", " ")


def test_the_payload_holds_every_setting_at_every_depth(lesson):
    assert set(lesson) == {setting_key(ExplorerState(**s)) for s in SETTINGS}
    for key in lesson:
        assert len(entry(lesson, key)["cuts"]) == len(entry(lesson, key)["verdicts"]) == MAX_EXPLORER_DEPTH
    assert [key for key, value in lesson.items() if isinstance(value, str)] == \
        ["residual-none-pre", "no_residual-none-pre"]


@pytest.mark.parametrize("example", sorted(PRESETS), ids=str)
def test_without_a_norm_pre_ln_is_sent_as_post_ln_because_it_draws_the_same(example):
    """Without a norm the two placements run one stream (x + F(x)), bit for bit, and the figures and
    verdicts sent ahead read the stream: Pre-LN's entry names Post-LN's instead of repeating it."""
    for residual in (True, False):
        post, pre = (ExplorerState(residual=residual, norm=False, placement=placement, example=PRESETS[example])
                     for placement in ("post", "pre"))
        np.testing.assert_array_equal(explore(replace(post, depth=100)).trace.stream,
                                      explore(replace(pre, depth=100)).trace.stream)
        for lang in ("en", "zh"):
            assert packed(setting_payload(post, Text(lang))) == packed(setting_payload(pre, Text(lang)))


@pytest.mark.parametrize("setting", [SETTINGS[0], SETTINGS[7], SETTINGS[8]],
                         ids=lambda s: setting_key(ExplorerState(**s)))
def test_every_verdict_sent_ahead_is_the_explorers_own(lesson, setting):
    t = Text("en")
    for n in range(1, MAX_EXPLORER_DEPTH + 1):
        state = ExplorerState(depth=n, **setting)
        assert entry(lesson, setting_key(state))["verdicts"][n - 1] == plain_text(verdict(state, explore(state), t)), n


@pytest.mark.parametrize("n", [1, 24, 79, 80, 100])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: setting_key(ExplorerState(**s)))
def test_figures_sent_ahead_draw_the_views_at_that_depth(lesson, setting, n):
    """Through the wire (strict JSON: a value that overflowed is null, a gap): the cut of the deepest
    figures draws the points and text the views draw n blocks deep."""
    state = ExplorerState(depth=n, **setting)
    sent, t, result = entry(lesson, setting_key(state)), Text("en"), explore(state)
    depth_cut, readouts_cut = sent["cuts"][n - 1]
    for base, cut, expected in ((sent["depth"], depth_cut, depth_figure(state, result, t)),
                                (sent["readouts"], readouts_cut, readouts_figure(state, result, t))):
        sent, drawn = plain(apply_cut(go.Figure(base), cut)), plain(go.Figure(expected.to_plotly_json()))
        assert sent["layout"] == drawn["layout"]
        for ours, theirs in zip(sent["data"], drawn["data"], strict=True):
            for key in set(ours) | set(theirs):
                if key in ("x", "y"):
                    a, b = (np.array([math.nan if v in (None, "nan") else v for v in trace.get(key, [])], dtype=float)
                            for trace in (ours, theirs))
                    np.testing.assert_array_equal(a, b)
                else:
                    assert ours.get(key) == theirs.get(key), key


def test_the_payload_is_strict_json():
    state = ExplorerState(norm=False)  # blocks 80-100 overflow
    text = packed_payload(sentence_and_look(state), "zh")
    json.loads(json.dumps(unpack(text)), parse_constant=lambda c: pytest.fail(f"{c} in the payload"))


@pytest.mark.parametrize("example", sorted(PRESETS), ids=str)
def test_one_sentence_fits_one_websocket_message(example):
    for look in (ExplorerState(example=PRESETS[example]), ExplorerState(example=PRESETS[example], projector=True,
                                                                          scenario="confirmed")):
        for lang in ("en", "zh"):
            assert len(packed_payload(sentence_and_look(look), lang)) < 0.6 * MESSAGE_LIMIT  # the app's, built once


def test_states_that_share_a_payload_share_its_cache_entry():
    states = [ExplorerState(residual=False, depth=7, block=3, focus="ffn_norm"), ExplorerState(placement="pre")]
    assert len({sentence_and_look(s) for s in states}) == 1
    assert sentence_and_look(replace(states[0], projector=True)) != sentence_and_look(states[0])


# --- the page, in AppTest ----------------------------------------------------------------------


def run_app(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"lang": "en", **query})
    return at.run()


def test_a_reported_view_moves_the_url_and_the_words_and_resends_nothing():
    at = run_app()
    before = at.get("bidi_component")[0].proto.bytes
    report(at, residual=False, depth=7)
    assert not at.exception
    assert at.query_params["residual"] == "false" and at.query_params["depth"] == "7"
    state = ExplorerState(residual=False, depth=7)
    assert shown(at)["verdict"] == plain_text(verdict(state, explore(state), Text("en")))
    assert at.get("bidi_component")[0].proto.bytes == before  # one message: Streamlit sends a reference
    assert shown(at)["numbers"]["title"] == Text("en")("explorer.numbers", block=1)


def test_a_report_back_to_a_ten_the_app_serves_sends_nothing_again(monkeypatch):
    """The block in focus moved to a ten of blocks that is built: the browser fetches it from the
    app (every ten built is a file), so the report-back sends the data it sent before (a reference
    in Streamlit's message cache), not the tens around the block again (0.57 MB a step before)."""
    at = run_app(depth="100")
    before = at.get("bidi_component")[0].proto.bytes
    packed_ten(sentence_and_look(ExplorerState(depth=100)), "en", 41)
    monkeypatch.setattr(instant_explorer, "_in_fragment_run", lambda: True)  # AppTest reruns the whole page
    report(at, block=45)
    assert not at.exception
    assert at.query_params["block"] == "45"
    assert at.get("bidi_component")[0].proto.bytes == before


def test_the_explorer_asks_once_at_its_mount_for_its_sentences_tens_to_be_built_ahead(tens_asked_ahead):
    """The server builds the other tens of blocks of the sentence in the background from the first
    visit (server.tens.build_around), so a jump of the block is a fetch; a report-back asks
    again only for another ten in focus, and another sentence is asked for anew."""
    at = run_app(lang="zh", depth="40")
    look = sentence_and_look(ExplorerState(depth=40))
    assert tens_asked_ahead == [(look, "zh", 1)]
    report(at, residual=False)
    report(at, block=7)
    assert tens_asked_ahead == [(look, "zh", 1)]  # the same ten in focus: asked for once
    report(at, block=27)
    assert tens_asked_ahead[-1] == (look, "zh", 21)
    run_app(lang="zh", scenario="confirmed", block="27")
    assert tens_asked_ahead[-1] == (sentence_and_look(ExplorerState(scenario="confirmed")), "zh", 21)


@pytest.mark.parametrize("hostile", [
    {"residual": "false"}, {"depth": 101}, {"depth": 7.5}, {"depth": True}, {"norm_kind": "<b>x</b>"},
    {"placement": None}, "view", [1, 2], {"depth": 10 ** 400}])
def test_a_view_the_browser_cannot_have_sent_is_refused_with_a_message(hostile):
    at = run_app(depth="5")
    good = component_data(at)["view"]
    at.session_state[KEY] = {"view": {**good, **hostile} if isinstance(hostile, dict) else hostile}
    at.run()
    assert not at.exception
    assert [w.value for w in at.warning] == [Text("en")("explorer.instant_refused")]
    assert view(at)["depth"] == 5 and "residual" not in at.query_params  # the view is as it was


def test_a_show_link_sends_only_the_controls_it_lists():
    at = run_app(show="residual,depth", norm="false")
    assert [spec["key"] for spec in component_data(at)["controls"]] == ["residual", "depth"]
    assert component_data(at)["view"]["norm"] is False  # a hidden control keeps the link's value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_controls_are_labelled_from_the_catalogs(lang):
    t = Text(lang)
    controls = component_data(run_app(lang=lang))["controls"]
    assert [c["label"] for c in controls] == [t(f"control.{c['key']}") for c in controls]
    (kind,) = [c for c in controls if c["key"] == "norm_kind"]
    assert kind["options"] == [[option, t(f"option.norm_kind.{option}")] for option in ("rmsnorm", "layernorm")]


def test_a_report_back_is_told_from_a_whole_run_as_streamlit_itself_tells_it(monkeypatch):
    """A ten of blocks not yet built is built after the fragment's other elements are sent, then
    the fragment reruns (``st.rerun(scope="fragment")``), which Streamlit allows only in a
    fragment's own rerun: the page reads that from the attribute Streamlit's check reads. If
    Streamlit renames or stops reading it, this fails rather than the deferral silently stopping."""
    assert "fragment_ids_this_run" in {field.name for field in dataclasses.fields(ScriptRunContext)}
    assert "ctx.fragment_ids_this_run" in inspect.getsource(execution_control._new_fragment_id_queue)
    for ctx, fragment_run in ((None, False), (SimpleNamespace(fragment_ids_this_run=[]), False),
                              (SimpleNamespace(fragment_ids_this_run=["switched"]), True)):
        monkeypatch.setattr(instant_explorer, "get_script_run_ctx", lambda ctx=ctx: ctx)
        assert instant_explorer._in_fragment_run() is fragment_run
