"""What a student reads in the Explorer is what the engine computed (issue #12), in real Chromium:
the verdict counts the distinct tokens and says whether the action token kept its direction; the
switches rename the stages they change; a view with both stabilisers off still draws its readouts;
no number anywhere on the page is printed as 1.3e+40."""

import re

import numpy as np
import pytest

from blockstab.lesson import ACTION_TOKEN
from blockstab.readouts import angle_degrees, readouts, token_groups
from support.browser import assert_healthy, depth_chart_index, explorer_verdict, open_app, set_depth, shot
from support.matrix import locales
from testbed.local_server import PHONE_USER_AGENT
from ui.controls import ExplorerState
from ui.text import Text
from ui.verdicts import OWN_DIRECTION, verdict
from ui.views import explore
from ui.views.depth import group_labels

pytestmark = pytest.mark.browser
RAW_EXPONENT = re.compile(r"\d(?:\.\d+)?[eE][+-]?\d")

# Every readout panel's traces, by the y axis they sit on, as drawn in the page.
READOUT_POINTS = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g._fullLayout && g._fullLayout.yaxis6);
  const drawn = {};
  for (const tr of gd._fullData) {
    const axis = tr.yaxis || 'y';
    drawn[axis] = (drawn[axis] || 0) + Array.from(tr.y || []).filter(v => v !== null && Number.isFinite(v)).length;
  }
  return drawn;
}"""


def page_text(page) -> str:
    """Everything a person can read on the page, charts' SVG text included."""
    return page.evaluate("() => document.body.innerText + ' ' + [...document.querySelectorAll('svg text')]"
                         ".map(t => t.textContent).join(' ')")


@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
def test_default_verdict_counts_tokens_and_agrees_with_the_trace(new_page, app_url, lang, locale):
    page = new_page(locale=locale)
    open_app(page, f"{app_url}/?lang={lang}")
    assert_healthy(page)
    shown = explorer_verdict(page, lang)
    state = ExplorerState()
    result = explore(state)
    assert shown == verdict(state, result, Text(lang)).replace("*", "")
    stream = result.trace.stream[-1]
    t = Text(lang)
    for row in range(stream.shape[0]):  # the trace itself, token by token
        nearest = min(angle_degrees(stream[row, ACTION_TOKEN], stream[row, j]) for j in range(stream.shape[1])
                      if j != ACTION_TOKEN)
        assert nearest >= OWN_DIRECTION
    assert t("verdict.action_kept", angle="@").split("@")[0] in shown
    counts = readouts(result.trace, ACTION_TOKEN).distinct_tokens[-1]
    for row, side in enumerate(state.scenarios):  # each sentence's count of distinct tokens, as computed
        name = t(f"scenario.{side}")
        said = (t("verdict.distinct", sentence=name, n=5, angle="@").split("@")[0] if counts[row] == 5 else
                t("verdict.merged", sentence=name, n=5, groups=int(counts[row]), block="@", names="").split("@")[0])
        assert said in shown, (said, shown)
    shot(page, f"truth-default-{lang}")


@pytest.mark.parametrize("lang,locale", [("en", "en-US"), ("zh", "zh-CN")])
def test_residual_off_names_the_stage_without_its_residual(new_page, app_url, lang, locale):
    page = new_page(locale=locale)
    open_app(page, f"{app_url}/?lang={lang}&residual=false")
    assert_healthy(page)
    t = Text(lang)
    text = page_text(page)
    assert t("stage.attention_residual.no_residual") in text  # chart title, legend and table
    assert page.locator("table").first.inner_text().count(t("stage.ffn_residual.no_residual")) == 1
    assert t("stage.attention_residual") + "\n" not in page.locator("table").first.inner_text()
    shot(page, f"truth-no-residual-{lang}")


READOUT_VIEWS = ("residual=false&norm=false", "norm=false&depth=100", "norm=false", "placement=pre&depth=100",
                 "norm_kind=layernorm")
VIEWS_IN = [(view, *locale) for i, view in enumerate(READOUT_VIEWS) for locale in locales(i)]


@pytest.mark.parametrize("view,lang,locale", VIEWS_IN)
def test_every_readout_panel_draws_and_no_number_is_raw_exponent(new_page, app_url, view, lang, locale):
    page = new_page(locale=locale)
    open_app(page, f"{app_url}/?lang={lang}&{view}")
    assert_healthy(page)
    drawn = page.evaluate(READOUT_POINTS)
    for axis in ("y", "y2", "y3", "y4", "y6"):
        assert drawn.get(axis, 0) > 0, (axis, drawn)
    text = page_text(page)
    assert not RAW_EXPONENT.search(text), RAW_EXPONENT.search(text).group(0)
    assert "0×" not in text and " blocks:" not in text.replace("1 blocks", "")
    assert not np.any([s in text for s in ("1B", "100µ", "10n", "1p")])
    shot(page, f"truth-{re.sub(r'[^a-z0-9]+', '-', view)}-{lang}")


LABELS_SHOWN = """i => {
  const gd = document.querySelectorAll('.js-plotly-plot')[i];
  return [...gd.querySelectorAll('.scatterlayer .trace')].map(tr =>
    [...tr.querySelectorAll('.textpoint text')].filter(t => t.textContent.trim())
      .map(t => [t.textContent, getComputedStyle(t).fill]));
}"""


SHARED_INK = "rgb(89, 89, 89)"  # ui.views.style.text_colour(OTHER_TOKENS), as the browser computes it


@pytest.mark.parametrize("view", ["", "&residual=false"])
def test_depth_view_names_merged_tokens_at_every_block_the_slider_shows(new_page, app_url, view):
    """Tokens that merged share one label ("errors = after deploy"), so a merge hidden under
    another marker is still visible, and the labels follow the depth slider in the browser. A label
    both sentences share on one spot is written once, in the shared tokens' grey."""
    page = new_page()
    open_app(page, f"{app_url}/?lang=en{view}")
    index = depth_chart_index(page)
    state = ExplorerState(residual=not view)
    stream = explore(state).trace.stream
    names = [[Text("en")(f"token.{n}") for n in
              ("errors", "after_deploy", "rollback", side, "action")] for side in state.scenarios]
    for block in (state.depth, 1, 3):
        if block != state.depth:
            set_depth(page, block)
        # per sentence, its tokens and its ring (the last four traces), as sets of names
        shown = page.evaluate(LABELS_SHOWN, index)[-4:]
        named = [[(frozenset(map(str.strip, text.split("="))), fill) for text, fill in tokens + ring]
                 for tokens, ring in (shown[0:2], shown[2:4])]
        expected = [{frozenset(g.split(" = ")) for g in group_labels(token_groups(stream[block, row]), names[row])
                     if g} for row in range(2)]
        assert {group for group, _ in named[0]} == expected[0], block  # each token named once
        shared = {group for group, fill in named[0] if fill == SHARED_INK}  # written once for both
        assert {group for group, _ in named[1]} | shared == expected[1], block
        assert not {group for group, _ in named[1]} & shared, block
    shot(page, f"truth-depth-labels{view.replace('&', '-').replace('=', '-')}")


PLOT_BOXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd =>
  [gd.layout.margin.t, gd.layout.margin.b, gd._fullLayout._size.t, gd._fullLayout._size.b,
   (gd.layout.sliders || []).length > 0, gd._fullData.some(tr => (tr.mode || '').endsWith('+text'))])"""


@pytest.mark.parametrize("path,size", [("/?projector=true", (1280, 720)), ("/?norm=false", (1280, 720)),
                                       ("/", (390, 844)), ("/walk?step=1&projector=true", (1280, 720)),
                                       ("/walk?step=1", (390, 844))])
def test_planes_with_placed_names_are_the_size_their_placement_assumes(new_page, app_url, path, size):
    """The token names are placed on the server at the pixel scale the figure's own margins give
    (ui.views.labels.plane_frame). That holds only if Plotly never grows a margin for a legend,
    slider or button: the plot is then exactly as high as the placement assumed."""
    width, height = size
    page = new_page(width=width, height=height, user_agent=PHONE_USER_AGENT if width < 600 else None)
    open_app(page, f"{app_url}{path}{'&' if '?' in path else '?'}lang=en")
    placed = [box for box in page.evaluate(PLOT_BOXES) if box[4] or box[5]]  # the depth view, named points
    assert placed
    for set_top, set_bottom, top, bottom, _, _ in placed:
        assert (top, bottom) == (set_top, set_bottom)
