"""A keyboard-only walk of every page in real Chromium (issue #35): from the top of the page, Tab
reaches every control, in the document's order and past the landmarks a reader expects in that order,
never trapped, each with a focus ring a sighted user sees (at least 2 px, 3:1 against what is behind
it, in the window); and each kind of control works with the keyboard alone (Space, Enter, arrows).
The live class too: a teacher starts one, a student joins and answers, the teacher reveals and ends it,
all by keyboard. The Explorer's own controls are driven by keyboard in test_instant_browser.py."""

import re

import pytest
from playwright.sync_api import expect

from support.browser import IDLE, open_app, wait_for_view
from support.keyboard import Stop, tab_to, tab_walk, unreached
from testbed.local_server import PHONE_USER_AGENT
from ui.lessons import QUESTIONS
from ui.text import Text

pytestmark = pytest.mark.browser
EN, ZH = Text("en"), Text("zh")


def walk(page, *landmarks: str) -> list[Stop]:
    """Tab from the top of the page: every control reached, in the document's order, each with a ring
    that is seen, and ``landmarks`` (parts of stops' names) passed in this order."""
    stops = tab_walk(page)
    assert [problem for stop in stops if (problem := stop.ring_problem())] == []
    assert unreached(page, stops) == []
    order = [stop.index for stop in stops if stop.index >= 0]  # (-1: shown once focus came near, a copy button)
    order = [i for n, i in enumerate(order) if n == 0 or i != order[n - 1]]  # (a table's cells: one canvas)
    assert order == sorted(set(order)), order
    names = iter(stop.name for stop in stops)
    assert [mark for mark in landmarks if not any(mark in name for name in names)] == [], [s.name for s in stops]
    return stops


def settled(page) -> None:
    page.wait_for_selector(IDLE, state="attached")


def test_the_sidebar_the_help_and_a_charts_toolbar_by_keyboard(page, app_url):
    """The chrome every page has (page links, language, projector mode, the keyboard help), from the
    Explorer; a chart's toolbar zooms and resets by Enter."""
    open_app(page, f"{app_url}/?lang=en")
    walk(page, EN("page.explorer"), EN("page.tour"), EN("lang.en"), EN("control.projector"), EN("keys.title"),
         EN("keys.skip"), EN("control.residual"), EN("control.norm"), EN("control.depth"), EN("plotly.zoom_in"),
         EN("describe.show"), EN("control.block"), EN("plotly.download"), EN("download.csv"),
         EN("download.take_home"))
    tab_to(page, EN("keys.title"))
    page.keyboard.press("Enter")
    page.get_by_text(re.compile("Shift\\+Tab")).wait_for()  # the help unfolded
    x_width = """() => { const [low, high] = document.querySelector('.instant-place-block .js-plotly-plot')
      ._fullLayout.xaxis.range; return high - low; }"""
    drawn = page.evaluate(x_width)
    tab_to(page, EN("plotly.zoom_in"))  # the block view's
    page.keyboard.press("Enter")
    page.wait_for_function(f"was => ({x_width})() < was * 0.6", arg=drawn)  # twice as close
    tab_to(page, EN("plotly.reset_axes"))
    page.keyboard.press("Space")
    page.wait_for_function(f"was => ({x_width})() > was * 0.9", arg=drawn)  # back (its aspect kept)
    tab_to(page, EN("lang.en"))
    page.keyboard.press("ArrowRight")  # the next language
    page.wait_for_function("() => document.documentElement.lang === 'zh-Hans' && location.search.includes('lang=zh')")
    page.wait_for_selector(f"text={ZH('explorer.title')}")
    settled(page)
    tab_to(page, ZH("page.tour"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/walk\?"))
    page.wait_for_selector(f"text={ZH('tour.title')}")
    settled(page)
    tab_to(page, ZH("control.projector"))
    page.keyboard.press("Space")
    page.wait_for_function("() => location.search.includes('projector=true')")
    # The URL changes before the run that turns projector mode on; that run closes the sidebar.
    page.wait_for_selector("[data-testid=stSidebar][data-collapsed=true]", state="attached")
    settled(page)
    walk(page, ZH("tour.next"))  # the sidebar, closed in projector mode, is out of the Tab order


def test_the_tour_by_keyboard(page, app_url):
    open_app(page, f"{app_url}/walk?step=1&lang=en")
    walk(page, EN("page.tour"), EN("tour.next"), EN("tour.open_in_explorer"), EN("plotly.download"),
         EN("describe.show"))
    page.evaluate("() => document.querySelectorAll('.main-svg').forEach(svg => svg.drawnBefore = true)")
    tab_to(page, EN("tour.next"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"step=2"))
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .main-svg')]"
                           ".some(svg => !svg.drawnBefore)")  # the next step's chart, drawn anew
    settled(page)
    assert page.evaluate("() => [...document.querySelectorAll('.main-svg')]"
                         ".every(svg => svg.getAttribute('aria-hidden') === 'true')")  # its ticks unheard too
    tab_to(page, EN("tour.previous"))
    page.keyboard.press("Space")
    page.wait_for_url(re.compile(r"step=1"))
    settled(page)
    tab_to(page, EN("describe.show"))
    page.keyboard.press("Enter")
    page.get_by_text(re.compile(re.escape("before any block. “confirmed”"))).wait_for()
    tab_to(page, EN("tour.open_in_explorer"))
    page.keyboard.press("Enter")
    page.wait_for_selector(".instant-explorer[data-drawn]")


def test_the_worked_case_by_keyboard(page, app_url):
    open_app(page, f"{app_url}/case?lang=en")
    walk(page, EN("plotly.download"), EN("describe.show"), EN("tour.open_in_explorer"))
    tab_to(page, EN("tour.open_in_explorer"))
    page.keyboard.press("Enter")
    wait_for_view(page, depth=1, focus="attention_residual")


def test_the_exercises_by_keyboard(page, app_url):
    """A choice made with the arrows (Space on the first), the feedback shown, then "Show me"."""
    open_app(page, f"{app_url}/practice?lang=en", charts=False)
    first = QUESTIONS[0]
    choices = [EN(first.choice_key(choice)) for choice in first.choices]
    walk(page, EN("ex.reset"), choices[0], EN("check.demo"))
    tab_to(page, choices[0], exact=True)
    page.keyboard.press("Space")
    verdict = "ex.right" if first.choices[0] == first.answer else "ex.wrong"
    page.get_by_text(EN(verdict, answer=EN(first.choice_key(first.answer)))).wait_for()
    settled(page)
    tab_to(page, EN("ex.show_me"))
    page.keyboard.press("Enter")
    wait_for_view(page, **{k: v for k, v in first.show_me.items() if k in ("residual", "norm", "depth")})


def test_the_geometry_page_by_keyboard(page, app_url):
    open_app(page, f"{app_url}/geometry?lang=en")
    walk(page, EN("plotly.download"), EN("describe.show"), EN("geometry.back"))
    tab_to(page, EN("geometry.back"))
    page.keyboard.press("Enter")
    page.wait_for_selector(".instant-explorer[data-drawn]")


def test_your_own_example_by_keyboard(page, app_url):
    """A preset picked in the select box by typing its first letters and Enter, and loaded with Enter."""
    open_app(page, f"{app_url}/scenario?lang=en")
    walk(page, EN("editor.start_from"), EN("editor.load"), EN("editor.axis_1"), EN("plotly.download"),
         EN("describe.show"), EN("editor.use"), EN("editor.download"))
    tab_to(page, EN("editor.start_from"), exact=True)
    page.keyboard.type(EN("example.triage.name")[:7])  # the list opens on the options with these letters
    page.locator("[role=option][data-focused=true]", has_text=EN("example.triage.name")).wait_for()
    page.keyboard.press("Enter")
    settled(page)
    tab_to(page, EN("editor.load"))
    page.keyboard.press("Enter")
    axis = page.get_by_label(EN("editor.axis_1"))
    page.wait_for_function("axis => axis.value === 'symptom'", arg=axis.element_handle())
    settled(page)


def test_the_depth_lab_by_keyboard(page, app_url):
    """Its controls in the sidebar (sliders, radios, a switch); a paper chosen with the arrows."""
    open_app(page, f"{app_url}/lab?lang=en", charts=False)
    walk(page, EN("control.lab_compare"), EN("control.lab_width"), EN("control.lab_depth"),
         EN("control.lab_residual"), EN("control.lab_show"), EN("plotly.download"), EN("describe.show"))
    tab_to(page, EN("option.lab_show.stack"), exact=True)  # the chosen option of the radio group
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('lab_show=dong')")
    page.get_by_role("heading", name=EN("paper.dong.title")).wait_for()


def test_the_real_model_by_keyboard(page, app_url):
    open_app(page, f"{app_url}/real?lang=en")
    walk(page, EN("control.real_text"), EN("control.real_residual"), EN("control.real_norm"),
         EN("plotly.download"), EN("describe.show"), EN("real.download"))
    tab_to(page, EN("option.real_residual.on"), exact=True)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('real_residual=all')")
    settled(page)


def test_for_teachers_by_keyboard(page, app_url):
    """A control picked in the multiselect by typing and Enter; a preset opened with Enter."""
    open_app(page, f"{app_url}/teach?lang=en", charts=False)
    walk(page, EN("teach.live_start"), EN("teach.open"), EN("teach.hide_pick"), EN("paper.dong.title"))
    tab_to(page, EN("teach.hide_pick"))
    page.keyboard.type(EN("control.placement")[:8])
    page.keyboard.press("Enter")
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stCode] code')]"
                           ".some(code => code.innerText.includes('show=residual%2Cnorm%2Cdepth%2Cplacement'))")
    settled(page)
    tab_to(page, EN("teach.open"))
    page.keyboard.press("Enter")
    page.wait_for_selector(".instant-explorer[data-drawn]")


def test_a_live_class_by_keyboard(new_page, app_url):
    """A teacher starts a class, asks a question, reveals it and ends the class; a student joins by its
    code and answers; all by keyboard, and on each page Tab reaches every control with its ring seen."""
    teacher = new_page(1280, 720)
    open_app(teacher, f"{app_url}/class?lang=en", charts=False)
    walk(teacher, EN("class.start"))
    tab_to(teacher, EN("class.start"))
    teacher.keyboard.press("Enter")
    code = teacher.locator(".st-key-class_code strong").inner_text().strip()
    settled(teacher)
    walk(teacher, EN("class.how_to_join"), EN("class.activity.question"), EN("class.free"), EN("class.end"),
         EN("class.next_in_script"), EN("tour.next"), EN("class.resume"))

    student = new_page(390, 844, user_agent=PHONE_USER_AGENT)  # a phone, on the class's own light page
    student.goto(f"{app_url}/join?lang=en")
    walk(student, EN("lang.zh"), EN("join.code"), EN("join.join"))
    tab_to(student, EN("join.code"), exact=True)
    student.keyboard.type(code.lower())  # (read off the projector: any case)
    student.keyboard.press("Enter")
    student.get_by_text(EN("join.in_class", code=code)).wait_for()
    teacher.get_by_text(EN("class.one_student")).wait_for()

    tab_to(teacher, EN("class.activity.question"))
    teacher.keyboard.press("Enter")
    asked = QUESTIONS[0]
    choices = [EN(asked.choice_key(choice)) for choice in asked.choices]
    student.get_by_role("radio", name=choices[0]).wait_for()
    walk(student, EN("lang.zh"), choices[0])
    tab_to(student, choices[0], exact=True)
    student.keyboard.press("ArrowDown")  # a radio group: its arrows choose
    expect(student.get_by_role("radio", name=choices[1])).to_be_checked()
    teacher.get_by_role("heading", name=re.compile(re.escape(EN("class.answered", answered=1, students=1)))).wait_for()

    settled(teacher)
    walk(teacher, EN("class.question"), EN("class.ask"), EN("class.close"), EN("class.reveal"))
    tab_to(teacher, EN("class.reveal"))
    teacher.keyboard.press("Enter")
    verdict = "ex.right" if asked.choices[1] == asked.answer else "ex.wrong"
    student.get_by_text(EN(verdict, answer=EN(asked.choice_key(asked.answer)))).wait_for()

    settled(teacher)
    tab_to(teacher, EN("class.end"))
    teacher.keyboard.press("Enter")  # the popover opens: its one button next
    tab_to(teacher, EN("class.end_confirm"), from_here=True)
    teacher.keyboard.press("Enter")
    teacher.get_by_role("button", name=EN("class.new")).wait_for()  # the class's summary, then a new class
    expect(student.locator("#activity")).to_have_text(EN("class.not_seated"))
    settled(teacher)
    walk(teacher, EN("class.download"), EN("class.new"))


def test_a_ring_is_seen_at_3_to_1_only():
    """The walk's own measure: Streamlit's ring (its primary colour at half opacity) is too faint, the
    app's is not, a thin or faded one is not enough, nor one off the screen."""
    stop = Stop(index=0, tag="button", role="button", name="x", sidebar=False, colour="rgb(0, 114, 178)", width=3,
                background="rgb(255, 255, 255)", opacity=1, in_view=True)
    assert stop.ring_problem() is None and round(stop.ring_contrast(), 1) == 5.2
    assert Stop(**{**stop.__dict__, "colour": "rgba(0, 114, 178, 0.5)"}).ring_contrast() < 3
    for faint in ({"width": 1}, {"opacity": 0.2}, {"in_view": False}, {"colour": None},
                  {"background": "rgb(0, 114, 178)"}):
        assert Stop(**{**stop.__dict__, **faint}).ring_problem() is not None, faint
