"""The lesson for one person's page (``ui.study_page``, issue #61): a link read as the app reads its own (a value
it cannot use named, in words, and at its default), nothing of a link reflected as markup, the link the page's
script writes read back to the same view, the exercises' file true to the lessons' table, and its one script."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from urllib.parse import parse_qsl

import pytest

from support import ROOT
from ui.controls import BY_KEY, CONTROLS, ExplorerState
from ui.instant import EXPLORER
from ui.instant import MODULES as EXPLORER_MODULES
from ui.lessons import QUESTIONS
from ui.student_page import STUDENT, script
from ui.study_page import MODULES, OPENED, VIEW, Opened, exercises_file, opened, page, query
from ui.text import LANG_TAGS, LANGUAGES, Text

DEFAULT_VIEW = {c.key: c.default for c in CONTROLS}
FILES = "/api/class-files/v/"


def test_a_link_opens_its_part_step_and_view_and_no_link_the_lessons_start():
    assert opened({}) == Opened("tour", 1, DEFAULT_VIEW)
    shown = opened({"lang": "zh", "part": "explorer", "step": "8", "residual": "false", "placement": "pre",
                    "depth": "100", "block": "7", "focus": "ffn_norm", "scenario": "confirmed"})
    assert shown == Opened("explorer", 8, {**DEFAULT_VIEW, "residual": False, "placement": "pre", "depth": 100,
                                           "block": 7, "focus": "ffn_norm", "scenario": "confirmed"})


@pytest.mark.parametrize("raw", ["0", "9", "-1", "3.5", "٣", " 2", "", "2<b>"])
def test_a_step_outside_the_tour_is_the_first_and_named(raw):
    assert opened({"step": raw}) == Opened("tour", 1, DEFAULT_VIEW, (("step", raw),))


def test_every_setting_the_page_cannot_use_is_named_at_its_default_and_said_in_the_pages_language():
    query = {"depth": "101", "residual": "maybe", "part": "quiz", "lang": "fr", "class": "ACDEFGHJ", "sc": "triage"}
    shown = opened(query)
    assert (shown.part, shown.step, shown.view) == ("tour", 1, DEFAULT_VIEW)
    assert dict(shown.ignored) == query  # (a class's code or another sentence: not this page's)
    for lang in LANGUAGES:
        said = re.search(r'<p class="problem" role="alert">(.*?)</p>', page(Text(lang), shown, True, FILES))[1]
        assert said.startswith(Text(lang)("url.ignored_list", settings="")[:8]) and "<code>depth=101</code>" in said


def test_nothing_of_a_hostile_link_is_markup_on_the_page():
    hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    for link in ({hostile: "1"}, {"depth": hostile}, {"step": hostile, "focus": "</script><script>alert(3)//"}):
        html = page(Text("en"), opened(link), False, FILES)
        assert "<script>alert" not in html and "<img" not in html and "</script><script>" not in html
        assert html.count("<script") == 2  # the page's script and its data


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_is_in_its_language_and_links_the_other_with_the_same_view(lang):
    t, shown = Text(lang), opened({"part": "explorer", "residual": "false", "step": "3"})
    html = page(t, shown, True, FILES)
    other = next(each for each in LANGUAGES if each != lang)
    assert f'<html lang="{LANG_TAGS[lang]}">' in html and f"<h1>{t('study.title')}</h1>" in html
    href = re.search(rf'<a href="\?([^"]+)" lang="{LANG_TAGS[other]}"[^>]*>', html)[1].replace("&amp;", "&")
    assert opened(dict(parse_qsl(href))) == shown and dict(parse_qsl(href))["lang"] == other
    data = json.loads(re.search(r'<script type="application/json" id="study-data">(.*?)</script>', html, re.S)[1])
    assert data["look"] == "phone" and data["view"] == shown.view and data["step"] == 3
    assert data["defaults"] == {key: BY_KEY[key].format(BY_KEY[key].default) for key in OPENED}


def lesson_js_links(states: list[dict]) -> list[str]:
    """The links ui/student/lesson.js writes for ``states`` (part, step, view), run under node."""
    node = shutil.which("node")
    assert node, "node is missing: apt-get install nodejs (bash scripts/test.sh installs it as root)"
    defaults = {key: BY_KEY[key].format(BY_KEY[key].default) for key in OPENED}
    program = (f'import {{ query, start }} from "{ROOT / "ui/student/lesson.js"}";\n'
               f"const states = {json.dumps(states)};\n"
               f"const defaults = {json.dumps(defaults)};\n"
               "for (const s of states) console.log(query(start({ ...s, steps: 8 }), 'en', defaults));")
    done = subprocess.run([node, "--input-type=module", "-e", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_link_the_pages_script_writes_opens_the_same_state():
    states = [{"part": "tour", "step": 1, "view": DEFAULT_VIEW},
              {"part": "explorer", "step": 5, "view": {**DEFAULT_VIEW, "residual": False, "norm": False, "depth": 1}},
              {"part": "exercises", "step": 8, "view": {**DEFAULT_VIEW, "norm_kind": "layernorm", "placement": "pre",
                                                        "block": 100, "focus": "ffn_norm",
                                                        "scenario": "not_confirmed"}}]
    written = lesson_js_links(states)
    assert written[0] == "?lang=en"
    for state, link in zip(states, written, strict=True):
        shown = Opened(state["part"], state["step"], state["view"])
        assert opened(dict(parse_qsl(link[1:]))) == shown and link == query(shown, "en")  # the server's link alike


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_exercises_file_is_the_lessons_questions_with_their_answers_and_views(lang):
    t = Text(lang)
    exercises = exercises_file(t)
    questions = [q for exercise in exercises for q in exercise["questions"]]
    assert [q["id"] for q in questions] == [q.id for q in QUESTIONS]
    for question, asked in zip(questions, QUESTIONS, strict=True):
        assert question["answer"] == asked.answer and question["answer"] in dict(question["choices"])
        assert question["right"] == t("ex.right", answer=dict(question["choices"])[asked.answer])
        assert set(question["show_me"]) == set(VIEW) and all(BY_KEY[k].accepts(v)
                                                             for k, v in question["show_me"].items())
        assert ExplorerState(**question["show_me"]) == ExplorerState(**asked.show_me)  # the view /practice shows


def test_the_pages_script_joins_its_modules_each_name_once_and_node_can_read_it(tmp_path):
    modules = [EXPLORER / f"{name}.js" for name in EXPLORER_MODULES] + [STUDENT / f"{name}.js" for name in MODULES]
    names = [name for path in modules for name in re.findall(
        r"^(?:export )?(?:default )?(?:async )?(?:function|const|let|class) (\w+)", path.read_text(encoding="utf-8"),
        re.M)]
    assert sorted(names) == sorted(set(names)), "a name is declared by two modules of one script"
    (tmp_path / "study.js").write_text(script(MODULES), encoding="utf-8")
    checked = subprocess.run([shutil.which("node"), "--check", str(tmp_path / "study.js")], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
