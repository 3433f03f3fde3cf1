"""A live class end to end in one process: the teacher's page in Streamlit's AppTest, its students through the
student side's own routes (``server.class_routes``, a Starlette test client: no Streamlit session per student),
both on one embedded store. What a student's browser draws of it is tests/browser/test_live_class_browser.py's."""

from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import replace
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Match
from starlette.testclient import TestClient
from streamlit.testing.v1 import AppTest

from server import class_files, class_routes, routes
from server import class_store as stores
from server.policy import POLICY
from server.routes import CLASS_VERSION
from support.explorer_view import component_data
from support.pages import run_page
from support.text import says
from ui.bundle import FIGURES, range_part
from ui.class_views import answers_description, answers_figure, link_code_svg, summary_rows
from ui.controls import BY_KEY, CODE_ALPHABET, INSTANT, explorer_query
from ui.examples import markdown_text
from ui.lessons import ASKABLE, LIVE_SCRIPT, NUMBERS, POLLS, QUESTIONS, engine_number
from ui.live_class import counts, new_student, view_state
from ui.student_page import LOOKS
from ui.text import LANGUAGES, Text

TEACHER = "pages/live_class.py"


@pytest.fixture(autouse=True)
def store(monkeypatch):
    """A fresh embedded store per test (what a server starts with); every student here comes from the test
    client's one address, as a school's phones come from its one NAT address."""
    stores.class_store.cache_clear()
    monkeypatch.setattr(class_files, "_started", set())
    monkeypatch.setattr(class_routes, "MISSES", class_routes.Misses())  # (a server's start: no computer refused)
    yield stores.class_store()
    stores.class_store.cache_clear()


@pytest.fixture(scope="module")
def client():
    """The student side's routes, served in this process (their files are built as a server builds them)."""
    with TestClient(Starlette(routes=class_routes.ROUTES)) as test_client:
        yield test_client


class Student:
    """A student's page as its script talks to the server: it joins with its link (``me``: its token, once
    joined), then reads its state; ``said`` is the last refusal's message."""

    def __init__(self, client: TestClient, code: str, lang: str, me: str | None = None):
        self.client, self.code, self.lang = client, code, lang
        answer = self.post("join", {"me": me} if me else {})
        self.me, self.joined = answer.get("me"), answer.get("state")

    def url(self, route: str, **query) -> str:
        return f"/api/class/{self.code}/{route}?" + urlencode({"lang": self.lang, **query})

    def post(self, route: str, body: dict) -> dict:
        response = self.client.post(self.url(route), json=body)
        self.status, answer = response.status_code, response.json()
        self.said = answer.get("message")
        return answer

    def get(self, route: str) -> dict:
        response = self.client.get(self.url(route, me=self.me))
        self.status, answer = response.status_code, response.json()
        self.said = answer.get("message")
        return answer

    def state(self) -> dict | None:
        return self.get("state")["state"]

    def answer(self, choice: str) -> bool | None:
        return self.post("answer", {"me": self.me, "asked": self.state()["asked"], "choice": choice}).get("counted")


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


def asking_three(lang: str, client: TestClient) -> tuple[AppTest, str, list[Student]]:
    """A class started, three students in, the teacher on the question: its page, its code, the students."""
    teacher, code = started(lang)
    students = [Student(client, code, lang) for _ in range(3)]
    pick(teacher, "question")
    return teacher, code, students


def again(*pages: AppTest) -> None:
    for page in pages:
        page.run()
        assert not page.exception, [e.value for e in page.exception][:1]


def pick(teacher: AppTest, activity: str) -> None:
    teacher.button(key=f"class_show_{activity}").click().run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_start_shows_the_code_its_link_and_qr_and_who_is_in(lang, store, client, parts_asked_ahead):
    t = Text(lang)
    teacher = run_page(TEACHER, lang=lang)
    assert teacher.button(key="class_start").label == t("class.start")
    teacher, code = started(lang)
    assert BY_KEY["class"].parse(code) == code and store.read(code).lang == lang
    (link,) = [c.value for c in teacher.code if "/join?" in c.value]
    assert parse_qs(urlsplit(link).query) == {"class": [code], "lang": [lang]}
    assert f"{t('class.code_label')}  \n**{code}**" in texts(teacher)  # in projector type (APP_CSS)
    qr, homework_qr = [e.proto.imgs[0] for e in walk(teacher._tree) if getattr(e, "type", "") == "image"]
    assert (qr.alt, homework_qr.alt) == (t("class.qr_title"), t("study.qr_title"))  # their accessible names
    modules = re.compile(r'class="qrline"[^>]* d="([^"]+)"')  # the code's dark modules, as one path
    (homework,) = [c.value for c in teacher.code if "/study?" in c.value]  # the lesson for one, on the class's view
    assert urlsplit(homework)[:2] == urlsplit(link)[:2] and parse_qs(urlsplit(homework).query) == {"lang": [lang]}
    for image, shown in ((qr, link), (homework_qr, homework)):
        drawn = base64.b64decode(image.url.removeprefix("data:image/svg+xml;base64,")).decode()
        assert modules.search(drawn).group(1) == modules.search(link_code_svg(shown)).group(1)
    assert shows(teacher, lang, "class.local_only")  # AppTest's server listens on loopback (config.toml)
    assert t("class.students", count=0) in texts(teacher)
    # the students' Explorer, built while the class begins: figures and first blocks, on a phone and a computer,
    # in the class's language first
    other = next(each for each in LANGUAGES if each != lang)
    assert parts_asked_ahead == [[(class_files.bundle_look(look, "both"), each, name) for each in (lang, other)
                                  for look in LOOKS for name in (FIGURES, range_part(1))]]
    Student(client, code, lang)
    again(teacher)
    assert t("class.one_student") in texts(teacher)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_class_follows_the_teacher_through_a_question(lang, store, client):
    t = Text(lang)
    teacher, code = started(lang)
    students = [Student(client, code, lang) for _ in range(3)]
    assert all(BY_KEY["me"].parse(s.me) and s.joined["activity"] == "tour" and s.joined["step"] == 0 for s in students)
    teacher.button(key="class_next").click().run()
    assert all(s.state()["step"] == 1 for s in students)

    pick(teacher, "question")
    asked = QUESTIONS[0]
    assert {(s.state()["activity"], s.state()["phase"], s.state()["question"]) for s in students} == {
        ("question", "open", 0)}
    wrong = next(c for c in asked.choices if c != asked.answer)
    for student, choice in zip(students, (asked.answer, wrong, wrong), strict=True):
        assert student.answer(choice) is True
    assert students[2].answer(asked.answer) is True and students[2].answer(asked.answer) is True  # changed; again
    assert students[2].state()["mine"] == asked.answer
    again(teacher)
    assert t("class.students", count=3) + " · " + t("class.answered", answered=3, students=3) in texts(teacher)
    shown = [e.key for e in teacher.get("plotly_chart")]
    assert shown == ["class_private_answers"]  # the distribution: only the folded private look until the reveal
    assert counts(store.read(code)) == {asked.answer: 2, wrong: 1, **{c: 0 for c in asked.choices[2:]}}
    assert students[0].get("reveal") and students[0].status == 409  # nor can a student's script read it

    teacher.button(key="class_close").click().run()
    late = Student(client, code, lang)
    assert [s.state()["phase"] for s in students] == ["closed"] * 3 and students[1].state()["mine"] == wrong
    assert late.answer(asked.answer) is None and late.status == 409 and late.said == t("class.question_closed")

    teacher.button(key="class_reveal").click().run()
    (chart,) = [e for e in teacher.get("plotly_chart") if e.key != "class_private_answers"]
    record = store.read(code)
    drawn, expected = json.loads(chart.proto.spec)["data"][0], answers_figure(record, t).data[0]
    assert drawn["x"] == list(counts(record).values()) == list(expected.x)
    assert drawn["y"] == list(expected.y) and chart.proto.alt == answers_description(record, t)
    reveals = [s.get("reveal") for s in (*students, late)]
    assert all(r["figure"]["data"][0]["x"] == drawn["x"] and r["description"] == chart.proto.alt for r in reveals)
    right = t(asked.choice_key(asked.answer))
    assert [r["verdict"] for r in reveals] == [{"kind": "right", "said": t("ex.right", answer=right)},
                                               {"kind": "wrong", "said": t("ex.wrong", answer=right)},
                                               {"kind": "right", "said": t("ex.right", answer=right)},
                                               {"kind": "not_counted", "said": t("join.not_counted", answer=right)}]

    teacher.button(key="class_show_me").click().run()
    state = students[0].state()
    assert state["activity"] == "explorer" and state["following"]  # read-only, led: the page mounts it so
    shown = view_state(explorer_query(asked.show_me).items())
    assert state["view"] == {c.key: getattr(shown, c.key) for c in INSTANT} and state["scenario"] == shown.scenario
    assert dict(store.read(code).view) == explorer_query(asked.show_me)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_free_explore_unlocks_the_students_and_follow_me_calls_them_back(lang, store, client):
    teacher, code = started(lang)
    student = Student(client, code, lang)
    pick(teacher, "explorer")
    assert student.state()["activity"] == "explorer" and student.state()["following"]
    teacher.button(key="class_free").click().run()
    assert student.state()["following"] is False
    teacher.button(key="class_follow").click().run()
    assert student.state()["following"] is True


def test_the_teachers_explorer_leads_the_students_view(store, client):
    teacher, code = started("en")
    student = Student(client, code, "en")
    pick(teacher, "explorer")
    before = student.state()
    teacher.session_state["instant_explorer"] = {"view": {**component_data(teacher)["view"], "residual": False}}
    teacher.run()
    assert dict(store.read(code).view) == {"residual": "false"}
    after = student.state()
    assert after["view"]["residual"] is False and after["version"] > before["version"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ending_the_class_tells_every_student_and_shows_the_teacher_its_summary_to_download(lang, store, client):
    t = Text(lang)
    teacher, code, students = asking_three(lang, client)
    for student, choice in zip(students, QUESTIONS[0].choices, strict=False):
        student.answer(choice)
    teacher.button(key="class_ask").click().run()  # asked again, and no one answers it
    teacher.button(key="class_end").click().run()
    record = store.read(code)
    assert record.ended and record.seats == {} and all(s.state() is None for s in students)
    assert Student(client, code, lang).status == 404  # no phone joins an ended class
    assert t("class.summary_title") in texts(teacher) and t("class.summary_kept") in texts(teacher)
    (table,) = teacher.table
    assert [list(table.value.iloc[n]) for n in range(2)] == [list(row.values()) for row in summary_rows(record, t)]
    assert list(table.value[t("class.summary.answered")]) == [3, 0]
    download = teacher.get("download_button")[0]
    assert download.proto.label == t("class.download") and not teacher.exception
    teacher.button(key="class_new").click().run()
    assert "class" not in teacher.query_params and teacher.button(key="class_start")  # ready for the next class
    assert store.read(code).ended  # (kept until it expires)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_codes_and_a_wrong_key_are_refused_in_words(lang, store, client):
    t = Text(lang)
    for code, key, status in (("0OI1L0", "class.bad_code", 400), ("ACDEFGHJ", "class.ended", 404)):  # (never was)
        student = Student(client, code, lang)
        assert student.status == status and student.said == t(key) and student.me is None
    page = client.get(f"/join?class=0OI1L&lang={lang}")
    assert page.status_code == 200 and t("class.bad_code") in page.text and 'name="class"' in page.text
    _, code = started(lang)
    intruder = run_page(TEACHER, lang=lang, key="x" * 32, **{"class": code})
    assert shows(intruder, lang, "class.not_teacher") and not intruder.get("bidi_component")
    assert "key" not in intruder.query_params and intruder.button(key="class_start")
    assert shows(run_page(TEACHER, lang=lang, **{"class": code}), lang, "class.resume_needed")


def test_a_code_typed_by_hand_opens_the_class(client):
    _, code = started("en")
    typed = client.get(f"/join?class=%20{code[:3].lower()}%20{code[3:]}%20&lang=en", follow_redirects=False)
    assert typed.status_code == 303 and typed.headers["location"] == f"/join?class={code}&lang=en"


def test_a_students_token_keeps_their_one_answer_over_a_reload(store, client):
    teacher, code = started("en")
    student = Student(client, code, "en")
    pick(teacher, "question")
    assert student.answer(QUESTIONS[0].answer)
    again_ = Student(client, code, "en", me=student.me)  # the page reloaded with its link (``me``)
    assert again_.me == student.me and again_.joined["mine"] == QUESTIONS[0].answer
    assert len(store.read(code).seats) == 1 and len(store.read(code).answers) == 1


def test_the_resume_link_hands_over_the_class_and_leaves_the_address_bar(store):
    teacher, code = started("en")
    (resume,) = [c.value for c in teacher.code if "/class?" in c.value]
    query = {k: v[0] for k, v in parse_qs(urlsplit(resume).query).items()}
    other = run_page(TEACHER, **query)
    assert "key" not in other.query_params and other.query_params["class"] == code
    other.button(key="class_next").click().run()
    assert store.read(code).step == 1


def test_the_key_is_never_in_what_a_student_is_sent_nor_on_the_projector(store, client):
    teacher, code = started("en")
    key = teacher.session_state["class_key"]
    student = Student(client, code, "en")
    pick(teacher, "question")
    teacher.button(key="class_reveal").click().run()
    sent = [client.get(f"/join?class={code}&lang=en").text, json.dumps(student.joined), json.dumps(student.state()),
            json.dumps(student.get("reveal"))]
    assert not any(key in part for part in sent) and code in sent[0]
    projector = run_page(TEACHER, projector="true", key=key, **{"class": code})
    assert key not in str(projector._tree)
    assert Text("en")("class.resume") not in [e.label for e in projector.expander]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_full_class_a_locked_one_and_too_many_wrong_codes_are_refused(lang, store, client, monkeypatch):
    t = Text(lang)
    teacher, code = started(lang)
    monkeypatch.setitem(POLICY, "STUDENTS_PER_CLASS", 3)
    monkeypatch.setitem(POLICY, "WRONG_CODES_PER_MINUTE", 3)
    first, _ = Student(client, code, lang), Student(client, code, lang)
    teacher.button(key="class_lock").click().run()
    assert store.read(code).locked and t("class.students", count=2) + " · " + t("class.locked_status") in texts(teacher)
    locked = Student(client, code, lang)
    assert locked.status == 409 and locked.said == t("class.locked")
    assert Student(client, code, lang, me=first.me).status == 200  # a seat's reload stays in
    teacher.button(key="class_lock").click().run()  # open again
    assert not store.read(code).locked and Student(client, code, lang).status == 200
    full = Student(client, code, lang)
    assert full.status == 409 and full.said == t("class.full")
    wrong = "".join(c for c in CODE_ALPHABET if c not in code)[:len(code)]
    assert [Student(client, wrong, lang).status for _ in range(3)] == [404] * 3  # three wrong codes a minute
    refused = Student(client, code, lang, me=new_student())  # then no code is looked up, the right one neither
    assert refused.status == 429 and refused.said == t("class.too_many_tries")
    assert Student(client, code, lang, me=first.me).status == 200  # a seat is no guess
    assert len(store.read(code).seats) == 3


def test_every_phone_behind_one_address_counts_and_the_last_minutes_seats_can_be_removed(store, client):
    teacher, code = started("en")
    early = [Student(client, code, "en") for _ in range(2)]
    store.update(code, lambda c: replace(c, seats={s: t - 120 for s, t in c.seats.items()}))  # two minutes ago
    burst = [Student(client, code, "en") for _ in range(5)]  # (a script's, say)
    pick(teacher, "question")
    assert all(s.answer(QUESTIONS[0].choices[0]) for s in early + burst)
    again(teacher)
    t = Text("en")
    assert t("class.students", count=7) + " · " + t("class.answered", answered=7, students=7) in texts(teacher)
    teacher.button(key="class_remove_recent").click().run()
    record = store.read(code)
    assert set(record.seats) == set(record.answers) == {s.me for s in early}
    assert shows(teacher, "en", "class.removed") and t("class.removed", count=5) in texts(teacher)
    assert t("class.students", count=2) + " · " + t("class.answered", answered=2, students=2) in texts(teacher)
    assert burst[0].state() is None and early[0].state()["mine"] == QUESTIONS[0].choices[0]
    burst[1].post("answer", {"me": burst[1].me, "asked": record.asked, "choice": QUESTIONS[0].answer})
    assert burst[1].status == 404 and burst[1].said == t("class.not_seated")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pause_puts_every_phone_on_the_projector_and_resume_gives_back_what_each_had(lang, store, client):
    t = Text(lang)
    teacher, code, students = asking_three(lang, client)
    assert students[0].answer(QUESTIONS[0].answer)
    before = [s.state() for s in students]
    teacher.button(key="class_pause").click().run()
    assert t("class.students", count=3) + " · " + t("class.paused_status") in " ".join(texts(teacher))
    assert all(s.state()["paused"] for s in students)
    students[1].post("answer", {"me": students[1].me, "asked": before[1]["asked"], "choice": QUESTIONS[0].answer})
    assert (students[1].status, students[1].said) == (409, t("class.paused"))
    assert teacher.button(key="class_pause").label == t("class.unpause")
    teacher.button(key="class_pause").click().run()
    after = [s.state() for s in students]
    assert [{**a, "version": 0} for a in after] == [{**b, "version": 0} for b in before]
    assert after[0]["mine"] == QUESTIONS[0].answer and store.read(code).answers == {students[0].me: QUESTIONS[0].answer}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_teachers_own_screen_has_a_private_look_at_the_split_and_the_projector_none(lang, store, client):
    t = Text(lang)
    teacher, code, students = asking_three(lang, client)
    for student, pick_ in zip(students, (0, 1, 1), strict=True):
        student.answer(QUESTIONS[0].choices[pick_])
    again(teacher)
    record = store.read(code)
    look = next(e for e in teacher.expander if e.label == t("class.private_look"))
    assert markdown_text(answers_description(record, t)) in [m.value for m in look.markdown]  # the chart in words
    for student in students:  # the phones see nothing of it
        assert student.get("reveal")["error"] == "class.not_revealed" and student.status == 409
    projector = run_page(TEACHER, lang=lang, projector="true", key=teacher.session_state["class_key"],
                         **{"class": code})
    assert t("class.private_look") not in [e.label for e in projector.expander] and not projector.exception
    assert markdown_text(answers_description(record, t)) not in str(projector._tree)


def test_vote_again_opens_a_second_round_each_phone_sees_its_first_answer_and_the_reveal_shows_both(store, client):
    t, q = Text("en"), QUESTIONS[0]
    teacher, code, students = asking_three("en", client)
    assert teacher.button(key="class_vote_again").disabled  # no answer yet: nothing to vote on again
    wrong = next(choice for choice in q.choices if choice != q.answer)
    for student, choice in zip(students, (q.answer, wrong, wrong), strict=True):
        student.answer(choice)
    first = students[1].state()
    again(teacher)
    teacher.button(key="class_vote_again").click().run()
    states = [s.state() for s in students]
    assert [(s["round"], s["first"], s["mine"], s["phase"]) for s in states] == [
        (2, q.answer, None, "open"), (2, wrong, None, "open"), (2, wrong, None, "open")]
    assert t("class.second_round") in texts(teacher) and teacher.button(key="class_vote_again").disabled
    late = students[1].post("answer", {"me": students[1].me, "asked": first["asked"], "choice": q.answer})
    assert (students[1].status, students[1].said, late.get("counted")) == (409, t("class.question_closed"), None)
    assert store.read(code).answers == {}  # a round 1 answer sent late changes nothing
    for student in students:
        assert student.answer(q.answer)
    again(teacher)
    teacher.button(key="class_reveal").click().run()
    record = store.read(code)
    said = answers_description(record, t)
    assert said.startswith(t("class.describe_round", n=1, said="")) and t("class.describe_round", n=2, said="") in said
    assert markdown_text(said) in [m.value for m in teacher.markdown]  # the chart in words
    reveal = students[0].get("reveal")
    assert reveal["description"] == said and [bars["name"] for bars in reveal["figure"]["data"]] == [
        t("class.round", n=1), t("class.round", n=2)]
    assert teacher.button(key="class_vote_again").disabled


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_quick_poll_shows_only_its_buttons_hides_the_split_until_reveal_and_counts_as_a_question(lang, store,
                                                                                                   client):
    t = Text(lang)
    teacher, code, students = asking_three(lang, client)
    for poll in POLLS:
        assert teacher.button(key=f"class_{poll.id}").label == t(f"class.poll.{poll.id}")
    teacher.button(key="class_poll_agree").click().run()
    state = students[0].state()
    assert ASKABLE[state["question"]] == POLLS[1] and state["phase"] == "open"
    assert t("ex.0.title") in [h.value for h in teacher.subheader]
    bad = students[0].post("answer", {"me": students[0].me, "asked": state["asked"], "choice": "a"})
    assert (students[0].status, students[0].said, bad.get("counted")) == (400, t("class.bad_choice"), None)
    for student, choice in zip(students, ("agree", "agree", "disagree"), strict=True):
        assert student.answer(choice)
    assert students[0].get("reveal")["error"] == "class.not_revealed"  # hidden until Reveal
    again(teacher)
    teacher.button(key="class_reveal").click().run()
    record = store.read(code)
    assert counts(record) == {"agree": 2, "disagree": 1}
    assert markdown_text(answers_description(record, t)) in [m.value for m in teacher.markdown]
    assert teacher.button(key="class_show_me").disabled  # a poll has no view to show
    assert students[2].get("reveal")["verdict"] == {"kind": "poll", "said": t("join.poll_answered")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_numeric_prediction_takes_whole_numbers_in_bounds_and_reveals_the_engines_value(lang, store, client):
    t, q = Text(lang), NUMBERS[1]
    teacher, code, students = asking_three(lang, client)
    teacher.selectbox(key=next(s.key for s in teacher.selectbox if s.key.startswith("class_question_"))).set_value(
        ASKABLE.index(q)).run()
    teacher.button(key="class_ask").click().run()
    record = store.read(code)
    assert ASKABLE[record.question] == q and record.value == engine_number(q, view_state(record.view))
    asked = students[0].state()["asked"]
    for bad in ("abc", "101", "4.5", "-1", "<b>9</b>", "9" * 40):
        refused = students[0].post("answer", {"me": students[0].me, "asked": asked, "choice": bad})
        assert (students[0].status, students[0].said, refused.get("counted")) == (400, t("class.bad_number"), None)
    assert store.read(code).answers == {}  # nothing kept of a bad number
    for student, typed in zip(students, (str(record.value), "12", str(record.value)), strict=True):
        assert student.answer(typed)
    again(teacher)
    teacher.button(key="class_reveal").click().run()
    record = store.read(code)
    assert markdown_text(answers_description(record, t)) in [m.value for m in teacher.markdown]
    assert t("ex.growth_power.explain", value=record.value) in [m.value for m in teacher.markdown]
    mine = students[1].get("reveal")["verdict"]
    assert (mine["kind"], mine["own"]["x"]) == ("wrong", [12])  # this phone's own number, marked on its plot
    shared = [trace.get("name") for trace in students[0].get("reveal")["figure"]["data"]]
    assert t("class.your_number") not in shared  # the class's plot marks no one's number


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_question_asked_with_a_timer_counts_down_on_the_phones_and_closes_by_itself(lang, store, client):
    t = Text(lang)
    teacher, code = started(lang)
    student = Student(client, code, lang)
    pick(teacher, "question")
    field = teacher.number_input(key="class_timer")
    assert field.label == t("class.timer") and field.value is None and not store.read(code).timer  # none by default
    field.set_value(30)
    teacher.button(key="class_ask").click().run()
    record = store.read(code)
    assert record.timer == 30 and 0 < record.closes_at - time.time() <= 30
    assert t("class.timed", seconds=30) in texts(teacher) and not teacher.button(key="class_close").disabled
    assert 25 < student.state()["closes_in"] <= 30
    store.update(code, lambda c: replace(c, closes_at=time.time() - 0.1))  # (its zero, come)
    again(teacher)
    assert teacher.button(key="class_close").disabled and t("class.timed", seconds=30) not in texts(teacher)
    assert (student.state()["phase"], student.answer(QUESTIONS[0].answer)) == ("closed", None)
    assert (student.status, student.said) == (409, t("class.time_up"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_with_a_passphrase_set_only_the_right_one_starts_a_class_and_tries_are_bounded(lang, store, monkeypatch,
                                                                                      caplog):
    secret = "correct horse battery staple"
    monkeypatch.setenv("BLOCKSTAB_TEACHER_PASSPHRASE", secret)
    monkeypatch.setitem(POLICY, "PASSPHRASE_TRIES_PER_HOUR", 3)
    t = Text(lang)
    teacher = run_page(TEACHER, lang=lang)
    field = teacher.text_input(key="class_passphrase")
    assert field.label == t("class.passphrase") and field.proto.type == field.proto.PASSWORD
    for given in ("", "correct horse battery stapler"):
        teacher.text_input(key="class_passphrase").input(given)
        teacher.button(key="class_start").click().run()
        assert shows(teacher, lang, "class.wrong_passphrase") and "class" not in teacher.query_params
    teacher.text_input(key="class_passphrase").input(secret)
    teacher.button(key="class_start").click().run()
    code = teacher.query_params["class"]
    assert store.read(code) is not None and not teacher.exception
    assert secret not in str(dict(teacher.query_params)) and secret not in caplog.text
    from_teachers = run_page("pages/teachers.py", lang=lang)  # "For teachers": no class without it either
    from_teachers.button(key="teach_live").click().run()
    assert "class" not in from_teachers.query_params
    other = run_page(TEACHER, lang=lang)
    for given in ("wrong", secret):  # the third wrong try of this computer this hour, then none is compared
        other.text_input(key="class_passphrase").input(given)
        other.button(key="class_start").click().run()
    assert shows(other, lang, "class.too_many_passphrases") and "class" not in other.query_params


def test_without_a_passphrase_set_the_page_asks_for_none(monkeypatch):
    monkeypatch.delenv("BLOCKSTAB_TEACHER_PASSPHRASE", raising=False)
    assert not run_page(TEACHER, lang="en").text_input


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
    monkeypatch.setitem(POLICY, "STARTS_PER_HOUR", 2)  # (two starts so far from this address)
    teacher.run().button(key="class_start").click().run()  # (a page's callback reads its run's settings)
    assert shows(teacher, lang, "class.too_many_starts")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_restarted_server_has_no_class_and_the_pages_say_so(lang, store, client):
    teacher, code = started(lang)
    student = Student(client, code, lang)
    stores.class_store.cache_clear()  # the embedded store of a server started again: empty
    again(teacher)
    assert shows(teacher, lang, "class.ended") and teacher.button(key="class_start")
    assert student.state() is None


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


def test_the_teachers_page_runs_when_a_student_joins_or_answers_and_tells_a_stranger_nothing(store, client):
    """The teacher's page follows the class by its own token (never its key) and is run again on every count
    it shows; the route answers ``null`` alike to a student's token, a stranger's, a code that never was, a
    malformed one and an ended class."""
    teacher, code = started("en")
    follows = component_data(teacher, "blockstab.follow")
    assert polled(follows["url"]) == follows["seen"] and teacher.session_state["class_key"] not in follows["url"]
    student = Student(client, code, "en")
    assert polled(follows["url"]) != follows["seen"]
    again(teacher)
    assert shows(teacher, "en", "class.one_student") and polled(follows["url"]) == component_data(
        teacher, "blockstab.follow")["seen"]
    pick(teacher, "question")
    before = component_data(teacher, "blockstab.follow")["seen"]
    student.answer(QUESTIONS[0].answer)
    assert polled(follows["url"]) != before
    again(teacher)
    t = Text("en")
    assert t("class.one_student") + " · " + t("class.answered", answered=1, students=1) in texts(teacher)
    other = "".join(c for c in CODE_ALPHABET if c not in code)[:len(code)]
    for url in (f"{CLASS_VERSION.format(code=code)}?me={student.me}", f"{CLASS_VERSION.format(code=code)}?me="
                f"{new_student()}", f"{CLASS_VERSION.format(code=other)}?me={student.me}",
                f"{CLASS_VERSION.format(code='x<y')}?me={student.me}", CLASS_VERSION.format(code=code) + "?me="):
        assert polled(url) is None
    teacher.button(key="class_end").click().run()
    assert store.read(code).ended  # its summary is kept; the page shows it and follows nothing
    assert not [e for e in teacher.get("bidi_component") if e.proto.component_name.endswith("blockstab.follow")]
