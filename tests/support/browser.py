"""What the browser tests share: how to open a page and wait for the app's state (never a fixed
time), read a chart's drawn data, and the pages the router registers."""

import ast
import io
import json
import re
from pathlib import Path

import numpy as np
import zxingcpp
from PIL import Image

from support import ROOT
from ui.bundle import setting_note
from ui.controls import ExplorerState
from ui.examples import plain_text
from ui.text import Text
from ui.verdicts import verdict
from ui.views import explore, figure_state
from ui.views.block import block_figure
from ui.views.depth import depth_figure, readouts_figure
from ui.views.describe import block_description, depth_description, readouts_description
from ui.views.tables import columns_and_rows, stage_rows

ARTIFACTS = ROOT / "test-artifacts"

IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
READY = "h1, .js-plotly-plot, [data-testid=stException]"
VERDICT = ".instant-verdict, [data-testid=stAlertContentInfo] [data-testid=stMarkdownContainer]"
WARNINGS = ".instant-warning, [data-testid=stAlertContentWarning] [data-testid=stMarkdownContainer]"
EXCEPTION = "[data-testid=stException]"

READ_CHART = """
  const readChart = i => {
    const gd = document.querySelectorAll('.js-plotly-plot')[i];
    if (!gd || !gd._fullData) return null;
    const number = v => (v === null ? NaN : Number(v));  // null, like NaN, is a gap
    return gd._fullData.map(t => ({name: t.name, x: Array.from(t.x || [], number), y: Array.from(t.y || [], number)}));
  };
"""
CHART_DATA = "(i) => {" + READ_CHART + "return readChart(i); }"
CHART_CHANGED = "([i, before]) => {" + READ_CHART + """
  const now = readChart(i);
  return now !== null && JSON.stringify(now) !== before;
}"""
ALL_DRAWN = "() => { const p = [...document.querySelectorAll('.js-plotly-plot')];" \
            " return p.length > 0 && p.every(gd => gd._fullData && gd.querySelector('.main-svg')); }"
# Whatever the page has: no lazy-loading skeleton left, every chart drawn, every dataframe's grid in place.
SETTLED = """() => !document.querySelector('[data-testid=stSkeleton]')
  && [...document.querySelectorAll('.js-plotly-plot')]
    .every(gd => gd._fullData && gd.querySelector('.main-svg'))
  && [...document.querySelectorAll('[data-testid=stDataFrame]')].every(df => df.querySelector('canvas'))"""
RUNS = "() => window.__scriptStates.filter(s => s === 'running').length"


# axe-core (Deque's accessibility engine, pinned in package-lock.json), run on the page as it is: the
# WCAG 2.0 and 2.1 rules of levels A and AA.
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_RUN = """async () => {
  const wcag21 = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
  const result = await axe.run(document, {runOnly: {type: 'tag', values: wcag21}});
  return result.violations.map(v => [v.id, v.impact, v.nodes.map(n => n.target.join(' ') + ': '
                                                                    + n.failureSummary.split('\\n')[1])]);
}"""
# Each chart's accessible name: its figure's aria-label (Streamlit's ``alt``, the instant Explorer's place).
CHART_NAMES = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(gd => gd.getBoundingClientRect().width > 0 && !gd.closest('[aria-hidden=true]'))  // (not one drawn ahead)
  .map(gd => gd.closest('[role=figure]')?.getAttribute('aria-label') ?? null)"""

# Every visible piece of SVG text in the page's charts, with the fill the browser computed.
CHART_TEXT = """() => [...document.querySelectorAll('.js-plotly-plot svg text')]
  .filter(el => el.textContent.trim() && el.getBBox().width > 0 && !el.closest('[aria-hidden=true] .js-plotly-plot'))
  .map(el => [el.textContent.trim().slice(0, 30), getComputedStyle(el).fill])"""


def contrast_on_white(rgb: str) -> float:
    """The contrast of a colour (``rgb(…)``) on white, as WCAG defines it."""
    channels = [float(v) / 255 for v in re.findall(r"[\d.]+", rgb)[:3]]
    linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)



# Plotly's SVGs a screen reader would read (their tick labels): none, each chart is named in words.
SVGS_HEARD = """() => [...document.querySelectorAll('.js-plotly-plot .main-svg')]
  .filter(svg => !svg.closest('[aria-hidden=true]')).length"""

# Every chart on the page drawn afresh by Plotly (new SVGs), as a chart is when its config changes.
REDRAWN_AFRESH = """async () => { for (const gd of document.querySelectorAll('.js-plotly-plot'))
  await Plotly.newPlot(gd, gd.data, gd.layout, gd._context); }"""


def axe_violations(page) -> list:
    """What axe-core finds on the page against WCAG 2.1 A and AA: (rule, impact, [element: why])."""
    if not page.evaluate("() => typeof axe === 'object'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    return page.evaluate(AXE_RUN)


def plain(html: str) -> str:
    """A Plotly title without the <b> tags Streamlit's chart theme wraps it in."""
    return re.sub(r"<[^>]+>", "", html)


def read_qr(page) -> str:
    """The link in a live class's QR code on the screen, read as a phone's camera reads it."""
    image = page.get_by_role("img", name=Text("en")("class.qr_title"))
    (found,) = zxingcpp.read_barcodes(Image.open(io.BytesIO(image.screenshot())))
    return found.text


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


DRAWN = "() => { const e = document.querySelector('.instant-explorer'); return !e || !!e.dataset.drawn; }"


def open_app(page, url: str, charts: bool = True) -> None:
    """Navigate and wait until the script finished and (if expected) every chart is drawn, the
    instant Explorer's included."""
    page.goto(url)
    page.wait_for_selector(READY, state="attached")
    page.wait_for_selector(IDLE, state="attached")
    if charts and not page.query_selector(EXCEPTION):
        page.wait_for_function(ALL_DRAWN)
    page.wait_for_function(DRAWN)
    page.wait_for_function(SETTLED)


# Every chart drawn at its box's width: Streamlit's (responsive) and the instant Explorer's, drawn afresh.
AT_WIDTH = """() => [...document.querySelectorAll('.js-plotly-plot')].every(gd => gd._fullLayout
    && Math.abs(gd._fullLayout.width - gd.getBoundingClientRect().width) <= 1)
  && [...document.querySelectorAll('.instant-explorer')].every(e => e.dataset.drawnWidth === String(e.clientWidth))"""


def resize(page, width: int, height: int) -> None:
    """Resize the window, as a user drags its edge, and wait until every chart is drawn at its new width."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(AT_WIDTH)
    page.wait_for_function(SETTLED)


def runs(page) -> int:
    return page.evaluate(RUNS)


def wait_for_rerun(page, runs_before: int, shown: str | None = None) -> None:
    """Wait until a new script run has started and the app is idle again. A rerun served from the
    caches can start and finish within one render, leaving no 'running' state to count; ``shown``
    (a JavaScript expression, true once the rerun's result is on the page) then stands in."""
    done = f"({RUNS})() > n" + (f" || ({shown})" if shown else "")
    page.wait_for_function(f"n => {done}", arg=runs_before)
    page.wait_for_selector(IDLE, state="attached")


def chart(page, index: int) -> list[dict]:
    return page.evaluate(CHART_DATA, index)


def wait_for_chart_change(page, index: int, before: list[dict]) -> list[dict]:
    page.wait_for_function(CHART_CHANGED, arg=[index, json.dumps(before)])
    return chart(page, index)


# Where Streamlit could not draw an element (its code failed to load: "Failed to fetch dynamically imported module"),
# it shows an error of its own in the element's place, with the error's stack; an st.error has none.
BROKEN_ELEMENT = "[data-testid=stAlertContainer]:has([data-testid=stErrorElementStack])"


def assert_healthy(page) -> None:
    """No exception shown, no element Streamlit could not draw (with the requests that got no answer), no
    JavaScript error."""
    assert page.query_selector(EXCEPTION) is None, page.inner_text(EXCEPTION)[:500]
    broken = page.locator(BROKEN_ELEMENT).all_inner_texts()
    assert broken == [], (broken[:2], page.unanswered)
    assert page.js_errors == []


def verdict_text(page) -> str:
    return page.inner_text(VERDICT).strip()


# The Explorer's verdict in its parts: on a desktop its headline and the rest behind the disclosure (read
# closed), else the whole box.
VERDICT_PARTS = """() => { const box = document.querySelector('.instant-verdict');
  const more = box.querySelector('.instant-more');
  return more ? [box.querySelector('.instant-headline').textContent, more.querySelector('p').textContent]
              : [box.textContent]; }"""


def explorer_verdict(page, lang: str) -> str:
    """The Explorer's whole verdict as the page says it (a desktop's headline and the rest it discloses)."""
    return Text(lang).sentences([part for part in page.evaluate(VERDICT_PARTS) if part])


def assert_same_points(drawn: list[dict], fig) -> None:
    assert [d["name"] for d in drawn] == [tr.name for tr in fig.data]
    for d, tr in zip(drawn, fig.data, strict=True):
        np.testing.assert_allclose(d["x"], np.asarray(tr.x, dtype=float), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(d["y"], np.asarray(tr.y, dtype=float), rtol=1e-9, atol=1e-12)


def set_depth(page, depth: int, key: str = "depth") -> None:
    """Move the instant Explorer's depth slider (or the block's: ``key``) to ``depth`` (as a drag
    ends) and wait until drawn."""
    page.evaluate("""([key, n]) => { const r = document.querySelector('#instant-' + key); r.value = String(n);
      r.dispatchEvent(new Event('input', {bubbles: true})); r.dispatchEvent(new Event('change', {bubbles: true})); }""",
                  [key, depth])
    wait_for_view(page, **{key: depth})


def wait_for_view(page, timeout: float | None = None, **view) -> dict:
    """Wait until the instant Explorer has drawn a view with these values; return the whole view."""
    page.wait_for_function("""want => { const e = document.querySelector('.instant-explorer');
      const drawn = e && e.dataset.drawn ? JSON.parse(e.dataset.drawn) : null;
      return drawn && Object.entries(want).every(([k, v]) => drawn[k] === v); }""", arg=view, timeout=timeout)
    return json.loads(page.evaluate("() => document.querySelector('.instant-explorer').dataset.drawn"))


def depth_chart_index(page) -> int:
    """The depth view: the instant Explorer's, or a page's with its own slider (the tour's)."""
    return page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].findIndex(gd => "
                         "gd.classList.contains('instant-depth') || (gd.layout && gd.layout.sliders?.length))")


def registered_pages() -> list[tuple[str, str, bool]]:
    """(script, url_path, default) of every st.Page in app.py, read from its source."""
    pages = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            kw = {k.arg: k.value for k in node.keywords}
            url = kw["url_path"].value if "url_path" in kw else Path(node.args[0].value).stem
            default = "default" in kw and kw["default"].value is True
            pages.append((node.args[0].value, url, default))
    return pages


PAGES = registered_pages()
TITLES = {"pages/explorer.py": "explorer.title", "pages/norm_geometry.py": "geometry.title"}
CHARTS = {"pages/explorer.py": 3, "pages/norm_geometry.py": 2}
# Every routable path: the default page is served at "/" (its own url_path is not a route).
LINKS = sorted({(f"/{url}", script) for script, url, default in PAGES if not default}
               | {("/", s) for s, _, default in PAGES if default} | {("/explore", "pages/explorer.py")})


# --- the instant Explorer, in the app or in its take-home folder ---------------------------------

INSTANT_CHARTS = "(() => {" + READ_CHART + "return [0, 1, 2].map(readChart); })()"


NUMBERS = """() => { const part = document.querySelector('.instant-numbers');
  const texts = (cells) => [...cells].map((cell) => cell.textContent);
  return {title: part.querySelector('h3').textContent, columns: texts(part.querySelectorAll('thead th')),
          rows: [...part.querySelectorAll('tbody tr')].map((row) => texts(row.children))}; }"""


def assert_shows(page, state: ExplorerState, lang: str = "en") -> None:
    """The three charts draw what the view functions draw for ``state`` and are named by its
    descriptions, the verdict is its own (in projector mode the compact one, with LayerNorm's 2-D caveat
    in its box; on a desktop its headline, and the rest behind a disclosure) and the numbers table is its
    block's."""
    t, result = Text(lang), explore(state)
    inside = figure_state("block", state)
    assert page.evaluate(NUMBERS) == {"title": t("explorer.numbers", block=state.shown_block),
                                      **columns_and_rows(stage_rows(inside, explore(inside), t))}
    expected = (block_figure(inside, explore(inside), t), depth_figure(state, result, t),
                readouts_figure(state, result, t))
    for drawn, fig in zip(page.evaluate(INSTANT_CHARTS), expected, strict=True):
        assert [d["name"] for d in drawn] == [tr.name for tr in fig.data]
        for d, tr in zip(drawn, fig.data, strict=True):
            for axis in ("x", "y"):
                want = np.array([np.nan if v is None else v for v in np.asarray(tr[axis], dtype=object)], dtype=float)
                np.testing.assert_allclose(np.array(d[axis], dtype=float), want, rtol=1e-9, atol=1e-12)
    said = plain_text(verdict(state, result, t, compact=state.projector))
    note = setting_note(state)
    if state.projector and note and note["projector"] == "caveat":  # (projector mode's words for it)
        said += " " + t("explorer.layernorm_2d_short")
    assert explorer_verdict(page, lang) == said
    assert page.evaluate(CHART_NAMES) == [block_description(inside, explore(inside), t),
                                          depth_description(state, result, t), readouts_description(state, result, t)]


def click_label(page, text: str) -> None:
    page.locator(".instant-controls").get_by_text(text, exact=True).click()
