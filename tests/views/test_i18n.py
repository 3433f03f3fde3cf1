"""The en and zh catalogs agree with each other and with every ``t(...)`` call in the app."""

import ast
import functools
import json
import re
import string
from pathlib import Path

import pytest

from blockstab.block import STAGES
from blockstab.lesson import SCENARIOS, token_names
from blockstab.papers import CLAIMS, WITH_FIGURE
from blockstab.scenario import PRESETS as EXAMPLES
from blockstab.scenario import ROLES, Problem
from ui.class_views import SUMMARY_COLUMNS
from ui.controls import APP_CONTROLS, CONTROLS, LAB_CONTROLS, REAL_CONTROLS
from ui.examples import EXAMPLE_NAMES
from ui.lab_views import PANELS, VARIANT_PARTS
from ui.lessons import ASKABLE, CHECKLIST, POLLS, PRESETS, QUESTIONS, TOUR
from ui.live_class import ACTIVITIES
from ui.real_views import PANELS as REAL_PANELS
from ui.student_page import WORDS
from ui.study_page import PARTS
from ui.study_page import WORDS as STUDY_WORDS
from ui.text import LANGUAGES, Text, catalog
from ui.views.tables import THREE_STAGES

ROOT = Path(__file__).resolve().parents[2]
READOUT_PANELS = ("norm", "nearest", "distinct", "cosine", "angle", "smallest")
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"),
                  *(path for folder in ("ui", "widgets", "server") for path in (ROOT / folder).rglob("*.py"))])
EN, ZH = catalog("en"), catalog("zh")
NAMESPACES = {key.split(".", 1)[0] for key in EN}

# Every code blockstab.scenario can refuse an input with (read from its source), and "more".
PROBLEM_CODES = {"more"} | {
    code.value for node in ast.walk(ast.parse((ROOT / "blockstab" / "scenario.py").read_text()))
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == Problem.__name__ and node.args
    for code in ast.walk(node.args[0]) if isinstance(code, ast.Constant) and isinstance(code.value, str)}

# Every key family the source builds at run time (f-strings and "prefix." + name), enumerated from
# the tables that drive it. A new family in the source fails test_every_dynamic_key_family_is_known.
FAMILIES = {
    "option.*.*": {f"option.{c.key}.{o}" for c in (*CONTROLS, *LAB_CONTROLS, *REAL_CONTROLS) if c.kind == "choice"
                   for o in c.options},
    "stage.*": {f"stage.{s}" for stages in STAGES.values() for s in stages},
    "stage.*.no_residual": {"stage.attention_residual.no_residual", "stage.ffn_residual.no_residual"},
    "stage.*.off": {"stage.attention_norm.off", "stage.ffn_norm.off"},
    "fig.readouts.*": {f"fig.readouts.{p}" for p in READOUT_PANELS},
    "scenario.*": {f"scenario.{c.label}" for p in EXAMPLES.values() for c in p.contexts},
    "token.*": {f"token.{name}" for s in SCENARIOS for name in token_names(s) if name != "status"}
    | {f"token.{tok.label}" for p in EXAMPLES.values() for s in SCENARIOS for tok in p.sentence(s)},
    "axis.*": {f"axis.{a}" for p in EXAMPLES.values() for a in p.axes},
    "option.scenario.*": {f"option.scenario.{s}" for s in ("both", *SCENARIOS)},
    "example.*.name": {f"example.{name}.name" for name in (*EXAMPLE_NAMES, "blank")},
    "role.*": {f"role.{r}" for r in ROLES},
    "column.*": {f"column.{c}" for c in ("label", "x", "y", "role", "row")},
    "problem.*": {f"problem.{code}" for code in PROBLEM_CODES},
    "control.*": {f"control.{c.key}" for c in (*CONTROLS, *APP_CONTROLS, *LAB_CONTROLS, *REAL_CONTROLS)},
    "help.*": {f"help.{c.key}" for c in (*CONTROLS, *LAB_CONTROLS, *REAL_CONTROLS)},
    "lang.*": {f"lang.{code}" for code in LANGUAGES},
    "study.*": {f"study.{part}" for part in PARTS},  # the lesson's parts on a phone's page (ui.study_page)
    "class.activity.*": {f"class.activity.{a}" for a in ACTIVITIES},
    "class.summary.*": {f"class.summary.{c}" for c in SUMMARY_COLUMNS},
    "class.poll.*": {f"class.poll.{p.id}" for p in POLLS},
    "describe.curve.*": {"describe.curve.block", "describe.curve.layer"},
    "describe.curve_lost.*": {"describe.curve_lost.block", "describe.curve_lost.layer"},
    # The lesson pages: keys derived from the ids in ui/lessons.py and ui/views/tables.py.
    "tour.*.title": {f"tour.{s.id}.title" for s in TOUR},
    "tour.*.body": {f"tour.{s.id}.body" for s in TOUR},
    "ex.*": {"ex.right", "ex.wrong"},  # a student's outcome once revealed (ui.student_page.verdict)
    "ex.*.title": {f"ex.{n}.title" for n in {q.exercise for q in ASKABLE}},
    "ex.*.intro": {f"ex.{n}.intro" for n in {q.exercise for q in QUESTIONS}},
    "ex.*.rule": {f"ex.{n}.rule" for n in {q.exercise for q in QUESTIONS}},
    "ex.*.prompt": {f"ex.{q.id}.prompt" for q in ASKABLE},
    "ex.*.explain": {f"ex.{q.id}.explain" for q in ASKABLE if q.explained},
    "class.unit.*": {q.number.unit for q in ASKABLE if q.number},
    "check.*": {f"check.{c.id}" for c in CHECKLIST},
    "preset.*": {f"preset.{p.id}" for p in PRESETS},
    "case.reading.*": {f"case.reading.{s}" for s in SCENARIOS},
    "case.stage.*": {f"case.stage.{s}" for s in THREE_STAGES},
    "device.*": {"device.residual", "device.normalization"},
    "case.device.*.problem": {f"case.device.{d}.problem" for d in ("residual", "normalization")},
    "case.device.*.intuition": {f"case.device.{d}.intuition" for d in ("residual", "normalization")},
    "case.question.*": {f"case.question.{s}" for s in THREE_STAGES},
    "case.without.*": {f"case.without.{s}" for s in THREE_STAGES},
    # The Depth lab: panels, run labels and the paper presets' texts.
    "lab.panel.*": {f"lab.panel.{p}" for p in PANELS},
    "lab.variant.*": {f"lab.variant.{p}" for p in VARIANT_PARTS},
    "paper.*.title": {f"paper.{p}.title" for p in CLAIMS},
    "paper.*.setup": {f"paper.{p}.setup" for p in CLAIMS},
    "paper.*.reading": {f"paper.{p}.reading" for p in CLAIMS},
    "paper.*.finding.*.published": {f"paper.{p}.finding.{c}.published" for p, cs in CLAIMS.items() for c in cs},
    "paper.*.finding.*.ours": {f"paper.{p}.finding.{c}.ours" for p, cs in CLAIMS.items() for c in cs},
    "paper.*.figure_note": {f"paper.{p}.figure_note" for p in WITH_FIGURE},
    "paper.*.definition": {f"paper.{p}.definition" for p in WITH_FIGURE},
    # The Real model page: why the model is unavailable, why a sentence is refused, its panels.
    "real.unavailable.*": {"real.unavailable.missing", "real.unavailable.checksum"},
    "real.problem.*": {"real.problem.empty", "real.problem.long", "real.problem.character"},
    "real.panel.*": {f"real.panel.{p}" for p in REAL_PANELS},
}
# Keys computed by a method rather than spelled in the call: t(question.choice_key(choice)).
COMPUTED = {q.choice_key(c) for q in ASKABLE for c in q.choices}


def _pattern(node: ast.expr) -> str | None:
    """The key (or key family, ``*`` for each run-time part) that a ``t(...)`` argument builds."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pattern(node.left), _pattern(node.right)
        return (left or "*") + (right or "*")
    return None


def _scan():
    literal, families, variable = {}, {}, []
    constants = {}
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args:
                pattern = _pattern(node.args[0])
                if pattern is None:
                    variable.append(where)
                elif "*" in pattern:
                    families.setdefault(pattern, where)
                else:
                    literal.setdefault(pattern, where)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and re.fullmatch(r"[a-z_]+(\.[a-z_0-9]+)+", node.value) and node.value.split(".")[0] in NAMESPACES
                  and not node.value.endswith((".py", ".js", ".css"))):  # a file's name, not a key
                # Keys chosen into a variable first, e.g. key = "verdict.stable_two" if ... else ...
                constants.setdefault(node.value, where)
    return literal, families, variable, constants


LITERAL, FOUND_FAMILIES, VARIABLE, CONSTANTS = _scan()


def _fields(template: str) -> list[tuple[str, str]]:
    return sorted((name, spec) for _, name, spec, _ in string.Formatter().parse(template) if name is not None)


def test_the_scan_found_the_app():
    assert len(LITERAL) > 40
    assert "explorer.title" in LITERAL and "url.ignored" in LITERAL
    assert "option.*.*" in FOUND_FAMILIES and "stage.*" in FOUND_FAMILIES


def test_both_catalogs_have_the_same_keys():
    assert sorted(set(EN) - set(ZH)) == [], "missing in zh.json"
    assert sorted(set(ZH) - set(EN)) == [], "missing in en.json"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_empty_strings(lang):
    empty = [k for k, v in catalog(lang).items() if not isinstance(v, str) or not v.strip()]
    assert empty == []


@pytest.mark.parametrize("key", sorted(EN))
def test_placeholders_are_the_same_in_both_languages(key):
    assert _fields(EN[key]) == _fields(ZH.get(key, ""))


def test_every_literal_key_in_the_source_exists():
    missing = {k: where for k, where in {**CONSTANTS, **LITERAL}.items() if k not in EN or k not in ZH}
    assert missing == {}


def test_every_dynamic_key_family_is_known():
    assert set(FOUND_FAMILIES) <= set(FAMILIES), {p: w for p, w in FOUND_FAMILIES.items() if p not in FAMILIES}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_key_of_each_family_exists(family):
    expected = FAMILIES[family]
    assert expected
    assert sorted(expected - set(EN)) == [], "missing in en.json"
    assert sorted(expected - set(ZH)) == [], "missing in zh.json"


# The brand name: set_page_config(page_title="BlockStab") uses the literal, the same in every language.
NOT_LOOKED_UP = {"app.title"}


def test_computed_keys_exist():
    assert sorted(COMPUTED - set(EN)) == [] and sorted(COMPUTED - set(ZH)) == []


def test_no_catalog_key_is_unused():
    used = set(LITERAL) | set(CONSTANTS) | set().union(*FAMILIES.values()) | COMPUTED
    assert sorted(set(EN) - used - NOT_LOOKED_UP) == []


# Where t() gets a key from a variable, and the constants / computed keys that feed it.
REFUSALS = {"class.not_teacher", "class.bad_link", "class.full", "class.ended", "class.too_many", "class.not_seated",
            "class.question_closed", "class.bad_choice", "class.bad_step", "class.bad_question", "class.not_revealed",
            "class.locked", "class.paused", "class.bad_timer", "class.time_up", "class.not_votable",
            "class.nothing_to_show", "class.bad_number", "class.no_number"}
VARIABLE_SITES = {
    "ui/verdicts.py": {k for k in EN if k.startswith("verdict.") or k.startswith("unit.")},
    "pages/exercises.py": {"ex.right", "ex.wrong"},
    "pages/depth_lab.py": {"lab.note.heads", "lab.note.budget"},
    "ui/lab_views.py": {"lab.reading.post_ln_deep", "lab.reading.pre_ln_grows"},
    "ui/real_views.py": {k for k in EN if k.startswith("real.verdict.")} | {"real.intact", "real.ablated"},
    "ui/text.py": {k for k in EN if k.startswith("plotly.")},
    "ui/class_views.py": set(),  # t(question.choice_key(choice)): COMPUTED
    "widgets/live_class.py": REFUSALS,  # t(refused.key)
    "pages/live_class.py": REFUSALS,
    "ui/student_page.py": set(WORDS),  # the student's page's own words, by a list of their keys
    "ui/study_page.py": set(STUDY_WORDS),  # the lesson's page's, likewise
}


def test_calls_with_a_variable_key_are_covered():
    files = {site.rsplit(":", 1)[0] for site in VARIABLE}
    assert files <= set(VARIABLE_SITES), VARIABLE
    for keys in VARIABLE_SITES.values():
        assert keys <= set(CONSTANTS)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("key", [k for k in sorted(EN) if _fields(EN[k])])
def test_every_template_formats_through_text(lang, key):
    """Regression: url.ignored has a {key} placeholder, which Text.__call__ once took as its own argument."""
    t = Text(lang)
    values = {name: (1.5 if spec else "X") for name, spec in _fields(EN[key])}
    text = t(key, **values)
    assert "{" not in text and "}" not in text
    for name, spec in _fields(EN[key]):
        if not spec:
            assert "X" in text, name


@pytest.mark.parametrize("lang", LANGUAGES)
def test_text_falls_back_to_english_for_an_unknown_language(lang):
    assert Text("fr")("explorer.title") == EN["explorer.title"]
    assert Text(lang)("explorer.title") == catalog(lang)["explorer.title"]


def test_chinese_catalog_is_translated():
    """Strings that are identical in both catalogs should only be names, symbols or formulas."""
    same = {k for k in EN if EN[k] == ZH[k] and not k.startswith("lang.")}  # each language names itself
    allowed = re.compile(r"[A-Za-z0-9 .,+\-()·①②'’/:|−×√α={}_]*")  # formulas and placeholders too
    suspicious = {k: EN[k] for k in same if not allowed.fullmatch(EN[k]) or len(EN[k].split()) > 3}
    assert suspicious == {}
    has_han = re.compile(r"[\u4e00-\u9fff]")
    english_words = re.compile(r"[A-Za-z]{4,}")
    words = {k: re.sub(r"\{[^}]*\}", "", ZH[k]) for k in ZH}  # placeholder names are not prose
    untranslated = {k: ZH[k] for k in ZH if english_words.search(words[k]) and not has_han.search(ZH[k])
                    and ZH[k] != EN[k]}
    assert untranslated == {}


GLOSSARY = json.loads((ROOT / "ui" / "locales" / "glossary.json").read_text(encoding="utf-8"))["terms"]


@pytest.mark.parametrize("term", GLOSSARY, ids=lambda term: term["en"])
def test_the_chinese_catalog_speaks_the_glossary(term):
    """Where the English text uses a term, the Chinese text uses its one Chinese form; no variant
    the glossary rules out appears anywhere (词元 / 块 / 跳跃连接 / 主干 drifted in before)."""
    missing = [k for k, text in EN.items() if re.search(rf"\b{re.escape(term['en'])}\b", text)
               and term["zh"] not in ZH[k] and k not in term.get("not_in", {})]
    assert missing == []
    for variant in term["avoid_zh"]:
        found = [k for k, text in ZH.items()
                 if variant in functools.reduce(lambda s, word: s.replace(word, ""), term.get("but_zh", []), text)]
        assert found == [], variant


def test_no_stray_space_between_chinese_words():
    stray = {k: m.group(0) for k, text in ZH.items() for m in [re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", text)]
             if m}
    assert stray == {}


def test_no_stray_space_when_a_stage_name_fills_the_block_title():
    """The block view's title takes a stage's name ("画到 注意力 F(x)" had a space between two words)."""
    stages = [text for k, text in ZH.items() if k.startswith("stage.")]
    titles = [ZH["fig.block.title"].format(block=1, stage=stage) for stage in stages]
    assert [t for t in titles if re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", t)] == []
