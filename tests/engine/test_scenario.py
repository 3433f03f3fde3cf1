"""The example sentence: presets, table parsing, the URL and file forms, and hostile input.

Unit cases name each refusal; hypothesis properties check that encode -> decode and file
export -> import round-trip, and that any random or mutated table, URL value or file either
yields a valid Scenario or a list of known problems, never an exception.
"""

import base64
import json
import math
import re
import string

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blockstab.block import StackConfig, run_stack
from blockstab.lesson import COURSE_TABLE, lesson_embeddings, lesson_params, lesson_trace
from blockstab.readouts import angle_degrees
from blockstab.scenario import (
    JSON_SCHEMA,
    LESSON,
    MAX_ABS,
    MAX_FILE_BYTES,
    MAX_LABEL,
    MAX_ROWS,
    MAX_TOKENS,
    MAX_URL,
    MIN_TOKENS,
    PRESETS,
    ROLES,
    SIDES,
    Problem,
    Scenario,
    Token,
    decode,
    encode,
    from_json,
    parse,
    to_json,
    validate,
)
from support.matrix import examples
from ui.controls import ExplorerState
from ui.examples import canonical, literal, localized, markdown_text, plotly_text, problem_text, table_rows
from ui.text import LANGUAGES, Text, catalog
from ui.views import explore
from ui.views.tables import course_table_matches

CODES = {k.split(".", 1)[1] for k in catalog("en") if k.startswith("problem.")}


def codes(result) -> list[str]:
    assert isinstance(result, list), result
    return [p.code for p in result]


def rows_of(example: Scenario) -> list[dict]:
    return example.rows()


def with_cell(rows: list[dict], n: int, **cells) -> list[dict]:
    return [{**row, **cells} if i == n else dict(row) for i, row in enumerate(rows)]


# --- presets ------------------------------------------------------------------------------------


def test_the_lesson_preset_is_the_lesson_exactly():
    np.testing.assert_array_equal(LESSON.embeddings(), lesson_embeddings())
    state = ExplorerState(depth=1)
    assert course_table_matches(explore(state), state)
    got = lesson_trace(StackConfig(depth=1)).stage("attention_residual")[0, :, LESSON.action]
    assert np.round(got, 3).tolist() == [list(COURSE_TABLE[s]) for s in SIDES]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_valid_and_round_trips(name):
    preset = PRESETS[name]
    assert preset.preset == name
    assert validate(preset) == []
    assert encode(preset) == name and decode(name) is preset
    for lang in LANGUAGES:
        written = localized(preset, Text(lang))
        assert validate(written) == []
        assert canonical(written) is preset
        assert decode(encode(written)) == written
        assert from_json(to_json(written)) == written


@pytest.mark.parametrize("name", sorted(set(PRESETS) - {"lesson"}))
def test_other_presets_behave_like_the_lesson_but_claim_no_course_match(name):
    example = PRESETS[name]
    for depth in (24, 100):
        state = ExplorerState(depth=depth, example=example)
        r = explore(state).readouts
        assert r.relative_residual[-1].min() > 0.2  # both stabilisers: tokens stay distinct
        assert r.scenario_angle[-1] > 5  # and the two sentences stay apart
    assert explore(ExplorerState(residual=False, example=example)).readouts.relative_residual[-1].max() < 1e-3
    assert explore(ExplorerState(norm=False, example=example)).readouts.action_norm[-1].min() > 1e30
    state = ExplorerState(depth=1, example=example)
    assert not course_table_matches(explore(state), state)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_keeps_its_action_token_apart_and_its_sentences_different(name, placement):
    """Both stabilisers, depths 24, 100 and 1000: the action token stays at least 15 degrees from
    every other token of its sentence, and the two sentences' action tokens at least 5 degrees apart."""
    example = PRESETS[name]
    for depth in (24, 100, 1000):
        output = run_stack(example.embeddings(), lesson_params(), StackConfig(depth=depth, placement=placement)).output
        action = output[:, example.action]
        others = np.delete(output, example.action, axis=1)
        assert angle_degrees(action[:, None], others).min() >= 15.0, depth
        assert angle_degrees(action[0], action[1]) >= 5.0, depth


def test_an_edited_copy_of_the_lesson_is_no_longer_the_lesson():
    copy = localized(LESSON, Text("en"))
    state = ExplorerState(depth=1, example=copy)
    assert copy != LESSON and canonical(copy) is LESSON
    renamed = Scenario(copy.axes, copy.tokens, copy.context_slot, (Token("yes", *copy.contexts[0].vector),
                                                                   copy.contexts[1]), copy.action)
    assert canonical(renamed) == renamed
    assert not course_table_matches(explore(state), state)  # numbers equal, but not the lesson preset


# --- the table ----------------------------------------------------------------------------------

GOOD = table_rows(localized(PRESETS["triage"], Text("en")))
AXES = ["symptom", "urgency"]


def test_text_cells_parse_to_the_same_example():
    assert parse(AXES, GOOD) == localized(PRESETS["triage"], Text("en"))


@pytest.mark.parametrize("cells,code", [
    ({"label": ""}, "empty_label"),
    ({"label": "   "}, "empty_label"),
    ({"label": None}, "empty_label"),
    ({"label": float("nan")}, "empty_label"),
    ({"label": 12}, "label_not_text"),
    ({"label": "x" * (MAX_LABEL + 1)}, "label_too_long"),
    ({"label": "evil\u202eexe"}, "label_bad_character"),
    ({"label": "zero\u200bwidth"}, "label_bad_character"),
    ({"label": "line\nbreak"}, "label_bad_character"),
    ({"label": "\ud800"}, "label_bad_character"),
    ({"x": "abc"}, "not_a_number"),
    ({"x": "1,5"}, "not_a_number"),
    ({"x": "0x10"}, "not_a_number"),
    ({"x": "1_0"}, "not_a_number"),
    ({"x": True}, "not_a_number"),
    ({"x": [1]}, "not_a_number"),
    ({"x": "NaN"}, "not_finite"),
    ({"x": "inf"}, "not_finite"),
    ({"y": "-Infinity"}, "not_finite"),
    ({"x": float("nan")}, "number_missing"),
    ({"x": float("inf")}, "not_finite"),
    ({"x": "1e308"}, "out_of_range"),
    ({"x": "1e999"}, "out_of_range"),
    ({"x": 10 ** 400}, "out_of_range"),
    ({"y": "10.5"}, "out_of_range"),
    ({"y": ""}, "number_missing"),
    ({"y": None}, "number_missing"),
    ({"role": "boss"}, "unknown_role"),
])
def test_a_bad_cell_is_named_with_its_row_and_column(cells, code):
    problems = parse(AXES, with_cell(GOOD, 1, **cells))
    assert codes(problems) == [code]
    (problem,) = problems
    assert problem.row == 2 and problem.field == next(iter(cells))


@pytest.mark.parametrize("raw,value", [("1.5", 1.5), (" -0.25 ", -0.25), ("１.５", 1.5), ("−2", -2.0), ("+.5", 0.5),
                                        ("1e1", 10.0), ("-10", -10.0), (3, 3.0), ("-0", 0.0)])
def test_numbers_people_type_are_read(raw, value):
    parsed = parse(AXES, with_cell(GOOD, 0, x=raw))
    assert isinstance(parsed, Scenario) and parsed.tokens[0].x == value


def test_outer_spaces_are_trimmed_and_an_empty_role_is_plain():
    parsed = parse([" a ", "b"], with_cell(GOOD, 0, label="  fever  ", role=None))
    assert parsed.axes == ("a", "b") and parsed.tokens[0].label == "fever"


@pytest.mark.parametrize("role,code", [("action", "missing_role"), ("context_a", "missing_role"),
                                       ("context_b", "missing_role")])
def test_each_role_must_be_there(role, code):
    rows = [dict(r, role="plain") if r["role"] == role else r for r in GOOD]
    problems = parse(AXES, rows)
    assert codes(problems) == [code] and problems[0].value == role


def test_a_second_action_token_is_refused():
    problems = parse(AXES, with_cell(GOOD, 0, role="action"))
    assert codes(problems) == ["duplicate_role"] and problems[0].count == 2


def test_too_few_and_too_many_tokens():
    minimal = [r for r in GOOD if r["role"] != "plain"]
    assert isinstance(parse(AXES, minimal), Scenario) and len(minimal) - 1 == MIN_TOKENS
    one = [dict(GOOD[3], role="context_a"), dict(GOOD[4], role="context_b")]
    assert codes(parse(AXES, one)) == ["missing_role", "too_few_tokens"]
    extra = [{"label": f"w{i}", "x": "0.1", "y": "0.2", "role": "plain"} for i in range(MAX_TOKENS)]
    assert codes(parse(AXES, GOOD + extra)) == ["too_many_tokens"]
    assert codes(parse(AXES, GOOD + extra * 1000)) == ["too_many_tokens"]  # refused before reading


def test_both_contexts_named_alike_are_refused():
    rows = [dict(r, label="same") if r["role"].startswith("context") else r for r in GOOD]
    assert codes(parse(AXES, rows)) == ["same_contexts"]


def test_every_problem_of_a_table_is_reported_at_once():
    rows = with_cell(with_cell(GOOD, 0, label="", x="nan"), 2, y="zz")
    problems = parse(["", "ok"], rows)
    assert codes(problems) == ["empty_label", "empty_label", "not_finite", "not_a_number"]
    assert [(p.row, p.field) for p in problems] == [(1, "axis"), (1, "label"), (1, "x"), (3, "y")]


def test_the_context_slot_is_where_context_a_stands():
    rows = [GOOD[4], GOOD[0], GOOD[1], GOOD[2], GOOD[3], GOOD[5]]  # context B first, A at position 3
    parsed = parse(AXES, rows)
    assert parsed.context_slot == 3 and [t.label for t in parsed.sentence("not_confirmed")][3] == "negative"
    assert parsed.sentence("confirmed")[parsed.action].label == "next step"


# --- the URL form -------------------------------------------------------------------------------

CUSTOM = parse(["across <b>", "up & away"], with_cell(GOOD, 0, label="<script>alert(1)</script>"))


def payload(doc) -> str:
    return "v1." + base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")


def test_encode_is_compact_and_versioned():
    value = encode(CUSTOM)
    assert value.startswith("v1.") and len(value) < 400
    assert set(value[3:]) <= set(string.ascii_letters + string.digits + "-_")
    assert decode(value) == CUSTOM


@pytest.mark.parametrize("raw,code", [
    ("x" * (MAX_URL + 1), "payload_too_long"),
    ("", "unknown_example"),
    ("Lesson", "unknown_example"),
    ("v2.AAAA", "payload_version"),
    ("v1.***", "payload_encoding"),
    ("v1.A", "payload_encoding"),
    ("v1.//8", "payload_encoding"),
    ("v1." + base64.urlsafe_b64encode(b"\xff\xfe").decode(), "payload_encoding"),
    ("v1." + base64.urlsafe_b64encode(b"[[1,").decode().rstrip("="), "payload_json"),
    ("v1." + base64.urlsafe_b64encode(b"[[1,").decode(), "payload_json"),  # padding is not written, but read
    ("v1." + base64.urlsafe_b64encode(b"[" * 3000).decode().rstrip("="), "payload_too_deep"),
    (payload({"a": 1}), "payload_shape"),
    (payload([["a", "b"], [["w", 1, 2]]]), "payload_shape"),
    (payload([["a", "b"], [["w", 1, 2, "Z"]]]), "payload_shape"),
    (payload([["a", "b"], [["w", 1, 2, "p"]] * (MAX_ROWS + 1)]), "too_many_tokens"),
    (payload([["a", "b"], [["w", 1, 2, "a"], ["p", 1, 2, "A"], ["n", 1e308, 2, "B"]]]), "out_of_range"),
    (payload([["a", "b"], [["w", 1, 2, "a"], ["p", 1, 2, "A"], ["n", "NaN", 2, "B"]]]), "not_finite"),
])
def test_a_bad_url_value_is_refused_with_a_reason(raw, code):
    assert code in codes(decode(raw))


def test_json_nan_and_infinity_in_a_payload_are_refused():
    text = '[["a","b"],[["w",NaN,2,"a"],["p",1,Infinity,"A"],["n",1,2,"B"]]]'
    raw = "v1." + base64.urlsafe_b64encode(text.encode()).decode()
    assert codes(decode(raw)) == ["not_finite", "not_finite"]


def test_a_truncated_link_is_refused_at_every_length():
    value = encode(CUSTOM)
    for end in range(len(value)):
        result = decode(value[:end])
        assert isinstance(result, list) and set(codes(result)) <= CODES, (end, result)


def test_the_largest_valid_example_fits_the_url_limit():
    wide = "𝔀" * MAX_LABEL  # four UTF-8 bytes per character
    rows = [{"label": f"{i:02d}" + wide[2:], "x": -9.999999999999998, "y": -0.30000000000000004, "role": "plain"}
            for i in range(MAX_ROWS)]
    rows[0]["role"], rows[1]["role"], rows[2]["role"] = "action", "context_a", "context_b"
    example = parse([wide, wide[:-1] + "x"], rows)
    assert isinstance(example, Scenario)
    assert len(encode(example)) <= MAX_URL and decode(encode(example)) == example


# --- the file form ------------------------------------------------------------------------------


def test_an_exported_file_follows_the_schema_and_imports_again():
    text = to_json(CUSTOM)
    jsonschema.validate(json.loads(text), JSON_SCHEMA)
    assert from_json(text.encode()) == CUSTOM
    assert from_json(b"\xef\xbb\xbf" + text.encode()) == CUSTOM  # a BOM from a Windows editor


@pytest.mark.parametrize("data,code", [
    (b"x" * (MAX_FILE_BYTES + 1), "file_too_large"),
    (b"not json", "file_not_json"),
    (b"\xff\xfe\x00", "file_not_json"),
    (b"[" * 5000, "file_too_deep"),
    (b"[]", "file_schema"),
    (b'{"schema": "other", "version": 1}', "file_schema"),
    (b'{"schema": "blockstab.scenario", "version": 2, "axes": [], "tokens": []}', "file_version"),
    (b'{"schema": "blockstab.scenario", "version": true, "axes": [], "tokens": []}', "file_version"),
    (b'{"schema": "blockstab.scenario", "version": "1", "axes": [], "tokens": []}', "file_version"),
    (b'{"schema": "blockstab.scenario", "version": 1, "axes": ["a", "b"], "tokens": [], "x": 1}', "file_schema"),
    (b'{"schema": "blockstab.scenario", "version": 1, "axes": ["a"], "tokens": []}', "payload_shape"),
    (b'{"schema": "blockstab.scenario", "version": 1, "axes": ["a", "b"], "tokens": {}}', "payload_shape"),
    (b'{"schema": "blockstab.scenario", "version": 1, "axes": ["a", "b"], "tokens": [{"label": "a", "z": 1}]}',
     "payload_shape"),
])
def test_a_bad_file_is_refused_with_a_reason(data, code):
    assert code in codes(from_json(data))


# --- every problem can be said in every language ------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("code", sorted(CODES - {"more"}))
def test_every_problem_has_a_message(code, lang):
    t = Text(lang)
    for problem in (Problem(code), Problem(code, 3, "x", "<b>1e308</b>", "10", 2),
                    Problem(code, 1, "axis", "`tick`", "40", 41), Problem(code, field="role", value="action")):
        text = problem_text(problem, t)
        assert text and "{" not in text and "}" not in text
        if "{value}" in catalog(lang)["problem." + code] and problem.field == "x":
            assert "`<b>1e308</b>`" in text  # quoted as code, never read as markup


# --- user text stays text -----------------------------------------------------------------------


def test_plotly_text_escapes_markup():
    assert plotly_text('<a href="javascript:x">&</a><br>') == '&lt;a href="javascript:x"&gt;&amp;&lt;/a&gt;&lt;br&gt;'


def test_markdown_text_escapes_every_mark():
    assert markdown_text("**b** [l](http://x) $x$ :red[r] <i>").replace("\u2060", "") == (
        r"\*\*b\*\* \[l\]\(http\:\/\/x\) \$x\$ \:red\[r\] \<i\>")


@pytest.mark.parametrize("value", ["http://a.invalid", "HTTPS://a.invalid", "www.a.invalid", "WWW.a.invalid",
                                   "a@b.invalid", "mailto:a@b.invalid", "xmpp:a@b.invalid/c"])
def test_markdown_text_breaks_every_bare_link(value):
    """GitHub-flavoured Markdown finds bare links in the parsed text, past backslash escapes: a
    word joiner stands before every ``:`` and ``@`` and after ``www``."""
    text = markdown_text(value)
    unescaped = re.sub(r"\\(.)", r"\1", text)
    assert unescaped.replace("\u2060", "") == value
    assert not re.search(r"(?i)https?:|www\.|[\w.+-]@", unescaped)


@pytest.mark.parametrize("value,expected", [("a", "`a`"), ("a`b", "``a`b``"), ("`a", "`` `a ``"), ("", '`""`'),
                                            ("\u202eevil", "`<U+202E>evil`"), ("x" * 50, "`" + "x" * 40 + "…`")])
def test_literal_quotes_a_value_as_code(value, expected):
    assert literal(value) == expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_figures_escape_user_labels(lang):
    from ui.views import FIGURES

    state = ExplorerState(example=CUSTOM, depth=3)
    result = explore(state)
    for name, figure in FIGURES.items():
        text = figure(state, result, Text(lang)).to_json()
        for raw in ("<script>", "\\u003cscript", "<b>", "\\u003cb\\u003e"):
            assert raw not in text, (name, raw)
    tokens = FIGURES["tokens"](state, result, Text(lang))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in [tr.name for tr in tokens.data]
    assert all(tr.hovertemplate.startswith("%{meta}") for tr in tokens.data)
    assert tokens.layout.xaxis.title.text == "across &lt;b&gt;"


# --- properties: round trips and no exception escapes ---------------------------------------------

LABEL_CHARS = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
LABELS = st.text(LABEL_CHARS, min_size=1, max_size=MAX_LABEL).map(str.strip).filter(bool)
COORDS = st.floats(-MAX_ABS, MAX_ABS, allow_nan=False).map(lambda v: v + 0.0)


@st.composite
def scenarios(draw) -> Scenario:
    n = draw(st.integers(MIN_TOKENS, MAX_TOKENS))
    slot = draw(st.integers(0, n - 1))
    action = draw(st.sampled_from([i for i in range(n) if i != slot]))
    a, b = draw(st.lists(LABELS, min_size=2, max_size=2, unique=True))
    return Scenario(
        axes=(draw(LABELS), draw(LABELS)),
        tokens=tuple(Token(draw(LABELS), draw(COORDS), draw(COORDS)) for _ in range(n - 1)),
        context_slot=slot, contexts=(Token(a, draw(COORDS), draw(COORDS)), Token(b, draw(COORDS), draw(COORDS))),
        action=action)


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example=scenarios())
def test_encode_decode_and_file_round_trip(example):
    assert validate(example) == []
    value = encode(example)
    assert len(value) <= MAX_URL
    assert decode(value) == example
    assert from_json(to_json(example)) == example
    assert parse(list(example.axes), table_rows(example)) == example
    assert example.embeddings().shape == (2, example.length, 2)


def no_exception(result) -> None:
    if isinstance(result, Scenario):
        assert validate(result) == []
        assert all(math.isfinite(v) and abs(v) <= MAX_ABS for v in result.embeddings().ravel())
    else:
        assert result and set(codes(result)) <= CODES


CELL = st.one_of(st.none(), st.text(max_size=50), st.floats(), st.integers(), st.booleans(),
                 st.sampled_from(["nan", "inf", "1e308", "-0", "１", "", " ", "\u202e", "0.5", "-9.9"]),
                 st.lists(st.integers(), max_size=2))
ROLE = st.one_of(st.sampled_from(ROLES), st.none(), st.text(max_size=8), st.integers())


@settings(max_examples=examples(2000), deadline=None)
@given(axes=st.lists(CELL, max_size=3), rows=st.lists(st.fixed_dictionaries(
    {"label": CELL, "x": CELL, "y": CELL, "role": ROLE}), max_size=MAX_ROWS + 3))
def test_any_table_validates_or_is_refused_cleanly(axes, rows):
    no_exception(parse(axes, rows))


@st.composite
def mutated(draw) -> str:
    """A real link value, then cut, flipped, stretched or wrapped in junk."""
    value = encode(draw(scenarios()))
    kind = draw(st.sampled_from(["cut", "flip", "insert", "version", "junk", "repeat"]))
    if kind == "cut":
        return value[:draw(st.integers(0, len(value)))]
    if kind == "flip":
        i = draw(st.integers(3, len(value) - 1))
        return value[:i] + draw(st.sampled_from(string.ascii_letters + string.digits + "-_=+/%")) + value[i + 1:]
    if kind == "insert":
        i = draw(st.integers(0, len(value)))
        return value[:i] + draw(st.text(max_size=20)) + value[i:]
    if kind == "version":
        return draw(st.sampled_from(["v0", "v2", "V1", "v1.1", "", "v11"])) + value[2:]
    if kind == "repeat":
        return value + value[3:] * draw(st.integers(1, 40))
    return draw(st.text(max_size=200))


@settings(max_examples=examples(2000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=mutated())
def test_any_mutated_link_validates_or_is_refused_cleanly(raw):
    no_exception(decode(raw))


@st.composite
def files(draw) -> bytes:
    doc = json.loads(to_json(draw(scenarios())))
    kind = draw(st.sampled_from(["drop", "retype", "cut", "bytes", "grow"]))
    if kind == "drop":
        doc.pop(draw(st.sampled_from(sorted(doc))))
    elif kind == "retype":
        key = draw(st.sampled_from(sorted(doc)))
        doc[key] = draw(st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3)))
    elif kind == "grow":
        doc["tokens"] = doc["tokens"] * draw(st.integers(1, 60))
    text = json.dumps(doc).encode()
    if kind == "cut":
        return text[:draw(st.integers(0, len(text)))]
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    return text


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=files())
def test_any_broken_file_validates_or_is_refused_cleanly(data):
    no_exception(from_json(data))
