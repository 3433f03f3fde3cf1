"""A live class in real Chromium, on a server started for the LAN (``python -m server --lan``): the
teacher's page on the projector, and three students who open the link its QR code holds, read off the
screen as a phone's camera reads it (one phone at 390 px, one student who switches to Chinese). The
students follow a tour step, answer a question, see the reveal and the teacher's "show me" view; no
request leaves each page's origin, and the teacher's key is in no student's page or WebSocket message."""

from __future__ import annotations

import io
import re
from urllib.parse import parse_qs, urlsplit

import zxingcpp
from PIL import Image
from playwright.sync_api import expect

from benchmarks.local_server import PHONE_USER_AGENT
from server.lan import is_loopback, lan_address
from support.browser import IDLE, SETTLED, axe_violations, open_app, runs, shot, wait_for_view
from ui.lessons import QUESTIONS, TOUR
from ui.text import Text

EN, ZH = Text("en"), Text("zh")


def watched(page) -> dict:
    """What leaves the page (requests) and what reaches it (WebSocket frames), recorded as it runs."""
    seen = {"requests": [], "frames": []}
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: seen["frames"].append(frame)))
    return seen


def read_qr(page) -> str:
    """The link in the QR code on the screen."""
    image = page.get_by_role("img", name=EN("class.qr_title"))
    (found,) = zxingcpp.read_barcodes(Image.open(io.BytesIO(image.screenshot())))
    return found.text


def polled_quietly(page, polls: int = 3, most: int = 20) -> bool:
    """Whether, within ``most`` of its polls of the class, the page polled ``polls`` times in a row with no
    run between (a teacher's page runs once a poll while it builds the next step's figures, then rests)."""
    quiet = 0
    for _ in range(most):
        before = runs(page)
        with page.expect_response(lambda response: "/api/class/" in response.url):
            pass
        quiet = quiet + 1 if runs(page) == before else 0
        if quiet == polls:
            return True
    return False


def test_three_students_follow_answer_and_see_the_reveal(lan_server, new_page):
    base, _ = lan_server
    laptop = new_page(1280, 720)  # the teacher's own screen: the resume link (the key) is there
    open_app(laptop, f"{base}/class?lang=en", charts=False)
    laptop.get_by_role("button", name=EN("class.start")).click()
    laptop.get_by_text(EN("class.resume")).click()
    link_shown = laptop.locator("code", has_text="key=")
    expect(link_shown).to_have_text(re.compile(r"/class\?class=\w+&key=[\w-]{32}&lang=en$"), timeout=60_000)
    resume = link_shown.inner_text()
    key, code = (parse_qs(urlsplit(resume).query)[name][0] for name in ("key", "class"))

    teacher = new_page(1280, 720)  # the projector: a second tab that resumes the class
    open_app(teacher, resume.replace(urlsplit(resume).netloc, urlsplit(base).netloc) + "&projector=true",
             charts=False)
    assert "key=" not in teacher.url and EN("class.resume") not in teacher.inner_text("body")
    link = read_qr(teacher)
    assert urlsplit(link).hostname == lan_address() and not is_loopback(urlsplit(link).hostname)
    assert parse_qs(urlsplit(link).query) == {"class": [code], "lang": ["en"]}
    assert EN("class.local_only", command="x").split(":")[0] not in teacher.inner_text("body")

    students = [new_page(390, 844, user_agent=PHONE_USER_AGENT), new_page(1024, 768, "zh-CN"), new_page(1280, 720)]
    traffic = [watched(student) for student in students]
    for student in students:
        open_app(student, link, charts=True)
    students[1].get_by_text("中文").click()  # their own language: the teacher's was the default
    students[1].wait_for_selector(f"text={ZH('join.title')}")
    teacher.get_by_text(EN("class.students", count=3)).wait_for()
    assert polled_quietly(teacher)  # no timer runs the projector's page: it runs when what it shows changes

    teacher.get_by_role("button", name=EN("tour.next"), exact=True).click()
    for student, t in zip(students, (EN, ZH, EN), strict=True):
        student.get_by_text(t(f"tour.{TOUR[1].id}.title")).wait_for()

    teacher.get_by_text(EN("class.activity.question"), exact=True).click()
    asked = QUESTIONS[0]
    wrong = next(c for c in asked.choices if c != asked.answer)
    for student, t, choice in zip(students, (EN, ZH, EN), (asked.answer, wrong, wrong), strict=True):
        student.get_by_text(t(asked.choice_key(choice)), exact=True).click()
    students[2].get_by_text(EN(asked.choice_key(asked.answer)), exact=True).click()  # changed: still one answer
    teacher.get_by_text(re.compile(re.escape(EN("class.answered", answered=3, students=3)))).wait_for()
    assert not teacher.query_selector(".js-plotly-plot")  # nothing of the distribution before the reveal

    teacher.get_by_role("button", name=EN("class.reveal")).click()
    teacher.wait_for_selector(".js-plotly-plot")
    assert teacher.get_by_role("figure").first.get_attribute("aria-label").startswith(
        EN("class.describe", answered=3, students=3, choices="").split(".")[0])
    right = [EN("ex.right", answer=EN(asked.choice_key(asked.answer))),
             ZH("ex.wrong", answer=ZH(asked.choice_key(asked.answer))),
             EN("ex.right", answer=EN(asked.choice_key(asked.answer)))]
    for student, verdict in zip(students, right, strict=True):
        student.get_by_text(verdict).wait_for()
    shot(teacher, "live-class-projector-reveal")
    shot(students[0], "live-class-phone-reveal")
    assert axe_violations(teacher) == [] and axe_violations(students[0]) == [] and axe_violations(students[1]) == []
    laptop.get_by_text("中文").click()  # the teacher's own screen, in Chinese: the revealed question too
    laptop.wait_for_function("() => document.documentElement.lang === 'zh-Hans'")
    laptop.get_by_role("figure", name=re.compile(re.escape(ZH("class.describe", answered=3, students=3,
                                                                choices="").split("。")[0]))).wait_for()
    laptop.wait_for_selector(IDLE, state="attached")
    laptop.wait_for_function(SETTLED)
    assert axe_violations(laptop) == []

    teacher.get_by_role("button", name=EN("ex.show_me")).click()
    want = {k: v for k, v in asked.show_me.items() if k in ("residual", "norm", "depth")}
    # Five pages of four kinds open the view at once, each kind's bundle built in the one server process
    # unless the build ahead, begun when the question was asked, got to it: on a loaded 2-core machine this
    # took over a minute.
    shown = [wait_for_view(page, timeout=180_000, **want) for page in (teacher, *students)]
    assert all(view == shown[0] for view in shown)  # every screen on the teacher's view
    for student in students:
        student.wait_for_selector(IDLE, state="attached")
        assert not student.query_selector(".instant-explorer input, .instant-explorer select")  # read-only

    for student, seen in zip(students, traffic, strict=True):
        origin = f"{urlsplit(link).scheme}://{urlsplit(link).netloc}"
        assert [url for url in seen["requests"] if not url.startswith((origin, "data:", "blob:"))] == []
        assert key not in student.content()
        frames = [f if isinstance(f, bytes) else f.encode() for f in seen["frames"]]
        assert frames and not any(key.encode() in frame for frame in frames)
        assert not student.js_errors
