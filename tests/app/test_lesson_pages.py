"""AppTest: the tour, worked case, exercises and teacher pages, as a student and a teacher use them."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from support.explorer_view import component_data, shown, view
from support.pages import tables
from ui.controls import CONTROLS, ExplorerState
from ui.examples import plain_text
from ui.lessons import CHECKLIST, PRESETS, QUESTIONS, TOUR
from ui.numbers import vector_text
from ui.text import Text
from ui.verdicts import verdict
from ui.views import explore

APP = str(Path(__file__).parents[2] / "app.py")


def open_page(page: str, lang: str = "en", **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = lang
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception
    return at


def explorer_state(at: AppTest) -> dict:
    """The Explorer's controls: the sidebar's widgets, the instant Explorer's view (the URL)."""
    widgets = {c.key: view(at)[c.key] if c.instant else (at.slider if c.kind == "int" else at.radio)(key=c.key).value
               for c in CONTROLS}
    return widgets


def assert_explorer_shows(at: AppTest, view: dict, lang: str) -> None:
    """The Explorer is in exactly ``view`` (others at defaults) and prints that view's verdict."""
    assert not at.exception
    expected = {c.key: view.get(c.key, c.default) for c in CONTROLS}
    assert explorer_state(at) == expected
    state = ExplorerState(**view)
    assert shown(at)["verdict"] == plain_text(verdict(state, explore(state), Text(lang)))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tour_step_renders_and_next_walks_the_tour(lang):
    t = Text(lang)
    at = open_page("pages/tour.py", lang)
    for number, step in enumerate(TOUR, start=1):
        assert at.subheader[0].value == t(f"tour.{step.id}.title")
        assert at.query_params["step"] == str(number)
        step_query = "" if number == 1 else f"&step={number}"  # (a phone's light page, on this step)
        assert study_links(at) == [t("study.phone_link", href=f"/study?lang={lang}{step_query}")]
        assert len(at.get("plotly_chart")) == 1
        if number < len(TOUR):
            at.button(key="tour_next").click().run()
            assert not at.exception
    assert at.button(key="tour_next").disabled
    at.button(key="tour_previous").click().run()
    assert at.subheader[0].value == t(f"tour.{TOUR[-2].id}.title")


def study_links(at: AppTest) -> list[str]:
    """The page's link to the lesson on a phone (``/study``), seen at a phone's width."""
    return [m.value for m in at.markdown if "(/study?" in m.value]


def test_the_explorers_link_to_the_light_page_carries_its_view_and_only_for_the_lessons_sentence():
    at = open_page("pages/explorer.py", "zh", residual="false", depth="3", placement="pre")
    href = "/study?lang=zh&part=explorer&residual=false&placement=pre&depth=3"
    assert study_links(at) == [Text("zh")("study.phone_link", href=href)]
    assert study_links(open_page("pages/explorer.py", "en", sc="triage")) == []


@pytest.mark.parametrize("raw, shown", [("4", 4), ("0", 1), ("99", 1), ("abc", 1)])
def test_a_step_link_opens_on_that_step(raw, shown):
    at = open_page("pages/tour.py", step=raw)
    assert at.subheader[0].value == Text("en")(f"tour.{TOUR[shown - 1].id}.title")


def test_tour_step_opens_in_the_explorer_with_its_view():
    at = open_page("pages/tour.py", step="7")
    at.button(key="tour_open").click().run()
    assert_explorer_shows(at, TOUR[6].view, "en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_worked_case_shows_the_course_numbers(lang):
    at = open_page("pages/worked_case.py", lang)
    cells = {cell for table in tables(at) for row in table for cell in row.values()}
    new_context = explore(ExplorerState(depth=1)).trace.stage("attention")[0, :, ExplorerState().example.action]
    for number in ("[1.026, 1.978]", "[1.238, 1.814]", *(vector_text(v) for v in new_context)):
        assert number in cells


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.id)
def test_answering_reveals_feedback_and_show_me_opens_the_promised_view(question, lang):
    t = Text(lang)
    at = open_page("pages/exercises.py", lang)
    wrong = next(c for c in question.choices if c != question.answer)
    at.radio(key=f"answer_{question.id}").set_value(wrong).run()
    assert at.error[0].value == t("ex.wrong", answer=t(question.choice_key(question.answer)))
    at.radio(key=f"answer_{question.id}").set_value(question.answer).run()
    assert t("ex.right", answer=t(question.choice_key(question.answer))) in [s.value for s in at.success]
    assert at.metric[0].value == t("ex.score_value", right=0, answered=1, total=len(QUESTIONS))  # first choice
    at.button(key=f"show_{question.id}").click().run()
    assert_explorer_shows(at, question.show_me, lang)


def test_score_counts_first_choices_and_reset_clears_it():
    t = Text("en")
    at = open_page("pages/exercises.py")
    for q in QUESTIONS:
        at.radio(key=f"answer_{q.id}").set_value(q.answer).run()
    assert at.metric[0].value == t("ex.score_value", right=len(QUESTIONS), answered=len(QUESTIONS),
                                   total=len(QUESTIONS))
    assert t("ex.2.rule") in [i.value for i in at.info]
    at.button(key="ex_reset").click().run()
    assert at.metric[0].value == t("ex.score_value", right=0, answered=0, total=len(QUESTIONS))
    assert all(at.radio(key=f"answer_{q.id}").value is None for q in QUESTIONS)


def test_answers_are_still_there_after_a_visit_to_another_page():
    t = Text("en")
    at = open_page("pages/exercises.py")
    first, second = QUESTIONS[:2]
    wrong = next(c for c in first.choices if c != first.answer)
    at.radio(key=f"answer_{first.id}").set_value(wrong).run()
    at.radio(key=f"answer_{first.id}").set_value(first.answer).run()  # changed mind: the score keeps the first
    at.radio(key=f"answer_{second.id}").set_value(second.answer).run()
    at.button(key=f"show_{second.id}").click().run()  # to the Explorer, then back
    at.switch_page("pages/exercises.py").run()
    assert not at.exception
    assert at.radio(key=f"answer_{first.id}").value == first.answer
    assert at.radio(key=f"answer_{second.id}").value == second.answer
    assert len(at.success) >= 2 and at.button(key=f"show_{first.id}")  # the feedback and its link again
    assert at.metric[0].value == t("ex.score_value", right=1, answered=2, total=len(QUESTIONS))
    at.button(key="ex_reset").click().run()
    at.switch_page("pages/tour.py").run()
    at.switch_page("pages/exercises.py").run()
    assert all(at.radio(key=f"answer_{q.id}").value is None for q in QUESTIONS)  # a reset stays reset


@pytest.mark.parametrize("item", CHECKLIST, ids=lambda c: c.id)
def test_checklist_demonstrations_open_the_explorer(item):
    at = open_page("pages/exercises.py")
    at.button(key=f"check_{item.id}").click().run()
    assert_explorer_shows(at, item.view, "en")


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.id)
def test_teacher_presets_open_the_explorer(preset):
    at = open_page("pages/teachers.py", "zh")
    at.button(key=f"preset_{preset.id}").click().run()
    assert_explorer_shows(at, preset.view, "zh")


def test_a_classroom_link_hides_the_controls_it_does_not_list():
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in {"lang": "en", "show": "residual,depth", "norm": "false", "depth": "5"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not at.warning
    assert [w.key for w in at.toggle if w.key != "projector"] == [] and not at.slider
    assert [spec["key"] for spec in component_data(at)["controls"]] == ["residual", "depth"]
    assert len(at.radio(key="lang_choice").options) == 2 and not [r for r in at.radio if r.key == "placement"]
    state = ExplorerState(norm=False, depth=5)
    # a hidden norm=false still applies
    assert shown(at)["verdict"] == plain_text(verdict(state, explore(state), Text("en")))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_course_text_is_complete_on_the_worked_case(lang):
    """The section's core claim, its three opening questions, the link back to P5-14.2, the device
    -> problem -> intuition table and the misconception all appear on the worked case."""
    t = Text(lang)
    at = open_page("pages/worked_case.py", lang)
    text = "\n".join([m.value for m in at.markdown] + [i.value for i in at.info])
    for key in ("case.previous", "case.core", "case.questions", "case.misconception"):
        assert t(key) in text, key
    assert "P5-14.2" in t("case.previous")
    devices = next(table for table in tables(at) if t("case.col.device") in table[0])
    assert [row[t("case.col.device")] for row in devices] == [t("device.residual"), t("device.normalization")]
    assert devices[0][t("case.col.problem")] == t("case.device.residual.problem")
    assert devices[1][t("case.col.intuition")] == t("case.device.normalization.intuition")
