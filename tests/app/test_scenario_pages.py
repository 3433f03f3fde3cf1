"""The scenario editor and the active example in Streamlit's AppTest (no browser).

Each class of bad input shows its own message and keeps the last valid example (and the
person's table edits); a valid example reaches the Explorer, the tour and the worked case; bad
links fall back for the bad part only.
"""

import json
import re
import string
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from blockstab.scenario import LESSON, MAX_FILE_BYTES, PRESETS, Scenario, decode, encode, to_json
from support.explorer_view import shown
from support.pages import run_page, tables
from ui.controls import ExplorerState
from ui.examples import localized
from ui.text import LANGUAGES, Text, catalog
from ui.views import explore
from ui.views.block import block_figure, tokens_figure
from ui.views.depth import depth_figure

ROOT = Path(__file__).resolve().parents[2]
EDITOR = "pages/scenario_editor.py"
TABLE = "editor_table_0"


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def says(text: str, lang: str, key: str) -> bool:
    parts = []
    for literal_text, field, _, _ in string.Formatter().parse(catalog(lang)[key]):
        parts.append(re.escape(literal_text) + ("(.+?)" if field is not None else ""))
    return re.search("".join(parts), text, re.DOTALL) is not None


def chart_names(at: AppTest, key: str) -> list[str]:
    """The names of a chart's traces: a Streamlit chart's, or one the instant Explorer shows."""
    instant = shown(at)["figures"] if at.get("bidi_component") else {}
    if key in instant:
        return [trace.get("name") for trace in instant[key]["data"]]
    (chart,) = [c for c in at.get("plotly_chart") if c.key == key]
    return [trace.get("name") for trace in json.loads(chart.proto.spec)["data"]]


def edit(at: AppTest, edited=None, added=None, deleted=None, key: str = TABLE) -> AppTest:
    at.session_state[key] = {"edited_rows": edited or {}, "added_rows": added or [], "deleted_rows": deleted or []}
    at.run()
    assert not at.exception, [e.value for e in at.exception][:1]
    return at


def in_use(at: AppTest) -> Scenario:
    raw = at.query_params.get("sc")
    example = LESSON if raw is None else decode(raw[0] if isinstance(raw, list) else raw)
    assert isinstance(example, Scenario)
    return example


# --- the page -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_editor_starts_from_the_lesson_in_the_readers_language(lang):
    t = Text(lang)
    at = run_page(EDITOR, lang=lang)
    assert at.title[0].value == t("editor.title")
    (table,) = at.data_editor
    assert table.key == TABLE and table.editing_mode == "dynamic"
    written = localized(LESSON, t)
    assert table.value["label"].tolist() == [r["label"] for r in written.rows()]
    assert [s.value for s in at.success] == [t("editor.in_use")]
    assert at.text_input(key="editor_axis_1").value == written.axes[0]
    assert "sc" not in at.query_params  # unchanged lesson: links stay as they were
    assert {c.key for c in at.get("plotly_chart")} == {"editor_tokens", "editor_block", "editor_depth"}
    assert len(at.get("download_button")) == 1 and len(at.get("file_uploader")) == 1


def test_a_valid_edit_is_used_at_once():
    at = run_page(EDITOR, lang="en")
    edit(at, {0: {"label": "outage", "x": "0.9"}})
    example = in_use(at)
    assert example.tokens[0] == example.tokens[0].__class__("outage", 0.9, LESSON.tokens[0].y)
    state = ExplorerState(example=example)
    assert chart_names(at, "editor_tokens") == [tr.name for tr in tokens_figure(state, explore(state), Text("en")).data]
    assert not at.error


BAD_EDITS = {  # bad input class -> (edit state, the message's key)
    "empty token": ({"edited_rows": {1: {"label": ""}}}, "problem.empty_label"),
    "NaN": ({"edited_rows": {1: {"x": "NaN"}}}, "problem.not_finite"),
    "infinity": ({"edited_rows": {1: {"y": "∞"}}}, "problem.not_a_number"),
    "-inf": ({"edited_rows": {1: {"y": "-inf"}}}, "problem.not_finite"),
    "1e308": ({"edited_rows": {1: {"x": "1e308"}}}, "problem.out_of_range"),
    "text in a number cell": ({"edited_rows": {1: {"x": "one"}}}, "problem.not_a_number"),
    "duplicate action token": ({"edited_rows": {0: {"role": "action"}}}, "problem.duplicate_role"),
    "missing action token": ({"edited_rows": {5: {"role": "plain"}}}, "problem.missing_role"),
    "too many tokens": ({"added_rows": [{"label": f"w{i}", "x": "0", "y": "1", "role": "plain"} for i in range(12)]},
                        "problem.too_many_tokens"),
    "too long a label": ({"edited_rows": {2: {"label": "x" * 41}}}, "problem.label_too_long"),
    "bidi override": ({"edited_rows": {2: {"label": "abc\u202e"}}}, "problem.label_bad_character"),
    "same contexts": ({"edited_rows": {3: {"label": "same"}, 4: {"label": "same"}}}, "problem.same_contexts"),
}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("case", list(BAD_EDITS))
def test_a_bad_edit_is_refused_and_the_last_good_example_and_the_edits_stay(case, lang):
    at = run_page(EDITOR, lang=lang)
    edit(at, {0: {"label": "outage"}})  # a valid edit first: this is the last good example
    good = in_use(at)
    preview = {key: chart_names(at, key) for key in ("editor_tokens", "editor_block", "editor_depth")}
    bad, key = BAD_EDITS[case]
    edited = {0: {"label": "outage"}}
    for row, cells in bad.get("edited_rows", {}).items():
        edited[row] = {**edited.get(row, {}), **cells}
    edit(at, edited, bad.get("added_rows"))
    (error,) = at.error
    assert says(error.value, lang, "editor.refused") and says(error.value, lang, key), error.value
    assert in_use(at) == good  # the last valid example stays in use
    assert {k: chart_names(at, k) for k in preview} == preview
    assert at.data_editor[0].key == TABLE  # the same editor: its edits are kept, not reset
    kept = at.session_state[TABLE]
    assert kept["edited_rows"][0]["label"] == "outage"
    assert not at.success
    # Fixing the cell makes the example valid again, with the other edits still in it.
    edit(at, {0: {"label": "outage"}})
    assert not at.error and in_use(at) == good


def test_an_edit_state_no_browser_sends_resets_the_table_instead_of_failing():
    at = run_page(EDITOR, lang="en")
    edit(at, {0: {"label": "outage"}})
    good = in_use(at)
    edit(at, {16: {"x": "1"}}, deleted=[40])  # rows that do not exist: Streamlit cannot apply this
    assert [e.value for e in at.error] == [Text("en")("editor.table_reset")]
    assert at.data_editor[0].key == "editor_table_1" and in_use(at) == good
    edit(at, {0: {"label": "again"}}, key="editor_table_1")
    assert not at.error and in_use(at).tokens[0].label == "again"


def test_a_refusal_names_the_row_the_table_shows():
    at = run_page(EDITOR, lang="en")
    edit(at, {3: {"y": "abc"}})
    assert "Row 4, y (up): `abc` is not a number" in at.error[0].value


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_loading_a_preset_replaces_the_table(name):
    at = run_page(EDITOR, lang="zh")
    edit(at, {0: {"label": "x"}})
    at.selectbox(key="editor_preset").set_value(name)
    at.button(key="editor_load").click().run()
    assert not at.exception
    assert at.data_editor[0].key == "editor_table_1"  # a fresh editor: the old edits are gone on purpose
    assert in_use(at) is PRESETS[name] or in_use(at) == PRESETS[name]
    written = localized(PRESETS[name], Text("zh"))
    assert at.data_editor[0].value["label"].tolist() == [r["label"] for r in written.rows()]


def test_starting_from_scratch_gives_a_valid_example():
    at = run_page(EDITOR, lang="en")
    at.selectbox(key="editor_preset").set_value("blank")
    at.button(key="editor_load").click().run()
    assert not at.exception and not at.error
    example = in_use(at)
    assert example.length == 3 and not example.preset


# --- the example reaches the other pages ----------------------------------------------------------


def test_use_in_the_explorer_carries_the_example():
    at = run_page(EDITOR, lang="en")
    edit(at, {0: {"label": "outage"}, 5: {"x": "0.2"}})
    example = in_use(at)
    at.button(key="editor_use").click().run()
    assert not at.exception
    assert at.title[0].value == Text("en")("explorer.title")
    state = ExplorerState(example=example)
    result = explore(state)
    t = Text("en")
    assert chart_names(at, "block_figure") == [tr.name for tr in block_figure(state, result, t).data]
    assert chart_names(at, "depth_figure") == [tr.name for tr in depth_figure(state, result, t).data]
    assert any("outage" in c.value for c in at.caption)
    assert not shown(at)["course_match"]  # no course-table claim for an edited sentence
    # The sidebar's page links drop the query string: the session keeps the example.
    at.switch_page("pages/tour.py").run()
    assert in_use(at) == example
    assert Text("en")("example.text_is_the_lesson") in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_preset_link_drives_the_explorer(lang):
    t = Text(lang)
    at = run_page(lang=lang, sc="triage", depth="5")
    state = ExplorerState(example=PRESETS["triage"], depth=5)
    assert not at.warning
    assert chart_names(at, "block_figure") == [tr.name for tr in block_figure(state, explore(state), t).data]
    assert at.radio(key="scenario").options == [t("option.scenario.both"), t("scenario.positive"),
                                                t("scenario.negative")]
    assert not shown(at)["course_match"]
    assert at.query_params["sc"] == "triage"


def test_the_worked_case_drops_the_course_column_for_another_example():
    t = Text("en")
    at = run_page("pages/worked_case.py", lang="en", sc="support")
    table = next(table for table in tables(at) if t("case.col.scenario") in table[0])
    assert t("case.col.course") not in table[0]
    assert [row[t("case.col.scenario")] for row in table] == ["delivered", "lost"]
    assert t("example.text_is_the_lesson") in [i.value for i in at.info]
    lesson = run_page("pages/worked_case.py", lang="en")
    assert t("case.col.course") in next(table for table in tables(lesson) if t("case.col.scenario") in table[0])[0]
    assert t("example.text_is_the_lesson") not in [i.value for i in lesson.info]


# --- bad links ------------------------------------------------------------------------------------

TAMPERED = encode(localized(PRESETS["support"], Text("en")))


@pytest.mark.parametrize("raw,key", [
    (TAMPERED[:-7], "problem.payload_json"),
    (TAMPERED[:41] + "!" + TAMPERED[42:], "problem.payload_encoding"),
    ("v9." + TAMPERED[3:], "problem.payload_version"),
    ("x" * 100_000, "problem.payload_too_long"),
    ("medical", "problem.unknown_example"),
], ids=["truncated", "tampered", "version", "huge", "unknown"])
def test_a_bad_example_link_falls_back_for_that_part_only(raw, key):
    at = run_page(lang="en", sc=raw, depth="5", residual="false")
    (warning,) = at.warning
    assert says(warning.value, "en", "url.bad_example") and says(warning.value, "en", key), warning.value
    assert len(warning.value) < 600
    state = ExplorerState(depth=5, residual=False)  # the rest of the link still applies
    assert chart_names(at, "block_figure") == [tr.name for tr in block_figure(state, explore(state), Text("en")).data]
    assert "sc" not in at.query_params


@pytest.mark.parametrize("query", [
    {"zzz" * 1000: "1"},
    {"depth": "9" * 5000},
    {"depth": "5\u202e"},
    {"lang": "en\u0000"},
    {"residual": "[click](http://example.com)"},
    {"\u202ekey": "`code` **bold**"},
    {"sc": "😀" * 10},
    {"sc": "v1." + "A" * 5999},
], ids=["huge-key", "huge-value", "bidi-value", "nul", "markdown-link", "bidi-key", "emoji", "long-payload"])
def test_hostile_links_never_show_a_traceback(query):
    at = run_page(**query)
    assert at.warning
    for warning in at.warning:
        assert len(warning.value) < 600
        assert "\u202e" not in warning.value and "\u0000" not in warning.value
        if "](http" in warning.value:  # a Markdown link from the URL is quoted as code, never a link
            assert re.search(r"`[^`]*\]\(http[^`]*`", warning.value), warning.value
    assert set(shown(at)["figures"]) == {"block_figure", "depth_figure", "readouts_figure"}


# --- files ------------------------------------------------------------------------------------------


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="editor_upload").set_value((name, data, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception][:1]
    return at


def test_a_downloaded_file_loads_again():
    at = run_page(EDITOR, lang="en")
    mine = localized(PRESETS["support"], Text("zh"))
    upload(at, "mine.json", to_json(mine).encode())
    assert in_use(at) == PRESETS["support"]  # an unchanged preset, in either language, is that preset
    assert at.data_editor[0].key == "editor_table_1"
    assert at.data_editor[0].value["label"].tolist()[0] == "退款"


@pytest.mark.parametrize("data,key", [
    (b"{ not json", "problem.file_not_json"),
    (b'{"schema": "something.else", "version": 1}', "problem.file_schema"),
    (b'{"schema": "blockstab.scenario", "version": 7, "axes": [], "tokens": []}', "problem.file_version"),
    (b" " * (MAX_FILE_BYTES + 1), "problem.file_too_large"),
    (re.sub(r'"x": [-0-9.]+', '"x": 1e308', to_json(LESSON), count=1).encode(), "problem.out_of_range"),
], ids=["not-json", "schema", "version", "oversize", "value"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_bad_file_is_refused_with_a_reason_and_nothing_changes(data, key, lang):
    at = run_page(EDITOR, lang=lang)
    edit(at, {0: {"label": "outage"}})
    good = in_use(at)
    upload(at, "bad.json", data)
    assert any(says(e.value, lang, "editor.import_refused") and says(e.value, lang, key) for e in at.error), \
        [e.value for e in at.error]
    assert in_use(at) == good
    assert at.data_editor[0].key == TABLE and at.session_state[TABLE]["edited_rows"][0]["label"] == "outage"

