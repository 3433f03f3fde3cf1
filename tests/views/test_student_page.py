"""A live class's student page as files (``ui.student_page``): each is made by the app's own views and catalogs
(a tour step's figure is the view's, a reveal's chart the teacher's), a question never carries its answer
before the reveal, every text is escaped, the page's one script joins its modules without a name taken twice,
and the phone's Plotly.js is npm's pinned partial bundle of the Python package's Plotly.js."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import plotly
import pytest

from support import ROOT
from ui.class_views import answers_description, answers_figure, summary_rows
from ui.instant import EXPLORER
from ui.instant import MODULES as EXPLORER_MODULES
from ui.lessons import ASKABLE, POLLS, QUESTIONS, TOUR
from ui.live_class import Refused, answer, ask, join, reveal, show_me, start
from ui.student_page import (
    LOOKS,
    MODULES,
    PLOTLY_BASIC,
    STUDENT,
    WORDS,
    explorer_file,
    page,
    questions_file,
    rendered,
    reveal_file,
    script,
    tour_file,
    verdict,
)
from ui.text import LANG_TAGS, LANGUAGES, Text
from ui.views import FIGURES, explore, figure_state
from ui.views.describe import DESCRIPTIONS

CODE, ME = "ACDEFGHJ", "m" * 16


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_declares_its_language_and_carries_its_words_in_both(lang):
    t = Text(lang)
    made = page(t, CODE, True, "/files/", "/api/class/ACDEFGHJ/")
    assert f'<html lang="{LANG_TAGS[lang]}">' in made and f"<h1>{t('join.title')}</h1>" in made
    data = json.loads(re.search(r'<script type="application/json" id="student-data">(.*)</script>', made)[1])
    assert data["code"] == CODE and data["look"] == "phone" and data["lang"] == lang
    assert data["steps"] == len(TOUR)  # (the page fetches the steps beside the one drawn, never past the last)
    assert set(data["words"]) == set(LANGUAGES) and all(set(w) == set(WORDS) for w in data["words"].values())
    assert data["words"]["zh"]["join.title"] == Text("zh")("join.title")
    assert 'name="class"' not in made  # a code: no form to type one
    other = next(x for x in LANGUAGES if x != lang)
    assert f'<a href="?lang={other}" lang="{LANG_TAGS[other]}"' in made  # the other language, without a script


def test_with_no_code_or_a_bad_one_the_page_asks_for_it():
    made = page(Text("en"), None, False, "/files/", "", "class.bad_code")
    assert 'name="class"' in made and Text("en")("class.bad_code") in made and '"look": "computer"' in made


def test_every_text_on_the_page_is_escaped_and_the_data_cannot_close_its_element(monkeypatch):
    hostile = "</script><img src=x onerror=alert(1)>"
    monkeypatch.setattr(Text, "__call__", lambda self, key, /, **values: hostile)
    made = page(Text("en"), CODE, False, "/files/", "/api/")
    assert "<img" not in made and made.count("</script>") == 2  # the page's own two: the script's and the data's
    assert "&lt;img" in rendered(hostile)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("look", LOOKS)
def test_each_tour_step_is_its_view_the_view_in_words_and_the_steps_text(lang, look):
    t = Text(lang)
    for number, step in enumerate(TOUR):
        made = json.loads(json.dumps(tour_file(number, t, look)))
        shown = figure_state(step.figure, step.state(phone=look == "phone"))
        figure = FIGURES[step.figure](shown, explore(shown), t)
        assert [trace.get("name") for trace in made["figure"]["data"]] == [trace.name for trace in figure.data]
        assert made["figure"]["layout"]["title"]["text"] == figure.layout.title.text
        assert made["description"] == DESCRIPTIONS[step.figure](shown, explore(shown), t)
        assert made["title"] == t(f"tour.{step.id}.title") and made["body"].startswith("<p>")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_questions_carry_their_choices_in_order_and_never_their_answer(lang):
    t = Text(lang)
    made = questions_file(t)
    assert [[choice for choice, _ in q["choices"]] for q in made] == [list(q.choices) for q in ASKABLE]
    assert [[name for _, name in q["choices"]] for q in made] == [[t(q.choice_key(c)) for c in q.choices]
                                                                  for q in ASKABLE]
    assert all(set(q) == ({"title", "prompt", "choices", "number"} if asked.number else {"title", "prompt", "choices"})
               for q, asked in zip(made, ASKABLE, strict=True))  # nothing marks the right one, nor says why
    for q, asked in zip(made, ASKABLE, strict=True):
        if asked.number:  # a number's bounds and unit, never the engine's value
            assert (q["number"]["low"], q["number"]["high"]) == (asked.number.low, asked.number.high)
            assert q["number"]["label"] == t("join.number_label", unit=t(asked.number.unit), low=asked.number.low,
                                             high=asked.number.high)
    marked = t("class.right_choice", choice="\0").split("\0")[1]
    assert marked.strip() and marked not in json.dumps(made, ensure_ascii=False)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_reveal_is_the_teachers_chart_its_words_and_each_students_own_outcome(lang):
    t = Text(lang)
    c = start(CODE, "k" * 32, lang)
    for student in ("a" * 16, "b" * 16, "c" * 16):
        c = join(c, student, 0.0, 200)
    c = ask(c, 0)
    question = QUESTIONS[0]
    wrong = next(choice for choice in question.choices if choice != question.answer)
    c = reveal(answer(answer(c, "a" * 16, question.answer), "b" * 16, wrong))
    made = json.loads(json.dumps(reveal_file(c, t)))
    assert made["figure"]["data"][0]["x"] == list(answers_figure(c, t).data[0].x)
    assert made["description"] == answers_description(c, t) and made["answer"] == question.answer
    right = t(question.choice_key(question.answer))
    assert [verdict(c, s * 16, t) for s in "abc"] == [
        {"kind": "right", "said": t("ex.right", answer=right)}, {"kind": "wrong", "said": t("ex.wrong", answer=right)},
        {"kind": "not_counted", "said": t("join.not_counted", answer=right)}]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_quick_polls_reveal_counts_its_buttons_marks_none_right_and_says_so(lang):
    t, poll = Text(lang), POLLS[0]
    c = start(CODE, "k" * 32, lang)
    for student in ("a" * 16, "b" * 16, "c" * 16):
        c = join(c, student, 0.0, 200)
    c = ask(c, ASKABLE.index(poll))
    c = reveal(answer(answer(c, "a" * 16, "c"), "b" * 16, "c"))
    made = json.loads(json.dumps(reveal_file(c, t)))
    assert made["figure"]["data"][0]["x"] == [0, 0, 2, 0] and made["answer"] is None and made["explain"] == ""
    assert made["names"] == [t(f"poll.{choice}") for choice in poll.choices]  # none marked right
    assert [verdict(c, s * 16, t) for s in "ac"] == [{"kind": "poll", "said": t("join.poll_answered")},
                                                      {"kind": "poll", "said": t("join.poll_not_answered")}]
    assert summary_rows(c, t)[-1][t("class.summary.share_right")] == ""
    with pytest.raises(Refused) as refused:
        show_me(c)
    assert refused.value.key == "class.nothing_to_show"


def test_the_explorers_data_is_read_only_while_following_and_the_students_own_when_free():
    assert explorer_file(Text("en"), False)["controls"] == []
    assert [c["key"] for c in explorer_file(Text("zh"), True)["controls"]] == [
        "residual", "norm", "norm_kind", "placement", "depth", "block", "focus"]


def declared(source: str) -> list[str]:
    return re.findall(r"^(?:export )?(?:default )?(?:async )?(?:function|const|let|class) (\w+)", source, re.M)


def test_the_pages_script_joins_its_modules_each_name_once_and_node_can_read_it(tmp_path):
    modules = [EXPLORER / f"{name}.js" for name in EXPLORER_MODULES] + [STUDENT / f"{name}.js" for name in MODULES]
    names = [name for path in modules for name in declared(path.read_text(encoding="utf-8"))]
    assert sorted(names) == sorted(set(names)), "a name is declared by two modules of one script"
    joined = script()
    assert not re.search(r"^\s*(import|export)\b", joined, re.M)
    node = shutil.which("node")
    assert node, "node is missing: apt-get install nodejs (bash scripts/test.sh installs it as root)"
    (tmp_path / "student.js").write_text(joined, encoding="utf-8")
    checked = subprocess.run([node, "--check", str(tmp_path / "student.js")], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_the_phones_plotly_is_npms_pinned_partial_bundle_of_the_python_packages_plotly_version():
    pinned = json.loads((ROOT / "package-lock.json").read_text())["packages"]["node_modules/plotly.js-basic-dist-min"]
    installed = ROOT / "node_modules" / "plotly.js-basic-dist-min" / "plotly-basic.min.js"
    assert installed.exists(), "npm ci installs it (bash scripts/test.sh)"
    assert PLOTLY_BASIC.read_bytes() == installed.read_bytes()
    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    version = re.search(r"plotly\.js v([\d.]+)", full.read_text(encoding="utf-8")[:400])[1]
    assert pinned["version"] == version
    assert f"plotly.js (basic - minified) v{version}\n" in PLOTLY_BASIC.read_text(encoding="utf-8")[:200]
