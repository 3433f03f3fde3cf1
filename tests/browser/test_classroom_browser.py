"""Ready for the classroom (issue #14), in real Chromium: the Depth lab's charts at AA contrast, a clicker
steps the tour, a teacher's links open their views, projector mode stays on from a lesson, a phone's
Explorer has its switches above its figures.
(Chart text at AA contrast, titles apart, tables on a phone's screen and planes wide enough to read are
checked in every page load of tests/browser/test_layout_browser.py.)"""

import re

import pytest

from support.browser import CHART_TEXT, assert_healthy, contrast_on_white, open_app, shot
from support.matrix import locales
from testbed.local_server import PHONE_USER_AGENT
from ui.lessons import PRESETS
from ui.text import Text

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang,locale", locales(0))
def test_the_depth_labs_paper_charts_meet_wcag_aa_on_a_projector(new_page, app_url, lang, locale):
    """(Every other page's charts: in the layout test's loads, which open the lab with no chart.)"""
    page = new_page(width=1280, height=720, locale=locale)
    open_app(page, f"{app_url}/lab?lab_show=dong&lang={lang}&projector=true")
    assert_healthy(page)
    texts = page.evaluate(CHART_TEXT)
    assert texts
    assert [(text, fill) for text, fill in texts if contrast_on_white(fill) < 4.5] == []

@pytest.mark.parametrize("lang,locale", locales(1))
def test_a_presentation_clicker_steps_the_tour(new_page, app_url, lang, locale):
    """ArrowRight / PageDown go forward, ArrowLeft / PageUp back (a clicker sends those keys)."""
    page = new_page(width=1280, height=720, locale=locale)
    open_app(page, f"{app_url}/walk?lang={lang}&step=1&projector=true")
    assert_healthy(page)
    for key, step in (("ArrowRight", 2), ("PageDown", 3), ("PageDown", 4), ("ArrowLeft", 3), ("PageUp", 2)):
        page.locator("h1").click()  # focus on the page, as after a click on the slide
        page.keyboard.press(key)
        page.wait_for_url(re.compile(rf"[?&]step={step}(&|$)"))
        page.wait_for_function(f"() => document.querySelector('[data-testid=stProgress]')"
                               f"?.textContent.includes('{step}')")
    assert page.locator(".st-key-tour_clicker").is_hidden()  # the clicker's twins stay out of sight
    shot(page, f"classroom-clicker-{lang}")


def test_teachers_links_are_full_urls_that_open_the_promised_view(new_page, app_url):
    """Every ready-made link on the teachers' page is the whole address, as this browser reaches
    the app, and opening it shows the view its preset names (the switches read back from the page)."""
    page = new_page(width=1280, height=900)
    open_app(page, f"{app_url}/teach?lang=en", charts=False)
    assert_healthy(page)
    links = [code.inner_text().strip() for code in page.locator("[data-testid=stCode] code").all()]
    explorer_links = [link for link in links if "/explore?" in link]
    assert len(explorer_links) == len(PRESETS) + 1  # one per preset, one that hides controls
    assert all(link.startswith(app_url + "/explore?") for link in explorer_links)
    for preset, link in zip(PRESETS, explorer_links, strict=False):
        view = new_page(width=1280, height=900)
        open_app(view, link)
        assert_healthy(view)
        for key in ("residual", "norm"):
            switch = view.get_by_role("switch", name=Text("en")(f"control.{key}"))
            assert switch.is_checked() == preset.view.get(key, True), (preset.id, key)
        assert view.locator("[role=dialog]").count() == 0
    hidden = next(link for link in explorer_links if "show=" in link)
    page.goto(hidden)
    page.wait_for_selector(".js-plotly-plot")
    assert page.get_by_role("switch", name=Text("en")("control.residual")).count() == 1
    assert page.get_by_text(Text("en")("control.placement")).count() == 0  # not in the default show= list


def test_projector_mode_stays_on_when_a_lesson_opens_the_explorer(new_page, app_url):
    """'Open this in the Explorer' from the tour in projector mode: the Explorer opens in projector
    mode too, sidebar closed, and no chart toolbar covers a title."""
    page = new_page(width=1280, height=720)
    open_app(page, f"{app_url}/walk?lang=en&step=6&projector=true")
    page.get_by_role("button", name=Text("en")("tour.open_in_explorer")).click()
    page.wait_for_url(lambda url: "/walk" not in url)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 3")
    assert_healthy(page)
    assert "projector=true" in page.url
    box = page.locator("[data-testid=stSidebar]").bounding_box()
    assert box is None or box["x"] + box["width"] <= 1  # the sidebar stays closed
    assert page.locator(".modebar-container").first.is_hidden()
    shot(page, "classroom-projector-stays")


@pytest.mark.parametrize("lang,locale", locales(0))
def test_on_a_phone_the_explorers_switches_are_above_the_figures(new_page, app_url, lang, locale):
    """A phone's browser gets the sentence, both switches and the depth above the first chart,
    without opening the sidebar; the hint says the block's and stage's are under the first figure.
    Flipping a switch works."""
    t = Text(lang)
    page = new_page(width=390, height=844, locale=locale, user_agent=PHONE_USER_AGENT)
    open_app(page, f"{app_url}/?lang={lang}")
    main = page.locator("[data-testid=stMain]")
    chart_top = page.locator(".js-plotly-plot").first.bounding_box()["y"]
    for key in ("scenario", "residual", "norm", "depth"):
        control = main.locator(f".st-key-{key}, .instant-controls [data-key={key}]").first
        assert control.is_visible(), key
        assert control.bounding_box()["y"] < chart_top, key
    assert page.locator("[data-testid=stSidebar] .st-key-residual").count() == 0
    assert main.get_by_text(t("explorer.phone_hint").split("**")[-1].strip()[:12]).is_visible()
    first_chart = page.locator(".js-plotly-plot").first.bounding_box()
    for key in ("block", "focus"):  # where the hint says: under the first figure
        control = main.locator(f".instant-block-controls [data-key={key}]")
        assert control.bounding_box()["y"] > first_chart["y"] + first_chart["height"], key
    label = main.get_by_text(t("control.residual"), exact=True)
    label.evaluate("el => el.scrollIntoView({block: 'center'})")  # not under the sticky header
    label.click()
    page.wait_for_function("() => location.search.includes('residual=false')")
    assert_healthy(page)
    shot(page, f"classroom-phone-controls-{lang}")
