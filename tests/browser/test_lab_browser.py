"""The Depth lab in a real headless Chromium: the four-panel chart, a paper preset's badges, a depth
change redrawing the chart, and a Chinese deep link to a preset.

Synchronised as tests/browser/test_browser.py (script state and chart data, never sleeps), with the suite's
usual bound: a preset draws its shipped result without computing, and the stacks computed here are small
(the default stack, four runs of 48 blocks, takes two seconds of one core).
"""

import pytest

from blockstab.lab import LabSetup, compared_setups
from blockstab.papers import FIGURE_2_CONFIGS, dong_figure_2
from support.browser import (
    ALL_DRAWN,
    CHART_NAMES,
    EXCEPTION,
    IDLE,
    READY,
    SETTLED,
    assert_healthy,
    chart,
    plain,
    runs,
    shot,
    wait_for_chart_change,
    wait_for_rerun,
)
from support.text import says
from ui.lab_views import PANELS, variant_label
from ui.text import Text
from ui.views.describe import curve_text

pytestmark = pytest.mark.browser

PANEL_TITLES = "(i) => [...document.querySelectorAll('.js-plotly-plot')[i].layout.annotations].map(a => a.text)"
SUBPLOTS = "(i) => Object.keys(document.querySelectorAll('.js-plotly-plot')[i]._fullLayout._plots).sort()"
TABLE = "[data-testid=stMarkdownContainer] table"
SUCCESS = "[data-testid=stAlertContentSuccess] [data-testid=stMarkdownContainer]"
ERROR = "[data-testid=stAlertContentError] [data-testid=stMarkdownContainer]"
PROGRESS = "[data-testid=stProgress]"


def open_lab(page, url: str) -> None:
    """Navigate, wait until the lab has computed (script idle) and everything is drawn."""
    page.goto(url)
    page.wait_for_selector(READY, state="attached")
    page.wait_for_selector(IDLE, state="attached")
    if not page.query_selector(EXCEPTION):
        page.wait_for_function(ALL_DRAWN)
    page.wait_for_function(SETTLED)


def test_the_lab_draws_four_panels_for_the_default_stack(new_page, app_url):
    t = Text("en")
    page = new_page(width=1400, height=1900)  # tall enough for the legend and the table in the screenshot
    open_lab(page, app_url + "/lab?lang=en")
    shot(page, "lab-default-en")
    assert_healthy(page)
    assert page.inner_text("h1").strip() == t("lab.title")
    assert page.locator(".js-plotly-plot").count() == 1
    titles = [plain(text) for text in page.evaluate(PANEL_TITLES, 0)]
    assert titles[:4] == [t(f"lab.panel.{p}") for p in PANELS]
    assert page.evaluate(SUBPLOTS, 0) == ["x2y2", "x3y3", "x4y4", "xy"]
    drawn = chart(page, 0)
    variants = compared_setups(LabSetup(), "stabilisers")
    assert len(drawn) == len(variants) * len(PANELS)
    assert {d["name"] for d in drawn} == {variant_label(v, t) for v in variants}
    assert {len(d["x"]) for d in drawn} == {LabSetup().depth, LabSetup().depth + 1}
    assert page.locator(f"{TABLE} tbody tr").count() == len(variants)
    (name,) = page.evaluate(CHART_NAMES)  # the chart described: each panel, each run (numbers: test_lab_views.py)
    assert all(t(f"lab.panel.{p}") in name for p in PANELS) and all(variant_label(v, t) in name for v in variants)


def test_choosing_a_paper_shows_its_badges_its_figure_and_back(page, app_url):
    """Dong et al.: the four claims reproduced, Figure 2 not (attention + skip is 0.117 off at
    layer 1), and our curves drawn beside the paper's."""
    t = Text("en")
    open_lab(page, app_url + "/lab?lang=en&lab_tokens=8&lab_depth=6")
    n = runs(page)
    page.get_by_text(t("option.lab_show.dong"), exact=True).click()
    wait_for_rerun(page, n)
    page.wait_for_function("() => location.search.includes('lab_show=dong')")
    page.wait_for_selector(ERROR, state="attached")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length == 2")
    page.wait_for_function(ALL_DRAWN)
    shot(page, "lab-dong-en")
    assert_healthy(page)
    assert page.inner_text("h3").strip() == t("paper.dong.title")
    assert says(page.inner_text(ERROR), "en", "lab.some_fail")
    assert page.get_by_text(t("lab.shipped"), exact=True).is_visible()  # drawn at once, from the shipped result
    assert page.get_by_role("button", name=t("lab.run_again")).is_visible()
    assert page.locator(PROGRESS).count() == 0
    badges = page.locator(f"{TABLE} tbody tr td:last-child").all_inner_texts()
    assert [b.strip() for b in badges] == [t("lab.pass")] * 4 + [t("lab.fail")]
    assert "✓" in t("lab.pass")
    published = dong_figure_2()
    drawn = chart(page, 0)  # the comparison comes first, under the findings; then the first seed's curves
    assert len(drawn) == 6 and len(chart(page, 1)) == 6 * 3
    for ours, paper, variant in zip(drawn[::2], drawn[1::2], FIGURE_2_CONFIGS, strict=True):
        label = variant_label(f"{variant}.bert", t)
        assert ours["name"] == t("lab.published.ours", run=label, seeds=32) and len(ours["y"]) == 13
        assert paper["name"] == t("lab.published.paper", run=label)
        assert paper["y"] == published[FIGURE_2_CONFIGS[variant]].tolist()
        assert t("describe.published", run=label, ours=curve_text(ours["y"], 0, t, "layer"),
                 paper=curve_text(paper["y"], 0, t, "layer")) in page.evaluate(CHART_NAMES)[0]
    # Back to the user's stack: the stack's settings from the link are still there.
    n = runs(page)
    page.get_by_text(t("option.lab_show.stack"), exact=True).click()
    wait_for_rerun(page, n)
    page.wait_for_function(ALL_DRAWN)
    shot(page, "lab-dong-back-en")
    page.wait_for_function("() => location.search.includes('lab_depth=6')")
    assert_healthy(page)
    assert {len(d["x"]) for d in chart(page, 0)} == {6, 7}


GRADIENT_AXIS = "() => document.querySelectorAll('.js-plotly-plot')[0]._fullLayout.yaxis4.range"


def test_gradients_far_below_where_squares_underflow_are_drawn(page, app_url):
    """Issue #13's 2-wide Post-LN stack: block 1's gradient, 7.43 × 10⁻¹⁷¹, is a point on the log
    panel (its axis reaches below 10⁻¹⁷⁰) and a readable number in the table."""
    t = Text("en")
    open_lab(page, app_url + "/lab?lang=en&lab_width=2&lab_tokens=2&lab_heads=1&lab_depth=18&lab_init=bert"
                             "&lab_seed=0&lab_placement=post&lab_norm=layernorm&lab_compare=none")
    shot(page, "lab-tiny-gradients-en")
    assert_healthy(page)
    gradient = chart(page, 0)[PANELS.index("gradient_norm")]
    assert len(gradient["y"]) == 18 and all(isinstance(v, float) and v > 0 for v in gradient["y"])
    assert gradient["y"][0] == pytest.approx(7.43095e-171, rel=1e-5)
    low, high = page.evaluate(GRADIENT_AXIS)
    assert low < -170.1 and high > 0  # log axis: powers of ten
    assert "5.51 × 10⁻¹⁷¹" in page.locator(f"{TABLE} tbody").inner_text()
    assert t("lab.col.gradient_ratio") in page.locator(f"{TABLE} thead").inner_text()


def test_changing_the_depth_redraws_the_chart(page, app_url):
    t = Text("en")
    open_lab(page, app_url + "/lab?lang=en&lab_width=16&lab_tokens=8&lab_depth=6&lab_compare=none")
    before = chart(page, 0)
    assert {len(d["x"]) for d in before} == {6, 7}
    n = runs(page)
    slider = page.get_by_role("slider", name=t("control.lab_depth"))
    slider.focus()
    slider.press("ArrowRight")
    wait_for_rerun(page, n)
    after = wait_for_chart_change(page, 0, before)
    page.wait_for_function("() => location.search.includes('lab_depth=7')")
    assert_healthy(page)
    assert {len(d["x"]) for d in after} == {7, 8}
    # Same seed, one more block: the forward panels agree up to block 6 (gradients flow from the new end).
    assert [d["y"][:7] for d in after[:3]] == [d["y"] for d in before[:3]]
    shot(page, "lab-depth-7-en")


def test_a_chinese_link_to_a_preset_is_in_chinese(page, app_url):
    zh = Text("zh")
    open_lab(page, app_url + "/lab?lab_show=xiong&lang=zh")
    shot(page, "lab-xiong-zh")
    assert_healthy(page)
    assert page.inner_text("h1").strip() == zh("lab.title")
    assert page.inner_text("h3").strip() == zh("paper.xiong.title")
    header = page.locator(f"{TABLE} thead").inner_text()
    assert zh("lab.col.published") in header and zh("lab.col.ours") in header
    assert page.locator(f"{TABLE} tbody tr").count() == 4
    assert page.get_by_text(zh("option.lab_show.xiong"), exact=True).is_visible()


def test_changing_a_control_stops_a_long_run(page, app_url):
    """A long run shows a progress bar; choosing something else stops it, so it was never cached:
    coming back starts it again (a finished run would be drawn at once from the cache)."""
    t = Text("en")
    page.goto(app_url + "/lab?lang=en&lab_width=512&lab_tokens=128&lab_depth=60&lab_compare=none&lab_seed=7")
    page.wait_for_selector(PROGRESS)
    n = runs(page)
    page.get_by_text(t("option.lab_show.geometry"), exact=True).click()
    wait_for_rerun(page, n)
    page.wait_for_selector(f"h3:has-text('{t('paper.geometry.title')}')")
    page.wait_for_selector(IDLE, state="attached")
    assert page.locator(PROGRESS).count() == 0
    page.get_by_text(t("option.lab_show.stack"), exact=True).click()
    page.wait_for_selector(PROGRESS)  # computing again from the start: the stopped run left nothing behind
    assert_healthy(page)
    n = runs(page)  # stop it again, so no run is left computing on the shared server after the test
    page.get_by_text(t("option.lab_show.geometry"), exact=True).click()
    wait_for_rerun(page, n)
