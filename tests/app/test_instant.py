"""The instant Explorer's Python side: its bundle (ui/bundle.py) holds what the views draw and the
verdicts say at every depth for every combination of the switches, the component's data carries no
figure, and a report from the browser moves the URL and the words, is checked, and resends nothing."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from blockstab.scenario import PRESETS
from server.bundles import DRAW_AHEAD, built
from support import ROOT
from support.bundle_reference import selected
from support.explorer_view import component_data, report, shown, view
from support.figures import plain
from ui.bundle import (
    FIGURES,
    SETTINGS,
    SWITCHES,
    built_part,
    figures_key,
    figures_part,
    index,
    packed,
    part_file,
    read_part,
    sentence_and_look,
    setting_figures,
    setting_key,
)
from ui.controls import BY_KEY, MAX_EXPLORER_DEPTH, ExplorerState
from ui.examples import markdown_text, plain_text, visible
from ui.student_page import PLOTLY_BASIC
from ui.text import Text
from ui.verdicts import verdict, verdict_sentences
from ui.views import explore
from ui.views.block import block_figure
from ui.views.cut import apply_cut
from ui.views.depth import depth_figure, readouts_figure
from ui.views.describe import block_description, depth_description, readouts_description
from ui.views.style import unvalidated
from ui.views.tables import columns_and_rows, stage_rows
from widgets.explorer import KEY


@pytest.fixture(scope="module")
def lesson() -> dict:
    """The lesson's figures part as the browser reads it (through its file: strict JSON)."""
    return read_part(part_file(figures_part(sentence_and_look(ExplorerState()), Text("en"))))


@pytest.fixture(scope="module")
def confirmed_zh() -> dict:
    """The 'confirmed' sentence's bundle in Chinese: its index, figures and the block range of block 41
    (through its file), built once for the tests that look blocks up in it."""
    look = sentence_and_look(ExplorerState(scenario="confirmed"))
    return {"index": index([FIGURES, "blocks-41"]), FIGURES: figures_part(look, Text("zh")),
            "blocks-41": read_part(built_part(look, "zh", "blocks-41"))}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_plain_text_undoes_markdown_text(value):
    assert plain_text(markdown_text(value)) == visible(value, 10_000).replace("\n", " ")


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: setting_key(ExplorerState(**s)))
def test_a_block_looked_up_in_its_range_draws_the_block_view_and_its_numbers(confirmed_zh, setting):
    """The block range's part, through its file and the index's lookup: the block view of a block
    (as a shallower stack shows its last block) and its numbers table are the views' own."""
    look, t = sentence_and_look(ExplorerState(scenario="confirmed")), Text("zh")
    for depth, block, focus in ((100, 45, "ffn_residual"), (43, 45, "attention_residual")):
        state = replace(look, **setting, depth=depth, block=block, focus=focus)
        shown_block = min(block, depth)
        picked = selected(confirmed_zh, {key: getattr(state, key) for key in (*SWITCHES, "depth", "block", "focus")})
        drawn = block_figure(replace(state, block=shown_block), explore(state), t)
        assert plain(apply_cut(unvalidated(picked["setting"]["block"]), picked["block_cut"])) == plain(drawn)
        assert picked["block"]["numbers"] == columns_and_rows(stage_rows(replace(state, block=shown_block),
                                                                         explore(state), t))
        assert picked["block"]["numbers_title"] == t("explorer.numbers", block=shown_block)
        described = block_description(replace(state, block=shown_block), explore(state), t)
        assert picked["descriptions"]["block"] == described


def test_the_index_names_the_figures_of_every_combination_of_the_switches(lesson):
    """Each combination of the switches the browser can hold is listed once, with the key of the
    stack it shows; every stack is in the figures part at every depth."""
    listed = index([FIGURES])["settings"]
    combinations = {tuple(s["when"][key] for key in SWITCHES) for s in listed}
    assert len(combinations) == len(listed) == 2 ** len(SWITCHES)
    for entry in listed:
        state = ExplorerState(**entry["when"])
        assert (entry["figures"], entry["blocks"]) == (figures_key(state), setting_key(state))
        assert all(BY_KEY[k].accepts(v) for k, v in entry["when"].items())
    assert {s["figures"] for s in listed} == set(lesson) == {figures_key(ExplorerState(**s)) for s in SETTINGS}
    assert {s["blocks"] for s in listed} == {setting_key(ExplorerState(**s)) for s in SETTINGS}
    for key in lesson:
        assert len(lesson[key]["cuts"]) == len(lesson[key]["verdicts"]) == MAX_EXPLORER_DEPTH


@pytest.mark.parametrize("example", sorted(PRESETS), ids=str)
def test_without_a_norm_pre_ln_is_sent_as_post_ln_because_it_draws_the_same(example):
    """Without a norm the two placements run one stream (x + F(x)), bit for bit, and the figures and
    verdicts read the stream: the index names Post-LN's figures for Pre-LN's switches."""
    for residual in (True, False):
        post, pre = (ExplorerState(residual=residual, norm=False, placement=placement, example=PRESETS[example])
                     for placement in ("post", "pre"))
        np.testing.assert_array_equal(explore(replace(post, depth=100)).trace.stream,
                                      explore(replace(pre, depth=100)).trace.stream)
        assert figures_key(post) == figures_key(pre) != setting_key(pre)
        for lang in ("en", "zh"):
            assert packed(setting_figures(post, Text(lang))) == packed(setting_figures(pre, Text(lang)))


@pytest.mark.parametrize("setting", [SETTINGS[0], SETTINGS[7], SETTINGS[8]],
                         ids=lambda s: setting_key(ExplorerState(**s)))
def test_every_verdict_sent_ahead_is_the_explorers_own(lesson, setting):
    t = Text("en")
    for n in range(1, MAX_EXPLORER_DEPTH + 1):
        state = ExplorerState(depth=n, **setting)
        assert lesson[figures_key(state)]["verdicts"][n - 1] == plain_text(verdict(state, explore(state), t)), n


@pytest.mark.parametrize("n", [1, 24, 79, 80, 100])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: setting_key(ExplorerState(**s)))
def test_figures_looked_up_in_the_bundle_draw_the_views_at_that_depth(lesson, setting, n):
    """Through the wire (strict JSON: a value that overflowed is null, a gap) and the index's lookup
    (``support.bundle_reference.selected``): the cut of the deepest figures draws the points and text the views
    draw n blocks deep."""
    state = ExplorerState(depth=n, **setting)
    picked = selected({"index": index([FIGURES]), FIGURES: lesson}, {**setting, "depth": n, "block": 1,
                                                                    "focus": state.focus})
    sent, t, result = picked["setting"], Text("en"), explore(state)
    assert picked["descriptions"] == {"depth": depth_description(state, result, t), "block": None,
                                      "readouts": readouts_description(state, result, t)}
    assert picked["headline"] == plain_text(verdict_sentences(state, result, t)[0])
    assert picked["verdict"].startswith(picked["headline"])
    for base, cut, expected in ((sent["depth"], picked["depth_cut"], depth_figure(state, result, t)),
                                (sent["readouts"], picked["readouts_cut"], readouts_figure(state, result, t))):
        sent, drawn = plain(apply_cut(unvalidated(base), cut)), plain(expected)
        assert sent["layout"] == drawn["layout"]
        for ours, theirs in zip(sent["data"], drawn["data"], strict=True):
            for key in set(ours) | set(theirs):
                if key in ("x", "y"):
                    a, b = (np.array([math.nan if v in (None, "nan") else v for v in trace.get(key, [])], dtype=float)
                            for trace in (ours, theirs))
                    np.testing.assert_array_equal(a, b)
                else:
                    assert ours.get(key) == theirs.get(key), key


def test_a_part_is_strict_json():
    text = part_file(figures_part(sentence_and_look(ExplorerState(norm=False)), Text("zh")))  # blocks 80-100 overflow
    json.loads(json.dumps(read_part(text)), parse_constant=lambda c: pytest.fail(f"{c} in the part"))


def trace_types(value) -> set[str]:
    """The trace types a part names: each ``type`` outside a figure's layout (whose shapes and axes have types
    of their own). A trace naming none is a scatter."""
    if isinstance(value, list):
        return set().union(*map(trace_types, value))
    if not isinstance(value, dict):
        return set()
    own = {value["type"]} if isinstance(value.get("type"), str) else set()
    return own.union(*(trace_types(v) for k, v in value.items() if k != "layout"))


def test_every_trace_a_bundle_holds_is_one_the_phones_partial_plotly_draws(lesson, confirmed_zh):
    """The take-home folder draws a bundle with the partial Plotly.js (ui/vendor/): a trace type it lacks
    would be drawn as nothing."""
    registered = set(re.findall(r'moduleType:"trace",name:"(\w+)"', PLOTLY_BASIC.read_text(encoding="utf-8")))
    held = trace_types([lesson, confirmed_zh[FIGURES], confirmed_zh["blocks-41"]])
    assert held and held <= registered, held - registered


def test_states_that_share_a_bundle_share_its_key():
    states = [ExplorerState(residual=False, depth=7, block=3, focus="ffn_norm"), ExplorerState(placement="pre")]
    assert len({sentence_and_look(s) for s in states}) == 1
    assert sentence_and_look(replace(states[0], projector=True)) != sentence_and_look(states[0])


# --- the page, in AppTest ----------------------------------------------------------------------


def run_app(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"lang": "en", **query})
    return at.run()


def figures_in(value) -> int:
    """How many Plotly figures (a dict with ``data`` and ``layout``) or packed parts ``value`` holds."""
    if isinstance(value, dict):
        return ({"data", "layout"} <= value.keys()) + sum(figures_in(v) for v in value.values())
    if isinstance(value, list):
        return sum(figures_in(v) for v in value)
    return int(isinstance(value, str) and len(value) > 2_000)  # a packed part would be long


@pytest.mark.parametrize("query", [{}, {"lang": "zh", "projector": "true"}, {"sc": "triage", "depth": "100"}])
def test_the_component_is_sent_no_figure_only_where_its_bundle_is(query):
    at = run_app(**query)
    data = component_data(at)
    assert figures_in(data) == 0 and len(at.get("bidi_component")[0].proto.bytes) < 20_000
    assert set(data) == {"bundle", "plotly", "controls", "texts", "projector", "phone", "config", "controls_for",
                         "view", "lead", "ahead"}
    assert data["lead"] is None  # the Explorer's own view: the browser leads it
    assert data["ahead"] is DRAW_AHEAD is True  # (the app's default: it draws ahead in idle time)


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


def test_a_report_back_to_a_range_not_built_builds_it_and_resends_nothing():
    """The block in focus moved to a block range no one has built: the report-back builds it (the
    browser reads the index until it is listed) and sends the data it sent before."""
    at = run_app(depth="100", scenario="confirmed")
    look = sentence_and_look(ExplorerState(depth=100, scenario="confirmed"))
    before = at.get("bidi_component")[0].proto.bytes
    assert "blocks-41" not in built(look, "en")
    report(at, block=45)
    assert not at.exception
    assert at.query_params["block"] == "45" and "blocks-41" in built(look, "en")
    assert at.get("bidi_component")[0].proto.bytes == before
    assert shown(at)["numbers"]["title"] == Text("en")("explorer.numbers", block=45)


def test_the_explorer_asks_once_at_its_mount_for_its_sentences_ranges_to_be_built_ahead(ranges_asked_ahead):
    """The server builds the other block ranges of the sentence in the background from the first
    visit (server.bundles.build_around), so a jump of the block is a fetch; a report-back asks
    again only for another range in focus, and another sentence is asked for anew."""
    at = run_app(lang="zh", depth="40")
    look = sentence_and_look(ExplorerState(depth=40))
    assert ranges_asked_ahead == [(look, "zh", 1)]
    report(at, residual=False)
    report(at, block=7)
    assert ranges_asked_ahead == [(look, "zh", 1)]  # the same range in focus: asked for once
    report(at, block=27)
    assert ranges_asked_ahead[-1] == (look, "zh", 21)
    run_app(lang="zh", scenario="confirmed", block="27")
    assert ranges_asked_ahead[-1] == (sentence_and_look(ExplorerState(scenario="confirmed")), "zh", 21)


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
    english = "en" if lang == "zh" else ""  # the names (RMSNorm, LayerNorm) are English words on a Chinese page
    assert kind["options"] == [[option, t(f"option.norm_kind.{option}"), english]
                               for option in ("rmsnorm", "layernorm")]
