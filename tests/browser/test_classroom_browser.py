"""Ready for the classroom (issue #14), in real Chromium: chart text a projector does not wash out."""

import re

import pytest

from benchmarks.local_server import PHONE_USER_AGENT
from support.browser import assert_healthy, open_app, shot
from ui.lessons import PRESETS
from ui.text import Text

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


TABLES = "[data-testid=stMarkdownContainer] table, .instant-numbers table"  # Markdown's, the Explorer's numbers
PAGE_FIT = f"""() => ({{page: document.scrollingElement.scrollWidth,
  main: document.querySelector('[data-testid=stMain]').scrollWidth, width: innerWidth,
  tables: [...document.querySelectorAll('{TABLES}')].map(t => Math.round(t.getBoundingClientRect().right))}})"""


@pytest.mark.parametrize("path", ["/", "/case", "/lab"])
@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
def test_on_a_phone_tables_stay_on_the_screen(new_page, app_url, path, lang, locale):
    """At 390 px a table scrolls inside its own box: nothing pushes the page sideways, and no cell
    breaks a vector or a Chinese word over two lines. The Explorer says where its controls are."""
    page = new_page(width=390, height=844, locale=locale)
    open_app(page, f"{app_url}{path}?lang={lang}", charts=path != "/lab")
    page.wait_for_selector(TABLES)
    assert_healthy(page)
    fit = page.evaluate(PAGE_FIT)
    assert fit["page"] <= fit["width"] and fit["main"] <= fit["width"], fit
    assert all(right <= fit["width"] for right in fit["tables"]), fit
    cells = TABLES.replace(" table", " td")
    wrapped = page.evaluate(f"""() => [...document.querySelectorAll('{cells}')]
      .filter(td => td.getClientRects().length && td.getBoundingClientRect().height > 2.2 * parseFloat(
        getComputedStyle(td).lineHeight || 20)).map(td => td.textContent)""")
    assert wrapped == []
    hint = page.get_by_text(Text(lang)("explorer.phone_hint").split("**")[-1].strip()[:12])
    assert (hint.count() > 0 and hint.first.is_visible()) == (path == "/")
    shot(page, f"classroom-phone{re.sub(r'[^a-z0-9]+', '-', path)}-{lang}")


@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
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


PLOT_WIDTHS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd =>
  Math.round(gd.querySelector('.nsewdrag').getBoundingClientRect().width))"""


@pytest.mark.parametrize("width,height,projector", [(1280, 720, False), (1024, 768, False), (1024, 768, True)])
def test_the_explorers_planes_are_wide_enough_to_read(new_page, app_url, width, height, projector):
    """Side by side in a 1024 px window with the sidebar open, the depth plane was 50 px wide and
    its names lay on each other: where two columns are too narrow the figures stack, so every plot
    plane is at least 200 px wide."""
    page = new_page(width=width, height=height)
    open_app(page, f"{app_url}/?norm=false{'&projector=true' if projector else ''}")
    assert_healthy(page)
    widths = page.evaluate(PLOT_WIDTHS)[:2]  # the block and depth planes (the readouts follow)
    assert min(widths) >= 200, widths
    shot(page, f"classroom-plane-widths-{width}{'-projector' if projector else ''}")


CHART_TEXT_BOXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd =>
  [...gd.querySelectorAll('.gtitle, .annotation-text')].filter(el => el.textContent.trim())
    .map(el => { const b = el.getBoundingClientRect();
                 return [el.textContent.trim(), b.left, b.top, b.right, b.bottom]; }))"""


@pytest.mark.parametrize("path", ["/walk?step=8", "/?depth=24"])
@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
def test_projector_chart_titles_do_not_overlap(new_page, app_url, path, lang, locale):
    """The readouts' six panel titles and the figure's title never print over each other at
    projector size, even in the tour's narrow column."""
    page = new_page(width=1280, height=720, locale=locale)
    open_app(page, f"{app_url}{path}&lang={lang}&projector=true")
    assert_healthy(page)
    for boxes in page.evaluate(CHART_TEXT_BOXES):
        for i, (a, *box_a) in enumerate(boxes):
            for b, *box_b in boxes[i + 1:]:
                apart = (box_a[2] <= box_b[0] + 1 or box_b[2] <= box_a[0] + 1 or box_a[3] <= box_b[1] + 1
                         or box_b[3] <= box_a[1] + 1)
                assert apart, (a, b)
