"""Ready for the classroom (issue #14), in real Chromium: chart text a projector does not wash out."""

import re

import pytest
from test_browser import assert_healthy, open_app, shot

pytestmark = pytest.mark.browser

# Every visible piece of SVG text in the page's charts, with the fill the browser computed.
CHART_TEXT = """() => [...document.querySelectorAll('.js-plotly-plot svg text')]
  .filter(el => el.textContent.trim() && el.getBBox().width > 0)
  .map(el => [el.textContent.trim().slice(0, 30), getComputedStyle(el).fill])"""


def contrast_on_white(rgb: str) -> float:
    channels = [float(v) / 255 for v in re.findall(r"[\d.]+", rgb)[:3]]
    linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)


@pytest.mark.parametrize("path", ["/", "/?residual=false&norm=false", "/walk?step=3", "/case", "/geometry",
                                  "/lab?lab_show=dong"])
@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
def test_projector_chart_text_meets_wcag_aa(new_page, app_url, path, lang, locale):
    page = new_page(width=1280, height=720, locale=locale)
    joiner = "&" if "?" in path else "?"
    open_app(page, f"{app_url}{path}{joiner}lang={lang}&projector=true")
    assert_healthy(page)
    texts = page.evaluate(CHART_TEXT)
    assert texts
    low = [(text, fill, round(contrast_on_white(fill), 2)) for text, fill in texts if contrast_on_white(fill) < 4.5]
    assert low == []
    shot(page, f"classroom-contrast{re.sub(r'[^a-z0-9]+', '-', path)}-{lang}")


@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
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
