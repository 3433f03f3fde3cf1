"""The scenario editor in a real Chromium: a bad cell is refused, fixed, and the chart follows; a
tampered link shows its fallback notice; a label with markup is drawn as text.

Cells of st.data_editor live on a canvas: the test clicks the first row's first cell, moves with
the arrow keys, types (typing opens the cell editor) and presses Enter.
"""

import json

import pytest

from blockstab.scenario import LESSON, MAX_FILE_BYTES
from support.browser import (
    ALL_DRAWN,
    EXCEPTION,
    IDLE,
    WARNINGS,
    assert_healthy,
    chart,
    open_app,
    runs,
    shot,
    wait_for_chart_change,
    wait_for_rerun,
)
from support.text import says
from ui.text import Text

pytestmark = pytest.mark.browser
ERRORS = "[data-testid=stAlertContentError] [data-testid=stMarkdownContainer]"
SUCCESS = "[data-testid=stAlertContentSuccess] [data-testid=stMarkdownContainer]"
ROW = 35  # st.data_editor's row height (px), header included
OVERLAY = "#portal textarea"  # the open cell editor


def type_into_cell(page, row: int, column: int, text: str, shown: str) -> None:
    """Select (row, column) of the editor (1-based data row; column 0 = token), open the cell's
    editor (Enter), replace its text and commit (Enter); wait for the rerun, or for ``shown`` (a JavaScript
    expression, true once the edit's outcome is on the page: a quick rerun can start and end within one
    render of the page, and a fresh clone's run once waited 60 s for a rerun it had shown). The grid hands focus to
    its unseen copy of the selected cell 200 ms after each move (``support.keyboard``): each key waits
    for the copy of the cell it should have reached, as a key pressed before the hand-over could be
    lost with the copy it went to."""
    grid = page.locator("[data-testid=stDataFrame] canvas").first
    grid.scroll_into_view_if_needed()
    cell = "glide-cell-{}-{}"  # the grid's accessible table: (column, row), row numbers are its column 1
    target = f"#{cell.format(column + 2, row - 1)}"
    page.wait_for_selector(target, state="attached")
    expected = page.text_content(target)
    box = grid.bounding_box()
    at = "id => document.activeElement?.id === id"
    page.mouse.click(box["x"] + 140, box["y"] + ROW * 1.5)  # row 1, the token column
    page.wait_for_function(at, arg=cell.format(2, 0))
    for step in range(1, column + 1):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(at, arg=cell.format(2 + step, 0))
    for step in range(1, row):
        page.keyboard.press("ArrowDown")
        page.wait_for_function(at, arg=cell.format(column + 2, step))
    page.keyboard.press("Enter")
    page.wait_for_selector(OVERLAY, state="visible")
    assert page.input_value(OVERLAY) == expected
    page.wait_for_function("() => document.activeElement?.matches('#portal textarea')")
    page.locator(OVERLAY).fill(text)
    n = runs(page)
    page.keyboard.press("Enter")
    wait_for_rerun(page, n, shown)


def test_a_bad_cell_is_refused_then_fixed_and_the_chart_follows(page, app_url):
    t = Text("en")
    open_app(page, app_url + "/scenario?lang=en")
    assert_healthy(page)
    before = chart(page, 0)  # the sentence's tokens
    type_into_cell(page, 4, 1, "abc", f"document.querySelector('{ERRORS}')?.textContent.includes('abc')")  # row 4, x
    page.wait_for_selector(ERRORS, state="attached")
    error = page.inner_text(ERRORS)
    assert says(error.splitlines()[0], "en", "editor.refused"), error
    assert "Row 4, x (across): abc is not a number" in error
    assert chart(page, 0) == before  # the last valid example stays in the preview
    shot(page, "editor-bad-cell-en")
    type_into_cell(page, 4, 1, "0.5", f"!document.querySelector('{ERRORS}')")
    page.wait_for_selector(SUCCESS, state="attached")
    after = wait_for_chart_change(page, 0, before)
    assert page.query_selector(ERRORS) is None
    confirmed_y = LESSON.contexts[0].y
    assert [0.5, confirmed_y] in [[d["x"][1], d["y"][1]] for d in after]  # the context arrow moved
    assert "sc=v1." in page.url
    assert page.inner_text(SUCCESS).strip() == t("editor.in_use")
    assert_healthy(page)
    shot(page, "editor-fixed-en")


def test_a_tampered_example_link_shows_the_fallback_notice(page, app_url):
    open_app(page, app_url + "/?lang=zh&depth=5&sc=v1.W1siYSIsImIiXSxbWyJ3Iiwx")
    assert page.query_selector(EXCEPTION) is None
    warnings = [w.inner_text() for w in page.query_selector_all(WARNINGS)]
    assert len(warnings) == 1 and says(warnings[0].splitlines()[0], "zh", "url.bad_example"), warnings
    assert page.locator(".js-plotly-plot").count() == 3
    assert "sc=" not in page.url and "depth=5" in page.url
    assert_healthy(page)
    shot(page, "tampered-example-link-zh")


def test_a_label_with_markup_is_drawn_as_text(page, app_url):
    open_app(page, app_url + "/scenario?lang=en")
    label = "<b>x</b> & [y](http://a)"
    type_into_cell(page, 1, 0, label, "[...document.querySelectorAll('.js-plotly-plot .textpoint text')]"
                   f".some(e => e.textContent === {json.dumps(label)})")
    page.wait_for_selector(SUCCESS, state="attached")
    page.wait_for_function(ALL_DRAWN)
    page.wait_for_selector(IDLE, state="attached")
    texts = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .textpoint text')]"
                          ".map(e => e.textContent)")
    assert label in texts
    assert page.query_selector(".js-plotly-plot .textpoint b, .js-plotly-plot .textpoint a") is None
    caption = page.inner_text("[data-testid=stCaptionContainer]")
    assert caption  # the page still renders
    assert_healthy(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_uploader_states_the_real_limit_only(page, app_url, lang):
    """The server refuses a file over 16 KB: the uploader says that limit, and no other (Streamlit's
    own hint would say "1MB per file", its smallest setting)."""
    open_app(page, f"{app_url}/scenario?lang={lang}", charts=False)
    uploader = page.locator(".st-key-editor_upload")
    uploader.scroll_into_view_if_needed()
    shown = uploader.inner_text()
    assert Text(lang)("editor.upload_limited", limit=MAX_FILE_BYTES // 1024) in shown
    assert "MB" not in shown, shown
