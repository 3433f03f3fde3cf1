"""The Real model page in a real headless Chromium: switching the residual off in every block turns
the collapse readout and the verdict to collapse (the chart drawn is the engine's numbers), a typed
sentence is run as plain text, and nothing is fetched from outside the app's origin."""

import pytest

from blockstab.ablations import INCIDENT, Ablation, compare
from blockstab.pretrained import load_model
from support.browser import (
    assert_healthy,
    chart,
    open_app,
    runs,
    shot,
    verdict_text,
    wait_for_chart_change,
    wait_for_rerun,
)
from support.text import says
from ui.text import Text

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def model():
    return load_model()


# The server runs the model in float32 on one BLAS thread, this process on BLAS's default count: a
# float32 sum taken in another order differs by ~1e-8 (seen: 1.5e-8), while the lines this test
# tells apart differ by more than 0.1.
SUMMATION_ORDER = 1e-6


def collapse_line(page) -> list[float]:
    """The 'switched off' line of the first panel (mean pairwise cosine), as drawn."""
    t = Text("en")
    return next(trace["y"] for trace in chart(page, 0) if trace["name"] == t("real.ablated"))


def test_residual_off_everywhere_collapses_the_tokens_in_the_browser(page, app_url, model):
    elsewhere = []
    page.on("request", lambda r: None if r.url.startswith((app_url, "data:", "blob:")) else elsewhere.append(r.url))
    t = Text("en")
    open_app(page, app_url + "/real?lang=en")
    assert_healthy(page)
    assert says(verdict_text(page).splitlines()[0], "en", "real.verdict.intact")
    before = chart(page, 0)
    assert {trace["name"] for trace in before} == {t("real.intact")}  # nothing switched off yet
    n = runs(page)
    page.locator(".st-key-real_residual").get_by_text(t("option.real_residual.all"), exact=True).click()
    wait_for_rerun(page, n)
    wait_for_chart_change(page, 0, before)
    page.wait_for_function("() => location.search.includes('real_residual=all')")
    assert_healthy(page)
    assert says(verdict_text(page).splitlines()[0], "en", "real.verdict.collapse"), verdict_text(page)
    expected = compare(model, INCIDENT, Ablation(residual="all")).ablated.pairwise_cosine
    assert collapse_line(page) == pytest.approx(list(expected), abs=SUMMATION_ORDER)
    assert min(collapse_line(page)[4:]) > 0.999
    shot(page, "real-residual-off-en")

    typed = "回滚 🚀 **done** [x](http://example.invalid)"
    before, n = chart(page, 0), runs(page)
    box = page.locator(".st-key-real_text input")
    box.fill(typed)
    box.press("Enter")
    wait_for_rerun(page, n)
    wait_for_chart_change(page, 0, before)
    assert_healthy(page)
    page.wait_for_function("() => location.search.includes('real_text=')")
    shown = page.evaluate("() => document.body.innerText.replaceAll('\\u2060', '')")
    assert " ".join(model.tokens(typed)) in shown  # the tokens as read, shown as plain text
    assert collapse_line(page) == pytest.approx(
        list(compare(model, typed, Ablation(residual="all")).ablated.pairwise_cosine), abs=SUMMATION_ORDER)
    assert page.locator("a[href*='example.invalid']").count() == 0
    assert elsewhere == []
