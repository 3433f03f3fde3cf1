"""The pages run end to end in Streamlit's AppTest (no browser): each control, each page, bad URLs.

Charts are compared with the pure figure functions for the state the widgets show: the Plotly
spec is JSON in which Plotly >= 6 encodes numeric arrays as ``{"dtype", "bdata", "shape"}``. The
Explorer's figures, verdict and notes are the instant Explorer's, read as a browser would show them
(``explorer_view``).
"""

import ast
import json
import re

import numpy as np
import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from blockstab.block import STAGES
from blockstab.lesson import COURSE_TABLE
from server.resume import RESUMED, RESUMED_STATES, component_states
from support import APP
from support.explorer_view import Control as InstantControl
from support.explorer_view import component_data, shown
from support.pages import charts, decode, run_app, same_data, tables, url_warnings, xy
from support.text import opens_with, says
from ui.controls import BY_KEY, CONTROLS, ExplorerState, check_query
from ui.examples import plain_text
from ui.text import LANGUAGES, Text
from ui.verdicts import verdict
from ui.views import explore
from ui.views.block import block_figure
from ui.views.depth import depth_figure, readouts_figure
from ui.views.style import wrap
from ui.views.tables import columns_and_rows, stage_rows
from widgets.explorer import KEY

CHARTS = ("block_figure", "depth_figure", "readouts_figure")


def test_decode_reads_plotly_typed_arrays():
    import plotly.graph_objects as go

    x = np.array([0.5, -1.25, 3e300])
    z = np.arange(6, dtype=np.int64).reshape(2, 3)
    spec = decode(json.loads(go.Figure([go.Scatter(x=x, y=[1, 2, 3]), go.Heatmap(z=z)]).to_json()))
    np.testing.assert_array_equal(spec["data"][0]["x"], x)
    np.testing.assert_array_equal(spec["data"][0]["y"], [1, 2, 3])
    np.testing.assert_array_equal(spec["data"][1]["z"], z)


def said(at: AppTest) -> str:
    """The Explorer's verdict, as the browser shows it for the page's view."""
    return shown(at)["verdict"]


def widget(at: AppTest, key: str):
    """The control's widget: the instant Explorer's, else a choice is a radio, or a one-line selectbox
    in projector mode's top row."""
    if BY_KEY[key].instant:
        return InstantControl(at, key)
    kind = BY_KEY[key].kind
    if kind == "choice" and not any(r.key == key for r in at.radio):
        return at.selectbox(key=key)
    return {"toggle": at.toggle, "choice": at.radio, "int": at.slider}[kind](key=key)


def shown_state(at: AppTest) -> ExplorerState:
    """The state the sidebar widgets show right now."""
    return ExplorerState(**{c.key: widget(at, c.key).value for c in CONTROLS},
                         projector=at.toggle(key="projector").value)


def assert_page_matches(at: AppTest, state: ExplorerState, lang: str) -> None:
    """Verdict, charts and table are what the pure functions make of ``state``."""
    t = Text(lang)
    result = explore(state)
    assert not at.exception, [e.value for e in at.exception]
    assert said(at) == plain_text(verdict(state, result, t, compact=state.projector))
    drawn = charts(at)
    assert set(drawn) == set(CHARTS)
    assert same_data(drawn["block_figure"], block_figure(state, result, t))
    assert same_data(drawn["depth_figure"], depth_figure(state, result, t))
    assert same_data(drawn["readouts_figure"], readouts_figure(state, result, t))
    assert [len(tr["x"]) for tr in drawn["depth_figure"]["data"][:len(state.scenarios)]] == \
        [state.depth + 1] * len(state.scenarios)  # each path, to the last block
    assert shown(at)["numbers"] == {"title": t("explorer.numbers", block=state.shown_block),
                                    **columns_and_rows(stage_rows(state, result, t))}


# --- the default page -------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_default_page_runs(lang):
    at = run_app(lang=lang)
    t = Text(lang)
    assert not at.exception
    assert not at.warning
    assert at.query_params["lang"] == lang
    assert at.radio(key="lang_choice").value == lang
    assert at.title[0].value == t("explorer.title")
    state = shown_state(at)
    assert state == ExplorerState()
    assert_page_matches(at, state, lang)
    assert opens_with(said(at), lang, "verdict.stable")
    block = charts(at)["block_figure"]
    ends = {tuple(np.round(xy(tr)[-1], 3)) for tr in block["data"] if tr.get("legendgroup")}
    assert set(COURSE_TABLE.values()) <= ends
    assert shown(at)["course_match"]
    assert not tables(at)  # the numbers table is the component's
    assert [b.label for b in at.get("download_button")] == [t("download.csv"), t("download.take_home")]
    labels = {w.label for w in (*at.toggle, *at.radio, *at.slider)}
    labels |= {spec["label"] for spec in component_data(at)["controls"]}
    assert {t("control." + c.key) for c in CONTROLS} <= labels


@pytest.mark.parametrize("locale,lang", [("zh-CN", "zh"), ("zh-TW", "zh"), ("de-DE", "en"), (None, "en")])
def test_without_lang_the_browser_locale_decides(locale, lang):
    at = run_app(context={"locale": locale})
    assert not at.exception
    assert at.query_params["lang"] == lang
    assert at.title[0].value == Text(lang)("explorer.title")


# --- every control ----------------------------------------------------------------------------

CHANGES = {  # one non-default value per control, and what it must change on the page
    "scenario": "confirmed",
    "residual": False,
    "norm": False,
    "norm_kind": "layernorm",
    "placement": "pre",
    "depth": 5,
    "block": 3,
    "focus": "ffn_norm",
}


def test_every_control_is_exercised():
    assert set(CHANGES) == {c.key for c in CONTROLS}
    assert all(CHANGES[c.key] != c.default for c in CONTROLS)


def _specific(at: AppTest, key: str, t: Text, lang: str) -> None:
    info, notes = said(at), shown(at)["notes"]
    block = charts(at)["block_figure"]
    if key == "scenario":
        assert opens_with(info, lang, "verdict.stable")
        assert {tr["legendgroup"] for tr in block["data"] if tr.get("legendgroup")} == {"confirmed"}
    elif key == "residual":
        assert opens_with(info, lang, "verdict.collapse"), info
        assert not shown(at)["course_match"]  # block 1 no longer matches the course's table
    elif key == "norm":
        assert opens_with(info, lang, "verdict.grew"), info
        assert t("explorer.rmsnorm_note") not in notes
    elif key == "norm_kind":
        assert notes == [t("explorer.layernorm_2d")]
        assert component_data(at)["texts"]["why_link"] == t("explorer.why_link")
        assert any(tr.get("name") == t("legend.ln_target") for tr in block["data"])
    elif key == "placement":
        column = [row[0] for row in shown(at)["numbers"]["rows"]]
        assert column == [t("stage." + s) for s in STAGES["pre"]]
    elif key == "depth":
        assert opens_with(info, lang, "verdict.stable") and "5" in info
        depth = charts(at)["depth_figure"]
        assert depth["layout"]["title"]["text"] == wrap(t("fig.depth.title", depth=5))
        assert {len(tr["x"]) for tr in depth["data"][:2]} == {6}
    elif key == "block":
        assert block["layout"]["title"]["text"].replace("<br>", "").startswith(
            t("fig.block.title", block=3, stage="@").split("@")[0])
        assert not shown(at)["course_match"]  # the course's table is about block 1
    elif key == "focus":
        assert block["layout"]["title"]["text"] == wrap(t("fig.block.title", block=1, stage=t("stage.ffn_norm")))


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("key", list(CHANGES))
def test_each_control_changes_what_it_should(key, lang):
    at = run_app(lang=lang)
    before = shown(at)["figures"]
    widget(at, key).set_value(CHANGES[key])
    at.run()
    state = ExplorerState(**{key: CHANGES[key]})
    assert shown_state(at) == state
    assert_page_matches(at, state, lang)
    assert shown(at)["figures"] != before
    _specific(at, key, Text(lang), lang)


# Regression: until d8b8666 a st.radio bound with bind="query-params" kept its translated label
# in the URL (?scenario=Rollback+confirmed), so links with ids were ignored and clicks crashed.
@pytest.mark.parametrize("key", list(CHANGES))
def test_each_control_is_restored_from_the_url(key):
    value = CHANGES[key]
    raw = str(value).lower() if isinstance(value, bool) else str(value)
    at = run_app(lang="en", **{key: raw})
    assert url_warnings(at) == []
    assert widget(at, key).value == value
    assert_page_matches(at, ExplorerState(**{key: value}), "en")
    _specific(at, key, Text("en"), "en")


def test_a_shared_link_restores_several_controls_at_once():
    at = run_app(lang="zh", residual="false", depth="10", block="30", norm="TRUE")
    state = ExplorerState(residual=False, depth=10, block=30)
    assert shown_state(at) == state
    assert_page_matches(at, state, "zh")
    t = Text("zh")
    assert t("explorer.block_clamped", depth=10) in shown(at)["notes"]


def test_language_switch_rewrites_the_url_and_keeps_the_controls():
    at = run_app(lang="en", residual="false", scenario="confirmed")
    at.radio(key="lang_choice").set_value("zh")
    at.run()
    assert at.query_params["lang"] == "zh"
    assert at.query_params["scenario"] == "confirmed"
    assert at.title[0].value == Text("zh")("explorer.title")
    assert shown_state(at) == ExplorerState(residual=False, scenario="confirmed")
    assert opens_with(said(at), "zh", "verdict.collapse")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_projector_mode_enlarges_the_figures(lang):
    at = run_app(lang=lang)
    normal = charts(at)
    at.toggle(key="projector").set_value(True)
    at.run()
    assert not at.exception
    assert at.toggle(key="projector").value is True
    assert any("font-size" in h.proto.body for h in at.get("html"))
    big = charts(at)
    for name in CHARTS:
        assert big[name]["layout"]["font"]["size"] > normal[name]["layout"]["font"]["size"]
    # Every control is still on the page, wherever projector mode puts it.
    assert shown_state(at) == ExplorerState(projector=True)
    assert_page_matches(at, ExplorerState(projector=True), lang)


# --- every page -------------------------------------------------------------------------------


def registered_pages() -> list[str]:
    """The script of every st.Page in app.py, read from its source."""
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    return [node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page"]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("script", registered_pages())
def test_every_page_runs(script, lang):
    at = run_app(lang=lang)
    at.switch_page(script).run()
    assert not at.exception, [e.value for e in at.exception][:1]
    if script == "pages/live_class.py":  # AppTest's server listens on loopback: phones could not join
        assert [says(w.value, lang, "class.local_only") for w in at.warning] == [True]
    elif script != "pages/explorer.py":
        assert not at.warning
    assert at.query_params["lang"] == lang
    headings = [h.value for h in (*at.title, *at.header, *at.subheader)]
    assert headings, "every page has a heading"
    if lang == "zh":
        assert any(re.search(r"[\u4e00-\u9fff]", h) for h in headings), headings


# --- the geometry page ------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_geometry_page_runs(lang):
    t = Text(lang)
    at = run_app(lang=lang)
    at.switch_page("pages/norm_geometry.py").run()
    assert not at.exception
    assert at.title[0].value == t("geometry.title")
    markdown = [m.value for m in at.markdown]
    for key in ("geometry.intro", "geometry.why_2d", "geometry.why_3d"):
        assert t(key) in markdown
    drawn = charts(at)
    assert set(drawn) == {"geometry_2d", "geometry_3d"}
    (circle,) = drawn["geometry_3d"]["data"]
    radius = np.hypot(*xy(circle).T)
    assert np.median(radius) == pytest.approx(np.sqrt(3), rel=1e-4)
    outputs = [tr for tr in drawn["geometry_2d"]["data"] if tr["name"] == t("geometry.outputs")]
    assert len(outputs) == 2
    assert [p.proto.label for p in at.get("page_link")] == [t("geometry.back")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_in_projector_mode_the_layernorm_caveat_is_in_the_verdicts_box(lang):
    """No warning box and link under the verdict (the figures stay on a 1280x720 screen): the 2-D
    caveat follows the verdict in its box."""
    at = run_app(lang=lang, projector="true", norm_kind="layernorm")
    assert not at.exception
    assert shown(at)["notes"] == [] and shown(at)["caveat"] == Text(lang)("explorer.layernorm_2d_short")
    assert shown(run_app(lang=lang, projector="true"))["caveat"] is None


def test_geometry_page_is_reached_from_the_layernorm_warning():
    at = run_app(lang="en")
    widget(at, "norm_kind").set_value("layernorm")
    assert shown(at)["notes"] == [Text("en")("explorer.layernorm_2d")]
    assert component_data(at)["texts"]["why_href"] == "/geometry?lang=en"
    assert 'st.Page("pages/norm_geometry.py"' in APP.read_text() and 'url_path="geometry"' in APP.read_text()


# --- bad URLs ---------------------------------------------------------------------------------

# Regressions: until e61d252 any ignored parameter crashed the page (Text.__call__ took 'key' twice)
# and an invalid lang was replaced before it could be reported.
@pytest.mark.parametrize("query", [
    {"depth": "abc"},
    {"depth": "0"},
    {"depth": "101"},
    {"residual": "maybe"},
    {"zzz": "1"},
    {"lang": "xx"},
    {"depth": "99999", "residual": "banana", "zzz": "1", "lang": "en"},
], ids=["depth-abc", "depth-0", "depth-101", "residual-maybe", "unknown-key", "lang-xx", "tampered"])
def test_a_bad_url_warns_and_the_page_still_renders(query):
    at = run_app(**query)
    assert not at.exception, [e.value for e in at.exception][:1]
    lang = at.query_params.get("lang", "en")
    warnings = [w.value for w in at.warning]
    bad = [(k, v) for k, v in query.items() if k != "lang"] or list(query.items())
    assert len(warnings) == 1, warnings  # one notice names every ignored setting
    assert says(warnings[0], lang, "url.ignored" if len(bad) == 1 else "url.ignored_list")
    for key, value in bad:
        assert key in warnings[0] and value in warnings[0]
    assert set(charts(at)) == set(CHARTS)
    # Every ignored value falls back to its default.
    for key, _ in bad:
        if key in CHANGES:
            assert widget(at, key).value == BY_KEY[key].default


# Values check_query accepts must be the values the bound widgets take; otherwise the app drops
# the value silently (no warning) while the link seems fine.


@pytest.mark.parametrize("key,raw", [
    ("residual", "FALSE"), ("norm", "False"), ("projector", "True"), ("depth", "7"), ("depth", "010"),
    ("block", "10"), ("norm_kind", "layernorm"), ("focus", "attention_norm"), ("scenario", "not_confirmed"),
])
def test_values_check_query_accepts_are_the_values_the_widgets_take(key, raw):
    assert check_query({key: raw}) == []
    at = run_app(lang="en", **{key: raw})
    assert not at.exception
    shown = at.toggle(key=key).value if key == "projector" else widget(at, key).value
    assert shown == BY_KEY[key].parse(raw)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("key", sorted(c.key for c in CONTROLS if c.kind == "choice"))
def test_a_radio_writes_its_language_neutral_id_to_the_url(key, lang):
    at = run_app(lang=lang)
    widget(at, key).set_value(CHANGES[key]).run()
    assert at.query_params[key] == CHANGES[key]
    widget(at, key).set_value(BY_KEY[key].default).run()
    assert key not in at.query_params  # a default leaves the URL clean


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_translated_label_in_the_url_is_reported(lang):
    label = Text(lang)("option.scenario.confirmed")
    at = run_app(lang=lang, scenario=label)
    assert not at.exception
    assert len(url_warnings(at, lang)) == 1
    assert at.radio(key="scenario").value == "both"


def test_a_toggle_value_with_spaces_is_reported_not_dropped_silently():
    assert check_query({"residual": " false "}) == [("residual", " false ")]
    at = run_app(lang="en", residual=" false ")
    assert not at.exception
    assert len(at.warning) == 1 and widget(at, "residual").value is True


def test_the_new_session_line_moves_no_element_of_the_page():
    """A page back on a new session (server/resume.py) says so in one line, in a slot every run has: the
    page's elements keep their places, so the browser does not redraw (blank) them while the run goes on."""
    def places(at: AppTest) -> dict[str, int]:  # each title's place: the page's element that is or holds it
        return {str(title.value): n for n, e in enumerate(at.main.children.values())
                for title in ([e] if e.type == "title" else e.get("title") if isinstance(e, Block) else [])}

    plain = run_app(lang="en")
    resumed = AppTest.from_file(str(APP), default_timeout=60)
    resumed.query_params.update(lang="en")
    resumed.session_state[RESUMED] = True
    resumed.run()
    assert [i.value for i in resumed.info][:1] == [Text("en")("app.new_session")]
    assert not [i for i in plain.info if i.value == Text("en")("app.new_session")]
    assert places(resumed) == places(plain) != {}


def test_an_explorer_back_on_a_new_session_keeps_the_touch_it_came_back_with():
    """A page whose server process died comes back on a new session with its first touch (the Explorer's
    state, server/resume.py): that view wins over the URL's and goes into the URL, for that run only; what a
    browser sends that is not JSON counts as nothing. The component's id ends with its key, as the states'
    keys are read (Streamlit 1.67)."""
    touched = {c.key: getattr(ExplorerState(), c.key) for c in CONTROLS if c.instant} | {"residual": False}
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(lang="en")
    at.session_state[RESUMED] = True
    (element,) = run_app(lang="en").get("bidi_component")
    request = ClientState()
    request.widget_states.widgets.add(id=element.proto.id, json_value=json.dumps({"view": touched}))
    request.widget_states.widgets.add(id="$$ID-0-projector", bool_value=True)
    at.session_state[RESUMED_STATES] = component_states(request)
    assert at.session_state[RESUMED_STATES] == {KEY: json.dumps({"view": touched})}
    at.run()
    assert at.query_params["residual"] == "false" and component_data(at)["view"] == touched
    assert RESUMED_STATES not in at.session_state
    broken = AppTest.from_file(str(APP), default_timeout=60)
    broken.query_params.update(lang="en")
    broken.session_state[RESUMED_STATES] = {KEY: "{not json"}
    broken.run()
    assert not broken.exception and "residual" not in broken.query_params
