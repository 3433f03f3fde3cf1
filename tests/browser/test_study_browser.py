"""The lesson for one person (``/study``, issue #61) in real Chromium: on a phone (390 px), the tour's steps by
Previous and Next (the step in the address bar, said in the live region), the Explorer's switch and sentences
change its charts and its link, the link copied reopens the same view, an exercise is predicted, revealed and
shown in the Explorer, and the other language keeps the view; on a laptop (1280 px), the Explorer and the tour.
No Streamlit session (no WebSocket), no JavaScript error, axe-core finds nothing. The phone's test runs in both
languages on every run, the laptop's in one (both with ``--full-matrix``, ``support.matrix.locales``). Few loads: each
test opens the page once or three times and waits on the page's own state, never for a time."""

import json
import re

import pytest

from support.browser import axe_violations, shot
from support.matrix import LOCALES, locales
from testbed.local_server import PHONE_USER_AGENT
from ui.text import LANG_TAGS, Text

pytestmark = pytest.mark.browser

TOUR_DRAWN = "n => document.querySelector('section[data-part=tour]')?.dataset.drawn === String(n)"
EXPLORER_DRAWN = """view => { const drawn = document.querySelector('.instant-explorer')?.dataset.drawn;
  return !!drawn && Object.entries(view).every(([key, value]) => JSON.parse(drawn)[key] === value); }"""
DEPTH_CHART = "() => document.querySelector('.instant-place-depth .js-plotly-plot').data.map(trace => trace.y)"


def opened(new_page, url: str, width: int, locale: str, phone: bool = True):
    """A new tab on ``url``, its WebSockets counted (a Streamlit session would open one)."""
    page = new_page(width=width, height=844 if phone else 800, locale=locale,
                    user_agent=PHONE_USER_AGENT if phone else None)
    page.sockets = []
    page.on("websocket", lambda socket: page.sockets.append(socket.url))
    page.goto(url)
    return page


def explorer_view(page, **view) -> None:
    page.wait_for_function(EXPLORER_DRAWN, arg=view)


def assert_clean(page) -> None:
    assert page.js_errors == [] and page.sockets == []
    assert axe_violations(page) == []


@pytest.mark.parametrize("lang,locale", LOCALES)  # (the phone: both languages on every run, #61)
def test_a_phone_walks_the_tour_switches_the_explorer_does_an_exercise_and_a_copied_link_reopens_the_view(
        new_page, app_url, lang, locale):
    t, other = Text(lang), "zh" if lang == "en" else "en"
    page = opened(new_page, f"{app_url}/study?lang={lang}&step=7", 390, locale)
    page.wait_for_function(TOUR_DRAWN, arg=7)
    assert page.evaluate("() => document.documentElement.lang") == LANG_TAGS[lang]
    assert page.locator("section[data-part=tour] figure").get_attribute("aria-label")  # the figure in words
    page.get_by_role("button", name=t("tour.next")).click()
    page.wait_for_function(TOUR_DRAWN, arg=8)
    assert page.get_by_role("button", name=t("tour.next")).is_disabled()
    assert page.evaluate("() => document.activeElement.textContent") == t("tour.previous")  # focus kept on a button
    for step in (7, 6):
        page.keyboard.press("Enter")  # (Previous, focused)
        page.wait_for_function(TOUR_DRAWN, arg=step)
    assert re.search(r"[?&]step=6(&|$)", page.url)
    assert page.locator("#announced").text_content() == (
        t("tour.indicator", step=6, total=8) + ": " + page.locator("section[data-part=tour] h2").text_content())
    shot(page, f"study-tour-phone-{lang}")
    assert_clean(page)

    page.get_by_role("link", name=t("study.explorer")).click()
    explorer_view(page, residual=True)
    before = page.evaluate(DEPTH_CHART)
    page.get_by_role("switch", name=t("control.residual")).click()
    explorer_view(page, residual=False)
    assert page.evaluate(DEPTH_CHART) != before  # the switch changed the chart
    page.get_by_label(t("option.scenario.confirmed")).check()
    page.wait_for_function("() => document.querySelector('.instant-explorer').dataset.bundle?.includes('-confirmed-')")
    explorer_view(page, residual=False)
    page.wait_for_url(re.compile(r"part=explorer.*scenario=confirmed&residual=false"))
    shot(page, f"study-explorer-phone-{lang}")
    assert_clean(page)

    page.get_by_role("link", name=t("study.exercises")).click()
    page.wait_for_selector("section[data-part=exercises][data-ready]")
    question = page.locator("[data-question=size_swings]")
    question.get_by_label(t("device.normalization")).check()
    question.get_by_role("button", name=t("study.reveal")).click()
    assert question.locator(".verdict").text_content() == t("ex.right", answer=t("device.normalization"))
    assert page.locator("#announced").text_content() == t("ex.right", answer=t("device.normalization"))
    shot(page, f"study-exercises-phone-{lang}")
    assert_clean(page)
    question.get_by_role("button", name=t("ex.show_me")).click()  # norm off, 100 blocks, both sentences
    explorer_view(page, norm=False, depth=100, residual=True)
    assert page.get_by_role("switch", name=t("control.norm")).is_checked() is False
    assert page.get_by_label(t("option.scenario.both")).is_checked()
    page.wait_for_url(re.compile(r"part=explorer&step=6&norm=false&depth=100$"))

    copied = opened(new_page, page.url, 390, locale)  # the link, copied to another tab
    explorer_view(copied, norm=False, depth=100, residual=True)
    assert copied.get_by_role("switch", name=t("control.norm")).is_checked() is False
    assert copied.get_by_role("slider", name=t("control.depth")).input_value() == "100"
    copied.get_by_role("link", name=t(f"lang.{other}")).click()  # the other language, the same view
    copied.wait_for_function(f"() => document.documentElement.lang === '{LANG_TAGS[other]}'")
    explorer_view(copied, norm=False, depth=100)
    assert json.loads(copied.locator("#study-data").text_content())["step"] == 6
    assert copied.js_errors == [] and copied.sockets == []


@pytest.mark.parametrize("lang,locale", locales(1))
def test_a_laptop_opens_the_explorer_and_the_tour_with_nothing_for_axe(new_page, app_url, lang, locale):
    t = Text(lang)
    page = opened(new_page, f"{app_url}/study?lang={lang}&part=explorer&placement=pre&depth=100", 1280, locale,
                  phone=False)
    explorer_view(page, placement="pre", depth=100)
    assert page.locator(".instant-explorer").get_attribute("data-bundle").endswith(f"/bundle/computer-both-{lang}/")
    shot(page, f"study-explorer-laptop-{lang}")
    assert_clean(page)
    page.get_by_role("link", name=t("study.tour")).click()
    page.wait_for_function(TOUR_DRAWN, arg=1)
    page.get_by_role("button", name=t("tour.next")).focus()
    page.keyboard.press("Enter")
    page.wait_for_function(TOUR_DRAWN, arg=2)
    assert page.url.endswith(f"/study?lang={lang}&step=2&placement=pre&depth=100")
    shot(page, f"study-tour-laptop-{lang}")
    assert_clean(page)
