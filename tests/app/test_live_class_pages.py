"""A live class on its two pages (AppTest): the teacher's /class and a student's /join, sharing this
process's embedded store as one server's sessions do. Each page is its own AppTest (its own session);
a student's page follows by a poll that AppTest does not run, so a test runs the page again, as the
poll does when the class's version moves."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.requests import Request
from starlette.routing import Match
from streamlit.testing.v1 import AppTest

from server import class_store as stores
from server import routes
from server.bundles import bundle_url
from server.routes import CLASS_VERSION
from support.explorer_view import component_data
from support.pages import run_page
from support.text import says
from ui.bundle import FIGURES, range_first, range_part
from ui.class_views import answers_description, answers_figure, join_code_svg
from ui.classroom import show_me_parts
from ui.controls import BY_KEY, CODE_ALPHABET, CONTROLS, explorer_query
from ui.lessons import LIVE_SCRIPT, QUESTIONS, TOUR
from ui.live_class import counts, new_student
from ui.text import Text
from ui.tour_step import figures_ahead

TEACHER, STUDENT = "pages/live_class.py", "pages/join_class.py"


@pytest.fixture(autouse=True)
def store(monkeypatch):
    """A fresh embedded store per test (what a server starts with); every AppTest's client address is
    unknown, so one address may answer for several students unless a test sets the limit."""
    stores.class_store.cache_clear()
    monkeypatch.setattr(stores, "ANSWERS_PER_ADDRESS", 50)
    yield stores.class_store()
    stores.class_store.cache_clear()


def walk(node):
    for child in getattr(node, "children", {}).values():
        yield child
        yield from walk(child)


def texts(at: AppTest) -> list[str]:
    """Every message, heading, caption and Markdown text on the page."""
    kinds = ("markdown", "caption", "subheader", "title", "error", "warning", "info", "success")
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


def shows(at: AppTest, lang: str, key: str) -> bool:
    return any(says(text, lang, key) for text in texts(at))


def started(lang: str) -> tuple[AppTest, str]:
    """The teacher's page after "Start a class", and the class's code."""
    teacher = run_page(TEACHER, lang=lang)
    teacher.button(key="class_start").click().run()
    assert not teacher.exception
    return teacher, teacher.query_params["class"]


def joined(code: str, lang: str, **query) -> AppTest:
    student = run_page(STUDENT, **{"class": code, "lang": lang, **query})
    assert BY_KEY["me"].parse(student.query_params["me"]) is not None  # the token the student's link keeps
    return student


def answers(at: AppTest) -> list:
    """The question's radio on a student's page (none once the question is closed)."""
    return [r for r in at.radio if (r.key or "").startswith("class_answer_")]


def again(*pages: AppTest) -> None:
    for page in pages:
        page.run()
        assert not page.exception, [e.value for e in page.exception][:1]


def pick(teacher: AppTest, activity: str) -> None:
    teacher.button(key=f"class_show_{activity}").click().run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_start_shows_the_code_its_link_and_qr_and_who_is_in(lang, store):
    t = Text(lang)
    teacher = run_page(TEACHER, lang=lang)
    assert teacher.button(key="class_start").label == t("class.start")
    teacher, code = started(lang)
    assert BY_KEY["class"].parse(code) == code and store.read(code).lang == lang
    (link,) = [c.value for c in teacher.code if "/join?" in c.value]
    assert parse_qs(urlsplit(link).query) == {"class": [code], "lang": [lang]}
    assert f"{t('class.code_label')}  \n**{code}**" in texts(teacher)  # in projector type (APP_CSS)
    (qr,) = [e.proto.imgs[0] for e in walk(teacher._tree) if getattr(e, "type", "") == "image"]
    assert qr.alt == t("class.qr_title")  # its accessible name
    drawn = base64.b64decode(qr.url.removeprefix("data:image/svg+xml;base64,")).decode()
    modules = re.compile(r'class="qrline"[^>]* d="([^"]+)"')  # the code's dark modules, as one path
    assert modules.search(drawn).group(1) == modules.search(join_code_svg(link)).group(1)
    assert shows(teacher, lang, "class.local_only")  # AppTest's server listens on loopback (config.toml)
    assert t("class.students", count=0) in texts(teacher)
    joined(code, lang)
    again(teacher)
    assert t("class.one_student") in texts(teacher)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_class_follows_the_teacher_through_a_question(lang, store, parts_asked_ahead):
    t = Text(lang)
    teacher, code = started(lang)
    students = [joined(code, lang) for _ in range(3)]
    teacher.button(key="class_next").click().run()
    again(*students)
    assert all(t(f"tour.{TOUR[1].id}.title") in texts(s) for s in students)

    pick(teacher, "question")
    asked = QUESTIONS[0]
    assert parts_asked_ahead == [show_me_parts(store.read(code), False)]  # its "show me", built as they answer
    again(*students)
    wrong = next(c for c in asked.choices if c != asked.answer)
    for student, choice in zip(students, (asked.answer, wrong, wrong), strict=True):
        answers(student)[0].set_value(choice).run()
    answers(students[2])[0].set_value(asked.answer).run()  # a changed answer: still one
    again(teacher)
    assert t("class.students", count=3) + " · " + t("class.answered", answered=3, students=3) in texts(teacher)
    assert not teacher.get("plotly_chart")  # the distribution stays hidden until the reveal
    assert counts(store.read(code)) == {asked.answer: 2, wrong: 1, **{c: 0 for c in asked.choices[2:]}}

    teacher.button(key="class_close").click().run()
    late = joined(code, lang)
    again(*students)
    assert all(not answers(s) and shows(s, lang, "join.closed") for s in students)
    assert t("join.you_chose", choice=t(asked.choice_key(wrong))) in texts(students[1])
    assert not answers(late)  # a closed question takes no answer

    teacher.button(key="class_reveal").click().run()
    (chart,) = teacher.get("plotly_chart")
    drawn, expected = json.loads(chart.proto.spec)["data"][0], answers_figure(store.read(code), t).data[0]
    assert drawn["x"] == list(counts(store.read(code)).values()) == list(expected.x)
    assert drawn["y"] == list(expected.y) and chart.proto.alt == answers_description(store.read(code), t)
    again(*students, late)
    right = t(asked.choice_key(asked.answer))
    assert shows(students[0], lang, "ex.right") and shows(students[1], lang, "ex.wrong")
    assert shows(students[2], lang, "ex.right")  # their last choice counts
    assert t("join.not_counted", answer=right) in texts(late)

    teacher.button(key="class_show_me").click().run()
    again(*students)
    data = component_data(students[0])
    assert data["controls"] == [] and data["lead"] == store.read(code).version  # read-only, led
    expected = {c.key: c.default for c in CONTROLS if c.instant} | {
        k: v for k, v in asked.show_me.items() if BY_KEY[k].instant}
    assert data["view"] == expected
    assert dict(store.read(code).view) == explorer_query(asked.show_me)
    ahead = {(bundle_url(look, each), name) for look, each, name in parts_asked_ahead[0]}
    for page in (teacher, *students):  # each opens on parts built ahead: the figures and its block's range
        bundle, block = component_data(page)["bundle"], component_data(page)["view"]["block"]
        assert {(bundle, FIGURES), (bundle, range_part(range_first(block)))} <= ahead
    assert len(parts_asked_ahead) == 1  # once a question


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_free_explore_unlocks_the_students_and_follow_me_calls_them_back(lang, store):
    teacher, code = started(lang)
    student = joined(code, lang)
    pick(teacher, "explorer")
    again(student)
    assert component_data(student)["controls"] == []
    teacher.button(key="class_free").click().run()
    again(student)
    assert shows(student, lang, "join.explore_freely")
    assert [c["key"] for c in component_data(student)["controls"]] == [c.key for c in CONTROLS if c.instant]
    teacher.button(key="class_follow").click().run()
    again(student)
    data = component_data(student)
    assert data["controls"] == [] and data["lead"] == store.read(code).version


def test_the_teachers_explorer_leads_the_students_view(store):
    teacher, code = started("en")
    student = joined(code, "en")
    pick(teacher, "explorer")
    teacher.session_state["instant_explorer"] = {"view": {**component_data(teacher)["view"], "residual": False}}
    teacher.run()
    assert dict(store.read(code).view) == {"residual": "false"}
    again(student)
    assert component_data(student)["view"]["residual"] is False


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ending_the_class_tells_every_student_and_deletes_it(lang, store):
    teacher, code = started(lang)
    student = joined(code, lang)
    teacher.button(key="class_end").click().run()
    assert store.read(code) is None and "class" not in teacher.query_params
    assert teacher.button(key="class_start")  # ready for the next class
    again(student)
    assert shows(student, lang, "class.ended")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_codes_and_a_wrong_key_are_refused_in_words(lang, store):
    assert shows(run_page(STUDENT, lang=lang, **{"class": "0OI1L"}), lang, "class.bad_code")
    assert shows(run_page(STUDENT, lang=lang, **{"class": "ACDEFG"}), lang, "class.ended")  # never was
    _, code = started(lang)
    intruder = run_page(TEACHER, lang=lang, key="x" * 32, **{"class": code})
    assert shows(intruder, lang, "class.not_teacher") and not intruder.get("bidi_component")
    assert "key" not in intruder.query_params and intruder.button(key="class_start")
    assert shows(run_page(TEACHER, lang=lang, **{"class": code}), lang, "class.resume_needed")


def test_a_code_typed_by_hand_joins(store):
    _, code = started("en")
    student = run_page(STUDENT, lang="en")
    student.text_input(key="class_typed").input(f" {code[:3].lower()} {code[3:]} ").run()
    assert student.query_params["class"] == code and len(store.read(code).students) == 1


def test_the_resume_link_hands_over_the_class_and_leaves_the_address_bar(store):
    teacher, code = started("en")
    (resume,) = [c.value for c in teacher.code if "/class?" in c.value]
    query = {k: v[0] for k, v in parse_qs(urlsplit(resume).query).items()}
    other = run_page(TEACHER, **query)
    assert "key" not in other.query_params and other.query_params["class"] == code
    other.button(key="class_next").click().run()
    assert store.read(code).step == 1


def test_the_key_is_never_on_a_students_page_nor_on_the_projector(store):
    teacher, code = started("en")
    key = teacher.session_state["class_key"]
    student = joined(code, "en")
    pick(teacher, "question")
    teacher.button(key="class_reveal").click().run()
    again(student)
    everything = str(student._tree) + str(dict(student.query_params))  # what the page sends its browser
    assert key not in everything and re.search(code, everything)
    projector = run_page(TEACHER, projector="true", key=key, **{"class": code})
    assert key not in str(projector._tree)
    assert Text("en")("class.resume") not in [e.label for e in projector.expander]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_full_class_and_too_many_joins_are_refused(lang, store, monkeypatch):
    _, code = started(lang)
    monkeypatch.setattr(stores, "STUDENTS_PER_CLASS", 2)
    monkeypatch.setattr(stores, "JOINS_PER_MINUTE", 3)
    joined(code, lang), joined(code, lang)
    assert shows(joined(code, lang), lang, "class.full")
    assert shows(joined(code, lang), lang, "class.too_many_tries")  # the 4th try from this address
    assert len(store.read(code).students) == 2


def test_more_answers_from_one_address_than_the_limit_are_refused_and_shown(store, monkeypatch):
    monkeypatch.setattr(stores, "ANSWERS_PER_ADDRESS", 2)
    teacher, code = started("en")
    students = [joined(code, "en") for _ in range(3)]
    pick(teacher, "question")
    again(*students)
    for student in students:
        answers(student)[0].set_value(QUESTIONS[0].choices[0]).run()
    assert shows(students[2], "en", "class.answer_refused")
    again(teacher)
    assert shows(teacher, "en", "class.refused") and len(store.read(code).answers) == 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_ten_minute_lesson_runs_as_a_live_class_from_one_button(lang, store):
    page = run_page("pages/teachers.py", lang=lang)
    page.button(key="teach_live").click().run()
    code = page.query_params["class"]  # on the class page, a class started
    assert page.title[0].value == Text(lang)("class.title")
    page.switch_page(TEACHER)  # where the browser now is (AppTest would rerun the page it was set to)
    for item in LIVE_SCRIPT[1:]:
        page.button(key="class_script_next").click().run()
        record = store.read(code)
        assert (record.activity, record.step if record.activity == "tour" else record.question) == item
    assert page.button(key="class_script_next").disabled and not page.exception


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_too_many_classes_and_too_many_starts_from_one_computer_are_refused(lang, store, monkeypatch):
    store.most = 1
    started(lang)
    teacher = run_page(TEACHER, lang=lang)
    teacher.button(key="class_start").click().run()
    assert shows(teacher, lang, "class.too_many") and "class" not in teacher.query_params
    monkeypatch.setattr(stores, "STARTS_PER_HOUR", 2)  # (two starts so far from this address)
    teacher.run().button(key="class_start").click().run()  # (a page's callback reads its run's settings)
    assert shows(teacher, lang, "class.too_many_starts")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_restarted_server_has_no_class_and_the_pages_say_so(lang, store):
    teacher, code = started(lang)
    student = joined(code, lang)
    stores.class_store.cache_clear()  # the embedded store of a server started again: empty
    again(teacher, student)
    assert shows(teacher, lang, "class.ended") and teacher.button(key="class_start")
    assert shows(student, lang, "class.ended")


def polled(url: str) -> str | None:
    """What the server's version route answers a page that polls ``url`` (what the page shows of the class;
    its process is this one's)."""
    path, query = url.split("?")
    scope = {"type": "http", "method": "GET", "path": path, "query_string": query.encode(), "headers": []}
    match, child = routes.ROUTES[0].matches(scope)
    assert match == Match.FULL
    answer = json.loads(routes.class_version(Request({**scope, **child})).body)
    assert answer["process"] == routes.PROCESS
    return answer["version"]


def test_the_teachers_page_builds_the_next_steps_figures_one_a_poll_after_a_tour_step(store, monkeypatch):
    teacher, code = started("en")  # (on the tour's first step)
    built = []
    monkeypatch.setattr("server.caches.figure_cached", lambda *figure: built.append(figure))
    ahead = figures_ahead(TOUR[1], False, "en")
    assert teacher.session_state["class_ahead"] == (store.read(code).version, ahead) and not built  # the step's run
    assert component_data(teacher, "blockstab.follow")["again"]  # its browser asks for a run at its next poll
    for polls in range(1, len(ahead) + 1):
        again(teacher)  # (that run)
        assert built == ahead[:polls] and component_data(teacher, "blockstab.follow")["again"] == (polls < len(ahead))
    again(teacher)
    assert built == ahead


def test_the_teachers_page_runs_when_a_student_joins_or_answers_and_a_students_does_not(store):
    """The teacher's page follows the class as a student's does, by its own token (never its key), and is
    run again on every count it shows, where a student's is run again only when the class moves on."""
    teacher, code = started("en")
    follows = component_data(teacher, "blockstab.follow")
    assert polled(follows["url"]) == follows["seen"] and teacher.session_state["class_key"] not in follows["url"]
    student = joined(code, "en")
    assert polled(follows["url"]) != follows["seen"]
    again(teacher)
    assert shows(teacher, "en", "class.one_student") and polled(follows["url"]) == component_data(
        teacher, "blockstab.follow")["seen"]
    pick(teacher, "question")
    again(student)
    student_follows = component_data(student, "blockstab.follow")
    before = component_data(teacher, "blockstab.follow")["seen"]
    student.radio(key=answers(student)[0].key).set_value(QUESTIONS[0].answer).run()
    assert polled(follows["url"]) != before and polled(student_follows["url"]) == student_follows["seen"]
    again(teacher)
    t = Text("en")
    assert t("class.one_student") + " · " + t("class.answered", answered=1, students=1) in texts(teacher)


def test_a_students_page_polls_its_class_version_and_nothing_tells_a_stranger_more(store):
    """The page mounts the browser's follower on the version it shows; the route it polls answers that
    version until the teacher moves on, then the new one, and ``null`` once the class ended, as it
    does for a student not in the class, a code that never was, or a malformed one."""
    teacher, code = started("en")
    student = joined(code, "en")
    data = component_data(student, "blockstab.follow")
    assert data["seen"] == str(store.read(code).version) == polled(data["url"]) and data["process"] == routes.PROCESS
    me = student.query_params["me"]
    assert data["url"] == CLASS_VERSION.format(code=code) + f"?me={me}"
    pick(teacher, "question")
    assert polled(data["url"]) == str(store.read(code).version) != data["seen"]  # the browser asks for a run
    again(student)
    assert component_data(student, "blockstab.follow")["seen"] == polled(data["url"])
    stranger = new_student()
    other = "".join(c for c in CODE_ALPHABET if c not in code)[:len(code)]
    for url in (f"{CLASS_VERSION.format(code=code)}?me={stranger}", f"{CLASS_VERSION.format(code=other)}?me={me}",
                f"{CLASS_VERSION.format(code='x<y')}?me={me}", CLASS_VERSION.format(code=code) + "?me="):
        assert polled(url) is None
    teacher.button(key="class_end").click().run()
    assert store.read(code) is None and polled(data["url"]) is None
