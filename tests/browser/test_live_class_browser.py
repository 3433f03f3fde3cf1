"""A live class in real Chromium, on a server started for the LAN (``python -m server --lan``): the teacher's
Streamlit page on the projector, and three students on the light page the QR code opens (``/join``: no
Streamlit session each), read off the screen as a phone's camera reads it: one phone at 390 px, one student
in Chinese. They follow a tour step (its words shown without Plotly.js, its figure once that loads), answer a
question (one changes their answer), are paused and resumed, vote again, see the reveal of both rounds, the
teacher's "show me", explore freely, are called back, answer a timed question that closes by itself, a quick
poll and a number to predict, and see the class end. No request leaves a page's origin, the teacher's key is
on no student's page, and axe-core finds nothing on the student's page at 390 px and 1280 px in both languages."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

from server.lan import is_loopback, lan_address
from support.browser import assert_healthy, axe_violations, open_app, read_qr, runs, shot, wait_for_view
from testbed.local_server import PHONE_USER_AGENT
from ui.class_views import SUMMARY_COLUMNS, answers_description
from ui.controls import INSTANT, explorer_query
from ui.lessons import NUMBERS, QUESTIONS, TOUR, engine_number
from ui.live_class import answer, ask, join, reveal, start, view_state, vote_again
from ui.student_page import tour_file
from ui.text import LANG_TAGS, Text

EN, ZH = Text("en"), Text("zh")
ACTIVITY = "#activity h2"


def polled_quietly(page, polls: int = 3, most: int = 20) -> bool:
    """Whether, within ``most`` of its polls of the class, the teacher's page polled ``polls`` times in a row
    with no run between (it runs only when what it shows changed)."""
    quiet = 0
    for _ in range(most):
        before = runs(page)
        with page.expect_response(lambda response: "/api/class/" in response.url):
            pass
        quiet = quiet + 1 if runs(page) == before else 0
        if quiet == polls:
            return True
    return False


def answered(*rounds: tuple[str, ...]):
    """A class of the first question, revealed, whose students answered each round's choices (a second: they
    voted again): what the server has."""
    c = ask(start("ACDEFGHJ", "k" * 32, "en"), 0)
    for n, choices in enumerate(rounds):
        c = vote_again(c) if n else c
        for seat, choice in enumerate(choices):
            student = f"{seat:016d}"
            c = answer(join(c, student, 0.0, 200), student, choice)
    return reveal(c)


def status_says(teacher, answered: int, students: int) -> None:
    """Wait until the teacher's status (its heading, not the private look's chart) says so many answered."""
    teacher.get_by_role("heading", name=re.compile(re.escape(EN("class.answered", answered=answered,
                                                                  students=students)))).wait_for()


def switch_language(page, lang: str) -> None:
    page.locator(".languages a").click()
    page.wait_for_function(f"() => document.documentElement.lang === '{LANG_TAGS[lang]}'")


def test_a_class_of_three_follows_answers_sees_the_reveal_explores_and_ends(lan_server, new_page, browser):
    base, _ = lan_server
    laptop = new_page(1280, 720)  # the teacher's own screen: the resume link (the key) is there
    open_app(laptop, f"{base}/class?lang=en", charts=False)
    laptop.get_by_role("button", name=EN("class.start")).click()
    laptop.get_by_text(EN("class.resume")).click()
    link_shown = laptop.locator("code", has_text="key=")
    expect(link_shown).to_have_text(re.compile(r"/class\?class=\w+&key=[\w-]{32}&lang=en$"))
    resume = link_shown.inner_text()
    key, code = (parse_qs(urlsplit(resume).query)[name][0] for name in ("key", "class"))

    teacher = new_page(1280, 720)  # the projector: a second tab that resumes the class
    open_app(teacher, resume.replace(urlsplit(resume).netloc, urlsplit(base).netloc) + "&projector=true",
             charts=False)
    assert "key=" not in teacher.url and EN("class.resume") not in teacher.inner_text("body")
    link = read_qr(teacher)
    assert urlsplit(link).hostname == lan_address() and not is_loopback(urlsplit(link).hostname)
    assert parse_qs(urlsplit(link).query) == {"class": [code], "lang": ["en"]}

    # Students in browsers of their own (none has seen the app: a phone that scanned the code)
    phones = [browser.new_context(viewport={"width": 390, "height": 844}, user_agent=PHONE_USER_AGENT,
                                  is_mobile=True),
              browser.new_context(viewport={"width": 1024, "height": 768}, locale="zh-CN"),
              browser.new_context(viewport={"width": 1280, "height": 720})]
    students = [context.new_page() for context in phones]
    for student in students:
        student.set_default_timeout(60_000)  # a wait, not a budget (as every page of the suite's)
    origin = f"{urlsplit(link).scheme}://{urlsplit(link).netloc}"
    elsewhere, errors = [], []
    plotly = "**/plotly-basic.min.js"
    students[2].route(plotly, lambda route: route.abort())  # a page without Plotly.js, at first
    for student in students:
        student.on("request", lambda r: r.url.startswith((origin, "data:", "blob:")) or elsewhere.append(r.url))
        student.on("pageerror", lambda error: errors.append(str(error)))
        student.goto(link)
    try:
        for student in students:
            student.wait_for_selector(ACTIVITY)
            assert student.inner_text(ACTIVITY) == EN(f"tour.{TOUR[0].id}.title")
            assert not student.locator("[data-testid=stApp]").count()  # not a Streamlit page
        step = tour_file(0, EN, "computer")  # its words need no Plotly.js: all there, then its figure once it loads
        expect(students[2].locator("#activity .text")).not_to_be_empty()
        expect(students[2].locator("#activity figure")).to_have_attribute("aria-label", step["description"])
        assert students[2].locator("#activity .plot[data-drawn]").count() == 0
        students[2].unroute(plotly)
        students[2].reload()
        students[2].wait_for_selector("#activity .plot[data-drawn]")
        switch_language(students[1], "zh")  # their own language: the teacher's was the default
        expect(students[1].locator(ACTIVITY)).to_have_text(ZH(f"tour.{TOUR[0].id}.title"))
        assert "lang=zh" in students[1].url and "me=" in students[1].url  # a reload keeps both
        teacher.get_by_text(EN("class.students", count=3)).wait_for()
        assert polled_quietly(teacher)  # no timer runs the projector's page: it runs when what it shows changes
        for student, lang in zip(students, ("en", "zh", "en"), strict=True):  # the next step's file, fetched ahead,
            student.wait_for_function(f"() => performance.getEntriesByType('resource')"  # and its figure drawn
                                      f".some(e => e.name.includes('/tour-1-{lang}-'))")  # ahead, off screen
            student.wait_for_selector(".drawn-ahead .plot[data-drawn] .main-svg", state="attached")
            assert student.locator(".drawn-ahead figure").get_attribute("aria-label") == tour_file(
                1, EN if lang == "en" else ZH, "computer")["description"]

        teacher.get_by_role("button", name=EN("tour.next"), exact=True).click()
        for student, t in zip(students, (EN, ZH, EN), strict=True):
            expect(student.locator(ACTIVITY)).to_have_text(t(f"tour.{TOUR[1].id}.title"))
            student.wait_for_selector("#activity .plot[data-drawn] .main-svg")
            expect(student.locator("#announced")).to_have_text(t(f"tour.{TOUR[1].id}.title"))

        teacher.get_by_text(EN("class.activity.question"), exact=True).click()
        asked = QUESTIONS[0]
        wrong = next(c for c in asked.choices if c != asked.answer)
        for student, t, choice in zip(students, (EN, ZH, EN), (asked.answer, wrong, wrong), strict=True):
            group = student.get_by_role("group", name=t("join.your_answer"))
            group.get_by_role("radio", name=t(asked.choice_key(choice))).check()
        students[2].get_by_role("radio", name=EN(asked.choice_key(asked.answer))).check()  # changed: still one
        status_says(teacher, 3, 3)
        status_says(laptop, 3, 3)
        assert axe_violations(laptop) == []  # the teacher's own screen: lock, pause, timer, the private look
        expect(link_shown).to_be_visible()  # still unfolded on the laptop, though a question replaced the tour
        assert not teacher.query_selector(".js-plotly-plot")  # nothing of the distribution before the reveal
        students[0].reload()  # a reload keeps the student and their one answer
        expect(students[0].get_by_role("radio", name=EN(asked.choice_key(asked.answer)))).to_be_checked()

        teacher.get_by_role("button", name=EN("class.pause")).click()  # "eyes up": every phone, nothing to tap
        for student, t in zip(students, (EN, ZH, EN), strict=True):
            expect(student.locator("#activity")).to_have_text(t("join.look_up"))
            expect(student.locator("#announced")).to_have_text(t("join.look_up"))
            assert student.get_by_role("radio").count() == 0
        assert axe_violations(students[1]) == []
        teacher.get_by_role("button", name=EN("class.unpause")).click()
        for student, t, choice in zip(students, (EN, ZH, EN), (asked.answer, wrong, asked.answer), strict=True):
            expect(student.get_by_role("radio", name=t(asked.choice_key(choice)))).to_be_checked()

        first = (asked.answer, wrong, asked.answer)
        teacher.get_by_role("button", name=EN("class.vote_again")).click()  # peer instruction: a second round
        for student, t, choice in zip(students, (EN, ZH, EN), first, strict=True):
            expect(student.locator("#activity")).to_contain_text(t("join.round_two"))
            expect(student.locator("#activity")).to_contain_text(
                t("join.your_first", choice=t(asked.choice_key(choice))).replace("**", ""))
            expect(student.locator("#announced")).to_contain_text(t("join.round_two"))
            assert not student.get_by_role("radio", checked=True).count()  # a fresh vote
        second = (asked.answer, asked.answer, wrong)  # one convinced by a neighbour, one not
        for student, t, choice in zip(students, (EN, ZH, EN), second, strict=True):
            student.get_by_role("radio", name=t(asked.choice_key(choice))).check()
        status_says(teacher, 3, 3)

        teacher.get_by_role("button", name=EN("class.reveal")).click()
        teacher.wait_for_selector(".js-plotly-plot")
        both = answered(first, second)
        assert teacher.get_by_text(EN("class.round", n=2), exact=True).count()  # the chart's legend
        for student, t, kind in zip(students, (EN, ZH, EN), ("ex.right", "ex.right", "ex.wrong"), strict=True):
            expect(student.locator(".verdict")).to_have_text(t(kind, answer=t(asked.choice_key(asked.answer))))
            student.wait_for_selector("#activity .main-svg")
            described = student.get_by_role("figure").first.get_attribute("aria-label")
            assert described == answers_description(both, t)
        shot(teacher, "live-class-projector-reveal")
        shot(students[0], "live-class-phone-reveal")
        for student, lang in ((students[0], "en"), (students[2], "en"), (students[0], "zh"), (students[2], "zh")):
            if student.evaluate("document.documentElement.lang") != LANG_TAGS[lang]:
                switch_language(student, lang)
                student.wait_for_selector(".verdict")
                student.wait_for_selector("#activity .main-svg")
            assert axe_violations(student) == [], (student.viewport_size, lang)  # 390 px and 1280 px, both languages
        switch_language(students[0], "en")
        switch_language(students[2], "en")
        assert axe_violations(teacher) == []

        teacher.get_by_role("button", name=EN("ex.show_me")).click()
        shown = view_state(explorer_query(asked.show_me).items())
        want = {c.key: getattr(shown, c.key) for c in INSTANT}
        views = [wait_for_view(page, **want) for page in (teacher, *students)]
        assert all(view == views[0] for view in views)  # every screen on the teacher's view
        for student in students:
            assert not student.query_selector(".instant-explorer input, .instant-explorer select")  # read-only
        shot(students[0], "live-class-phone-show-me")

        teacher.get_by_role("button", name=EN("class.free")).click()
        own = students[2]
        own.get_by_role("switch", name=EN("control.norm")).click()  # their own view, not the class's
        wait_for_view(own, norm=False)
        assert students[0].get_by_role("switch", name=EN("control.norm")).is_checked()
        teacher.get_by_role("button", name=EN("class.follow_me")).click()
        wait_for_view(own, **want)  # called back to the teacher's view, read-only again
        expect(own.locator(".instant-explorer input")).to_have_count(0)

        teacher.get_by_role("button", name=EN("class.activity.question"), exact=True).click()  # timed, 10 s
        teacher.get_by_role("spinbutton", name=EN("class.timer")).fill("10")
        teacher.get_by_role("spinbutton", name=EN("class.timer")).press("Enter")
        teacher.get_by_role("button", name=EN("class.ask"), exact=True).click()
        teacher.get_by_text(EN("class.timed", seconds=10)).wait_for()
        for student, t in zip(students, (EN, ZH, EN), strict=True):
            expect(student.locator(".countdown")).to_have_text(re.compile(
                "|".join(re.escape(t("join.seconds_left", seconds=n)) for n in range(1, 11))))
        shot(students[1], "live-class-phone-timer-zh")
        for student, t in zip(students, (EN, ZH, EN), strict=True):  # no one touches the class: it closes
            expect(student.locator("#activity .note")).to_have_text(t("join.closed"), timeout=15_000)
            expect(student.locator(".countdown")).to_be_hidden()
            expect(student.locator("#announced")).to_have_text(t("join.time_up"))
        expect(teacher.get_by_role("button", name=EN("class.close"))).to_be_disabled()

        teacher.get_by_role("button", name=EN("class.quick_poll")).click()  # a question asked aloud: A-D only
        teacher.get_by_role("button", name=EN("class.poll.poll_letters")).click()
        for student, t, letter in zip(students, (EN, ZH, EN), "bbd", strict=True):
            expect(student.locator(ACTIVITY)).to_have_text(t("ex.0.title"))
            expect(student.get_by_role("radio")).to_have_count(4)
            student.get_by_role("radio", name=t(f"poll.{letter}"), exact=True).check()
        status_says(teacher, 3, 3)
        assert not teacher.query_selector(".js-plotly-plot")  # hidden until Reveal
        teacher.get_by_role("button", name=EN("class.reveal")).click()
        for student, t in zip(students, (EN, ZH, EN), strict=True):
            expect(student.locator(".verdict")).to_have_text(t("join.poll_answered"))
        assert axe_violations(students[0]) == []

        numeric = NUMBERS[0]  # a number typed on the phone: the block the tokens collapse by
        teacher.get_by_role("combobox", name=EN("class.question")).click()
        teacher.get_by_role("option", name=re.compile(re.escape(EN(f"ex.{numeric.id}.prompt")[:40]))).click()
        teacher.get_by_role("button", name=EN("class.ask"), exact=True).click()
        value = engine_number(numeric, view_state(()))
        for student, t, typed in zip(students, (EN, ZH, EN), (value, value, value + 2), strict=True):
            field = student.get_by_label(t("join.number_label", unit=t(numeric.number.unit), low=numeric.number.low,
                                           high=numeric.number.high))
            field.fill(str(typed))
            field.press("Enter")  # (the form's own submit, by keyboard)
        status_says(teacher, 3, 3)
        teacher.get_by_role("button", name=EN("class.reveal")).click()
        for student, t, kind in zip(students, (EN, ZH, EN), ("ex.right", "ex.right", "ex.wrong"), strict=True):
            expect(student.locator(".verdict")).to_have_text(t(kind, answer=str(value)))
            student.wait_for_selector("#activity .main-svg")
        marked = students[2].evaluate("() => document.querySelector('#activity .js-plotly-plot').data.map(d => d.name)")
        assert EN("class.your_number") in marked  # this phone's own number, on its own plot
        shot(students[2], "live-class-phone-number-reveal")
        assert axe_violations(students[0]) == []
        switch_language(students[0], "zh")  # the number's reveal at 390 px in Chinese too
        expect(students[0].locator(".verdict")).to_have_text(ZH("ex.right", answer=str(value)))
        students[0].wait_for_selector("#activity .main-svg")
        assert axe_violations(students[0]) == []
        switch_language(students[0], "en")

        teacher.get_by_role("button", name=EN("class.end"), exact=False).click()
        teacher.get_by_role("button", name=EN("class.end_confirm")).click()
        for student, t in zip(students, (EN, ZH, EN), strict=True):
            expect(student.locator("#activity")).to_have_text(t("class.not_seated"))
        teacher.get_by_text(EN("class.summary_title")).wait_for()  # the summary, and the same as a CSV file
        with teacher.expect_download() as downloading:
            teacher.get_by_role("button", name=EN("class.download")).click()
        rows = list(csv.reader(io.StringIO(Path(downloading.value.path()).read_bytes().decode("utf-8-sig"))))
        assert rows[0] == [EN(f"class.summary.{column}") for column in SUMMARY_COLUMNS] and len(rows) == 7
        assert [row[:4] for row in rows[1:3]] == [["1", n, EN(f"ex.{asked.id}.prompt"), "3"] for n in "12"]
        assert [row[3] for row in rows[3:5]] == ["0", "0"]  # asked again twice ("Question", then with the timer)
        assert rows[5][2:] == [EN("ex.poll_letters.prompt"), "3", "A (0); B (2); C (0); D (1)", "", ""]
        assert rows[6][3:] == ["3", f"{value} (2); {value + 2} (1)", str(value), "67"]
        assert_healthy(teacher)
        assert not any(student.url.split("me=")[1].split("&")[0] in str(rows) for student in students)
        shot(teacher, "live-class-summary")
        assert axe_violations(teacher) == []  # the summary's table and its download
        for student in students:
            assert key not in student.content() and key not in student.url
        assert elsewhere == [] and errors == []
    finally:
        for context in phones:
            context.close()


def test_thirty_phones_behind_one_address_are_all_counted_and_a_lock_keeps_a_thirty_first_out(lan_server, new_page,
                                                                                              browser):
    """A class of 30 phones from one computer (one address, as a school's NAT shows them) with the default
    settings: every one joins, answers and is counted; the teacher locks the class, and a 31st phone is told so
    in its language while a seated phone that reloads stays in."""
    base, _ = lan_server
    teacher = new_page(1280, 720)
    open_app(teacher, f"{base}/class?lang=en", charts=False)
    teacher.get_by_role("button", name=EN("class.start")).click()
    link = teacher.locator("code", has_text="/join?").inner_text()
    link = link.replace(urlsplit(link).netloc, urlsplit(base).netloc)
    teacher.get_by_text(EN("class.activity.question"), exact=True).click()  # (the phones open on the question)
    asked = QUESTIONS[0]
    contexts = [browser.new_context(viewport={"width": 390, "height": 844}, user_agent=PHONE_USER_AGENT,
                                    is_mobile=True) for _ in range(30)]  # (each a phone: its own connections)
    try:
        phones = [context.new_page() for context in contexts]
        for phone in phones:
            phone.set_default_timeout(60_000)
            phone.goto(link, wait_until="commit")  # (all 30 loading at once, as a class opening the link)
        for phone in phones:
            expect(phone.locator(ACTIVITY)).to_have_text(EN(f"ex.{asked.exercise}.title"))
        teacher.get_by_text(re.compile(re.escape(EN("class.students", count=30)))).first.wait_for()
        for n, phone in enumerate(phones):
            phone.get_by_role("radio", name=EN(asked.choice_key(asked.choices[n % len(asked.choices)]))).check()
        status_says(teacher, 30, 30)

        teacher.get_by_role("button", name=EN("class.lock")).click()
        teacher.get_by_text(EN("class.students", count=30) + " · " + EN("class.locked_status")).wait_for()
        late = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
        try:
            refused = late.new_page()
            refused.goto(link.replace("lang=en", "lang=zh"))
            expect(refused.get_by_role("alert")).to_have_text(ZH("class.locked"))
            assert axe_violations(refused) == []
        finally:
            late.close()
        phones[0].reload()  # a seat that reloads after the lock stays in, its answer with it
        expect(phones[0].get_by_role("radio", name=EN(asked.choice_key(asked.choices[0])))).to_be_checked()
        status_says(teacher, 30, 30)
        shot(teacher, "live-class-locked-thirty")
    finally:
        for context in contexts:
            context.close()


def test_on_a_hosted_server_only_the_teachers_passphrase_starts_a_class_and_it_is_in_no_url_or_log(hosted, new_page):
    base, log, passphrase = hosted
    asked: list[str] = []
    for lang, t in (("zh", ZH), ("en", EN)):
        teacher = new_page(1280, 720)
        teacher.on("request", lambda request: asked.append(request.url))
        open_app(teacher, f"{base}/class?lang={lang}", charts=False)
        field = teacher.get_by_label(t("class.passphrase"))
        assert field.get_attribute("type") == "password"
        field.fill(passphrase.rsplit(" ", 1)[0])  # (a wrong one, most of the right one)
        field.press("Enter")  # (Enter only sends the field: nothing starts)
        teacher.get_by_role("button", name=t("class.start")).click()
        teacher.get_by_text(t("class.wrong_passphrase")).wait_for()
        assert "class=" not in teacher.url
        assert axe_violations(teacher) == []
        field.fill(passphrase)
        teacher.get_by_role("button", name=t("class.start")).click()
        code = teacher.locator(".st-key-class_code strong").inner_text().strip()
        assert f"class={code}" in teacher.url
        expect(teacher.get_by_label(t("class.passphrase"))).to_have_count(0)  # (once the run is done)
        teacher.locator("code", has_text="/join?").wait_for()
        shot(teacher, f"live-class-started-with-passphrase-{lang}")
    secret = passphrase.split()[2]  # (a word of it: what would show even in part)
    assert asked and not [url for url in asked if secret in url]
    assert secret not in log.read_text(errors="replace")
