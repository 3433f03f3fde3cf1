"""The instant Explorer in real Chromium (issue #16): every switch and the depth change all three
charts and the numbers table to the engine's numbers without the server (it is paused while they
change), by mouse and by keyboard; a reload, a shared link and a teacher's show= link restore the
view; projector mode and Chinese; and a report-back rerun never fades the figures."""

import itertools
import os
import re
import signal
import time
import urllib.request

import pytest

from blockstab.scenario import PRESETS, Scenario, Token, encode
from support.browser import (
    IDLE,
    VERDICT,
    assert_healthy,
    assert_shows,
    click_label,
    open_app,
    runs,
    set_depth,
    shot,
    wait_for_rerun,
    wait_for_view,
)
from support.matrix import locales
from ui.bundle import FIGURES, range_part, read_part
from ui.controls import ExplorerState
from ui.examples import plain_text
from ui.text import Text
from ui.verdicts import verdict, verdict_sentences
from ui.views import explore
from ui.views.tables import stage_csv

pytestmark = pytest.mark.browser
DRAWN_TEXT = """() => [...document.querySelectorAll('.instant-depth .textpoint text')].map(t => t.textContent)"""


CHANGES = [  # (what the user does, the view it makes)
    ("control.residual", {"residual": False}),
    ("control.norm", {"residual": False, "norm": False}),
    ("option.placement.pre", {"residual": False, "norm": False, "placement": "pre"}),
    ("control.norm", {"residual": False, "placement": "pre"}),
    ("option.norm_kind.layernorm", {"residual": False, "placement": "pre", "norm_kind": "layernorm"}),
    ("control.residual", {"placement": "pre", "norm_kind": "layernorm"}),
]


@pytest.mark.parametrize("lang,locale", locales(1))
def test_every_switch_and_the_depth_change_all_three_charts_to_the_engines_numbers(new_page, app_url, lang, locale):
    page = new_page(locale=locale)
    t = Text(lang)
    open_app(page, f"{app_url}/?lang={lang}")
    assert_shows(page, ExplorerState(), lang)
    for label, view in CHANGES:
        click_label(page, t(label))
        wait_for_view(page, **{k: view.get(k, getattr(ExplorerState, k)) for k in
                               ("residual", "norm", "norm_kind", "placement")})
        assert_shows(page, ExplorerState(**view), lang)
    for depth in (5, 100, 1):
        set_depth(page, depth)
        assert_shows(page, ExplorerState(**CHANGES[-1][1], depth=depth), lang)
    page.wait_for_function("() => location.search.includes('depth=1')")  # reported back: the URL follows
    assert "placement=pre" in page.url and "norm_kind=layernorm" in page.url and "residual" not in page.url
    assert_healthy(page)
    shot(page, f"instant-switched-{lang}")


def test_switches_and_depth_change_the_charts_while_the_server_is_paused(page, app_server):
    """Nothing on the way from a click to the new figures goes through the server."""
    app_url, server = app_server
    open_app(page, f"{app_url}/?lang=en")
    os.kill(server.pid, signal.SIGSTOP)
    try:
        click_label(page, Text("en")("control.residual"))
        wait_for_view(page, residual=False)
        set_depth(page, 7)
        assert_shows(page, ExplorerState(residual=False, depth=7))
        for focus in ("feed_forward", "attention", "ffn_norm"):  # the stage in focus
            click_label(page, Text("en")(f"option.focus.{focus}"))
            wait_for_view(page, focus=focus)
            assert_shows(page, ExplorerState(residual=False, depth=7, focus=focus))
        for block in (4, 10, 9):  # the block in focus, in the block range read at the mount (blocks 1-10)
            set_depth(page, block, key="block")
            assert_shows(page, ExplorerState(residual=False, depth=7, focus="ffn_norm", block=block))
        assert page.locator(".instant-waiting").count() == 0
    finally:
        os.kill(server.pid, signal.SIGCONT)
    page.wait_for_function("() => location.search.includes('depth=7') && location.search.includes('residual=false')"
                           " && location.search.includes('block=9') && location.search.includes('focus=ffn_norm')")
    page.wait_for_selector(IDLE, state="attached")
    assert_healthy(page)


def test_a_block_past_the_range_read_waits_for_the_server_then_shows_its_own_numbers(page, app_server):
    """The block views come ten blocks at a time: moving from block 1 straight to block 21 (not
    read, and the server paused: it cannot be read) leaves the block view and numbers faded
    (waiting) until the browser has read blocks 21-30; then they are block 21's."""
    app_url, server = app_server
    open_app(page, f"{app_url}/?lang=en&scenario=not_confirmed&depth=30")
    os.kill(server.pid, signal.SIGSTOP)
    try:
        set_depth(page, 21, key="block")
        assert page.locator(".instant-place-block.instant-waiting").count() == 1
        assert page.locator(".instant-numbers.instant-waiting").count() == 1
    finally:
        os.kill(server.pid, signal.SIGCONT)
    page.wait_for_selector(".instant-place-block:not(.instant-waiting)")
    assert_shows(page, ExplorerState(scenario="not_confirmed", depth=30, block=21))
    set_depth(page, 3)  # a stack shallower than the block shows its last block (in 1-10), and says so
    page.wait_for_selector(".instant-place-block:not(.instant-waiting)")
    assert_shows(page, ExplorerState(scenario="not_confirmed", depth=3, block=21))
    assert page.get_by_text(Text("en")("explorer.block_clamped", depth=3)).count() == 1
    page.wait_for_function("() => location.search.includes('block=21') && location.search.includes('depth=3')")
    assert_healthy(page)


PARTS_HELD = "() => JSON.parse(document.querySelector('.instant-explorer').dataset.parts || '[]')"


def test_once_the_range_beside_is_built_stepping_across_a_ranges_edge_needs_no_server(page, fresh_app_server):
    """Opening the sentence has the server build the range beside (11-20) first in the background;
    the browser reads it once the index lists it, and block 10 to 11 is drawn with the server
    paused. The report-back sends no figure."""
    app_url, server = fresh_app_server
    received = []  # every WebSocket frame from the server, from the page's first
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: received.append(frame)))
    open_app(page, f"{app_url}/?lang=zh&scenario=not_confirmed&depth=40")
    deadline = time.monotonic() + 60
    for block in itertools.cycle((9, 10)):
        set_depth(page, block, key="block")
        page.wait_for_timeout(300)
        if "blocks-11" in page.evaluate(PARTS_HELD) or time.monotonic() > deadline:
            break
    assert page.evaluate(PARTS_HELD) == ["blocks-1", "blocks-11"]
    os.kill(server.pid, signal.SIGSTOP)
    try:
        set_depth(page, 11, key="block")
        assert page.locator(".instant-waiting").count() == 0
        assert_shows(page, ExplorerState(scenario="not_confirmed", depth=40, block=11), "zh")
        before = len(received)
    finally:
        os.kill(server.pid, signal.SIGCONT)
    page.wait_for_function("() => location.search.includes('block=11')")
    page.wait_for_selector(IDLE, state="attached")
    assert sum(map(len, received[before:])) < 20_000  # the report-back's answer, no figure (a range is 50-80 kB)
    frames = [frame.encode() if isinstance(frame, str) else frame for frame in received]
    for figure_sign in (b'"layout"', b"H4sI"):  # a figure's JSON, a part (gzip in base64)
        assert not any(figure_sign in frame for frame in frames), figure_sign
    assert "blocks-11" in page.evaluate(PARTS_HELD)
    assert_healthy(page)


def test_a_jump_to_blocks_no_one_has_asked_for_fades_nothing_while_the_server_builds_them(page, app_url):
    """Blocks 71-80 of this sentence (a preset no other test opens) are not built yet right after
    it opens (the ranges ahead are built nearest first, the seventh is 71-80): the report-back sends
    the page first and builds them after (0.4-0.9 s; Streamlit fades what it has not yet sent after
    0.5 s), so the Explorer never fades while its block view waits; then it shows block 77."""
    open_app(page, f"{app_url}/?lang=zh&scenario=confirmed&depth=100&sc=triage")
    page.evaluate(FADE_WATCH)
    set_depth(page, 77, key="block")
    page.wait_for_selector(".instant-place-block:not(.instant-waiting)", timeout=30_000)
    page.evaluate("() => clearInterval(window.__fadeTimer)")
    assert page.evaluate("() => window.__faded") == []
    assert_shows(page, ExplorerState(scenario="confirmed", depth=100, block=77, example=PRESETS["triage"]), "zh")
    page.wait_for_function("() => location.search.includes('block=77')")
    assert_healthy(page)


def parts_built(page, app_url: str) -> list[str]:
    """The parts the bundle's index lists as built, read as the browser reads it."""
    bundle = page.evaluate("() => document.querySelector('.instant-explorer').dataset.bundle")
    with urllib.request.urlopen(f"{app_url}{bundle}index.js?read={time.monotonic()}", timeout=10) as response:
        return read_part(response.read().decode("ascii"))["built"]


def hold_the_websocket(page) -> dict:
    """Route the page's WebSocket through the test: while ``held["on"]``, what the page sends is
    kept back (a report-back never reaches the server) until the test lets it go."""
    held = {"on": False, "kept": []}

    def route(ws) -> None:
        server = ws.connect_to_server()
        held["server"] = server
        ws.on_message(lambda message: held["kept"].append(message) if held["on"] else server.send(message))
        server.on_message(ws.send)

    page.route_web_socket(re.compile(r".*/_stcore/stream$"), route)
    return held


def test_a_jump_to_a_range_built_is_read_from_the_app_with_no_rerun(page, fresh_app_server):
    """Opening a sentence has the server build its every block range (in a worker process); once
    built, a jump to block 77 (a range this page never read) draws block 77's own charts and numbers
    with the page's WebSocket held: nothing reached the server, the range was read from the app."""
    app_url, _ = fresh_app_server
    held = hold_the_websocket(page)
    fetched = []
    page.on("response", lambda r: "/api/bundles/" in r.url
            and fetched.append((r.url.rsplit("-", 1)[1], r.status)))
    open_app(page, f"{app_url}/?lang=en&scenario=confirmed&norm_kind=layernorm&placement=pre&depth=100")
    deadline = time.monotonic() + 300  # a wait, not a budget: a loaded machine builds slowly
    while len(parts_built(page, app_url)) < 11 and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    assert parts_built(page, app_url) == sorted([FIGURES, *(range_part(n) for n in range(1, 101, 10))])
    assert "blocks-71" not in page.evaluate(PARTS_HELD)
    held["on"] = True
    try:
        set_depth(page, 77, key="block")
        page.wait_for_selector(".instant-place-block:not(.instant-waiting)")
        state = ExplorerState(scenario="confirmed", norm_kind="layernorm", placement="pre", depth=100, block=77)
        assert_shows(page, state)
        assert held["kept"]  # the report-back, kept back: the server ran nothing for this
        assert ("71.js", 200) in fetched and all(status == 200 for _, status in fetched)
    finally:
        held["on"] = False
        for message in held.pop("kept"):
            held["server"].send(message)
    page.wait_for_function("() => location.search.includes('block=77')")
    assert_healthy(page)


ANNOUNCED = "() => document.querySelector('.instant-announced').textContent"
# A slider dragged across values: an input event at each, a change event at the last.
DRAGGED_TO = """(slider, last) => { for (let v = Number(slider.value) + 1; v <= last; v++) {
    slider.value = v; slider.dispatchEvent(new Event('input', {bubbles: true})); }
  slider.dispatchEvent(new Event('change', {bubbles: true})); }"""
# How many times the live region has spoken since this was run.
COUNT_ANNOUNCEMENTS = """() => { window.__announced = 0; new MutationObserver(() => window.__announced += 1)
  .observe(document.querySelector('.instant-announced'), {childList: true, characterData: true, subtree: true}); }"""


def announcement(t: Text, control: str, value: str, state: ExplorerState) -> str:
    """What the live region says after a change to ``state``: the control, its value, the headline."""
    return t("describe.changed", control=t(control), value=value,
             headline=plain_text(verdict_sentences(state, explore(state), t)[0]))


def test_the_controls_work_from_the_keyboard_with_a_visible_focus_ring(page, app_url):
    """And after each change a screen reader hears one sentence: the control, its value and the
    verdict's headline; a drag of the depth slider is announced once, at the depth it settles on."""
    t = Text("en")
    open_app(page, f"{app_url}/?lang=en")
    switch = page.get_by_role("switch", name=t("control.residual"))
    assert switch.evaluate("e => getComputedStyle(e).transitionDuration") != "0s"
    page.emulate_media(reduced_motion="reduce")  # a reader who asked for no motion: the switch does not slide
    assert switch.evaluate("e => getComputedStyle(e).transitionDuration") == "0s"
    switch.focus()
    page.keyboard.press("Space")
    wait_for_view(page, residual=False)
    assert page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle") != "none"
    said = announcement(t, "control.residual", t("describe.off"), ExplorerState(residual=False))
    page.wait_for_function(f"said => ({ANNOUNCED})() === said", arg=said)
    depth = page.get_by_role("slider", name=t("control.depth"))
    depth.focus()
    page.keyboard.press("ArrowRight")
    wait_for_view(page, residual=False, depth=25)
    page.keyboard.press("Home")
    wait_for_view(page, depth=1)
    said = announcement(t, "control.depth", "1", ExplorerState(residual=False, depth=1))
    page.wait_for_function(f"said => ({ANNOUNCED})() === said", arg=said)
    page.evaluate(COUNT_ANNOUNCEMENTS)
    depth.evaluate(DRAGGED_TO, 6)  # a drag, 1 to 6 in one go
    wait_for_view(page, depth=6)
    said = announcement(t, "control.depth", "6", ExplorerState(residual=False, depth=6))
    page.wait_for_function(f"said => ({ANNOUNCED})() === said", arg=said)
    assert page.evaluate("() => window.__announced") == 1
    page.keyboard.press("Home")
    wait_for_view(page, depth=1)
    skip = page.get_by_role("link", name=t("keys.skip"))  # from the controls to the figures
    skip.focus()
    assert skip.is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "instant-figures" and "#" not in page.url
    page.get_by_role("radio", name=t("option.placement.pre")).focus()
    page.keyboard.press("Space")
    wait_for_view(page, placement="pre")
    page.get_by_role("radio", name=t("option.focus.feed_forward")).focus()
    page.keyboard.press("Space")
    wait_for_view(page, focus="feed_forward")
    assert_shows(page, ExplorerState(residual=False, depth=1, placement="pre", focus="feed_forward"))
    page.wait_for_function("() => location.search.includes('placement=pre') && location.search.includes('depth=1')")
    assert_healthy(page)


def test_a_reload_restores_the_view_the_browser_switched_to(page, app_url):
    open_app(page, f"{app_url}/?lang=zh")
    click_label(page, Text("zh")("control.norm"))
    set_depth(page, 40)
    page.wait_for_function("() => location.search.includes('norm=false') && location.search.includes('depth=40')")
    page.reload()
    page.wait_for_selector(".instant-explorer[data-drawn]")
    assert wait_for_view(page, norm=False, depth=40)["residual"] is True
    assert page.get_by_role("switch", name=Text("zh")("control.norm")).is_checked() is False
    assert page.get_by_role("slider", name=Text("zh")("control.depth")).input_value() == "40"
    assert_shows(page, ExplorerState(norm=False, depth=40), "zh")


def test_a_teachers_show_link_draws_only_its_controls_and_keeps_the_hidden_ones(page, app_url):
    t = Text("en")
    open_app(page, f"{app_url}/explore?lang=en&show=residual,depth&norm=false&depth=12")
    assert page.locator(".instant-controls [data-key]").evaluate_all("els => els.map(e => e.dataset.key)") == \
        ["residual", "depth"]
    assert page.get_by_role("switch", name=t("control.norm")).count() == 0
    click_label(page, t("control.residual"))
    wait_for_view(page, residual=False, norm=False, depth=12)
    assert_shows(page, ExplorerState(residual=False, norm=False, depth=12))
    page.wait_for_function("() => location.search.includes('residual=false')")
    assert "norm=false" in page.url and ("show=residual%2Cdepth" in page.url or "show=residual,depth" in page.url)


@pytest.mark.parametrize("lang,locale", locales(0))
def test_projector_mode_switches_in_the_browser_too(new_page, app_url, lang, locale):
    t = Text(lang)
    page = new_page(width=1280, height=720, locale=locale)
    open_app(page, f"{app_url}/?lang={lang}&projector=true")
    assert page.locator(".instant-explorer.instant-projector").count() == 1
    for key in ("residual", "norm", "depth"):
        assert page.locator(f".instant-controls [data-key={key}]").first.is_visible(), key
    click_label(page, t("control.residual"))
    wait_for_view(page, residual=False)
    state = ExplorerState(residual=False, projector=True)
    assert page.inner_text(VERDICT).strip() == plain_text(verdict(state, explore(state), t, compact=True))
    fonts = page.evaluate("() => [...document.querySelectorAll('.instant-explorer .js-plotly-plot')]"
                          ".map(gd => gd.layout.font.size)")
    assert fonts == [20, 20, 20]
    shot(page, f"instant-projector-{lang}")


CHARTS_NOW = "[...document.querySelectorAll('.instant-explorer .js-plotly-plot')]"
MARK_CHARTS = f"() => {CHARTS_NOW}.forEach(gd => gd.dataset.mark = 'x')"
MARKED = f"() => {CHARTS_NOW}.map(gd => gd.dataset.mark === 'x')"
FIT_THEIR_PLACES = f"() => {CHARTS_NOW}.every(gd => Math.abs(gd._fullLayout.width - gd.parentElement.clientWidth) < 2)"


def test_a_switch_back_shows_the_charts_drawn_before_and_never_a_stale_depth_or_width(page, app_url):
    """Going back to a setting or a depth shows the very charts drawn for it (kept, not redrawn);
    charts kept from another depth or another window width are redrawn."""
    residual = Text("en")("control.residual")
    open_app(page, f"{app_url}/?lang=en")
    page.evaluate(MARK_CHARTS)  # residual on, depth 24
    click_label(page, residual)
    wait_for_view(page, residual=False)
    assert page.evaluate(MARKED) == [False] * 3
    click_label(page, residual)
    wait_for_view(page, residual=True)
    assert page.evaluate(MARKED) == [True] * 3
    assert_shows(page, ExplorerState())
    set_depth(page, 30)  # the kept residual-off charts show depth 24
    click_label(page, residual)
    wait_for_view(page, residual=False, depth=30)
    assert_shows(page, ExplorerState(residual=False, depth=30))
    page.evaluate(MARK_CHARTS)
    click_label(page, residual)
    wait_for_view(page, residual=True, depth=30)
    page.set_viewport_size({"width": 1100, "height": 800})  # the kept residual-off charts are wider
    page.wait_for_function(FIT_THEIR_PLACES)
    click_label(page, residual)
    wait_for_view(page, residual=False, depth=30)
    assert page.evaluate(MARKED) == [False] * 3  # redrawn at the new width
    assert page.evaluate(FIT_THEIR_PLACES)
    assert_shows(page, ExplorerState(residual=False, depth=30))
    page.evaluate(MARK_CHARTS)
    set_depth(page, 31)
    assert page.evaluate(MARKED) == [True, False, False]  # the block view does not change with depth
    assert_shows(page, ExplorerState(residual=False, depth=31))
    set_depth(page, 30)  # a step back along depth is a swap too
    assert page.evaluate(MARKED) == [True] * 3
    assert_shows(page, ExplorerState(residual=False, depth=30))
    assert_healthy(page)


FADE_WATCH = """() => { window.__faded = []; const root = document.querySelector('.instant-explorer');
  const watch = () => { for (let e = root; e; e = e.parentElement) {
      const o = parseFloat(getComputedStyle(e).opacity); if (o < 1) window.__faded.push(o); } };
  window.__fadeTimer = setInterval(watch, 10); }"""


def test_report_back_reruns_never_fade_the_figures(page, app_url):
    open_app(page, f"{app_url}/?lang=en")
    page.evaluate(FADE_WATCH)
    for i in range(8):
        n = runs(page)
        click_label(page, Text("en")("control.residual"))
        wait_for_view(page, residual=i % 2 == 1)
        # (a rerun served from the caches may leave no 'running' state to count: the URL then shows it)
        reported = "location.search.includes('residual=false')"
        wait_for_rerun(page, n, shown=reported if i % 2 == 0 else f"!{reported}")
    page.evaluate("() => clearInterval(window.__fadeTimer)")
    assert page.evaluate("() => window.__faded") == []
    assert_healthy(page)


def test_names_from_the_editor_are_text_never_markup(page, app_url):
    """Token names written like HTML show as those characters in the charts and the verdict (the
    server escapes Plotly's pseudo-HTML; the browser writes text, never HTML) and become no element."""
    tagged = Scenario(axes=("<i>across</i>", "up"),
                      tokens=(Token("<b>x</b>", 1.0, 0.2), Token("<img src=x onerror=alert(1)>", -0.3, 0.8),
                              Token("plain", 0.4, -0.6), Token("act", 0.5, 1.2)),
                      context_slot=3, contexts=(Token("<u>yes</u>", -0.4, 1.3), Token("no", 1.4, -0.4)), action=4)
    open_app(page, f"{app_url}/?lang=en&sc={encode(tagged)}")
    texts = " ".join(page.evaluate(DRAWN_TEXT))
    assert "<b>x</b>" in texts, texts
    assert page.locator(", ".join(f".instant-explorer {tag}" for tag in ("img", "b", "u", "i"))).count() == 0
    assert_healthy(page)


def test_the_csv_download_is_the_view_switched_to_in_the_browser(page, app_url, tmp_path):
    """The CSV is written when its button is clicked (not on every report-back), for the view shown."""
    open_app(page, f"{app_url}/?lang=en")
    click_label(page, Text("en")("control.residual"))
    set_depth(page, 5)
    page.wait_for_function("() => location.search.includes('residual=false') && location.search.includes('depth=5')")
    page.wait_for_selector(IDLE, state="attached")  # the rerun that wrote the URL has drawn the buttons too
    with page.expect_download() as download:
        page.get_by_role("button", name=Text("en")("download.csv")).click()
    saved = tmp_path / "explorer.csv"
    download.value.save_as(saved)
    state = ExplorerState(residual=False, depth=5)
    assert saved.read_text(encoding="utf-8") == stage_csv(state, explore(state))
    assert_healthy(page)


COUNT_SHOWN_DRAWS = """() => { window.__shownDraws = 0; const react = window.Plotly.react;
  window.Plotly.react = (gd, ...rest) => {
    if (document.querySelector('.instant-explorer').contains(gd)) window.__shownDraws += 1;
    return react(gd, ...rest); }; }"""
AHEAD_OF = """want => { const ahead = JSON.parse(document.querySelector('.instant-explorer').dataset.ahead || 'null');
  return ahead && Object.entries(want).every(([key, value]) => ahead[key] === value); }"""  # its views beside drawn


def test_the_next_depths_and_the_residual_flipped_are_drawn_ahead_so_those_steps_draw_nothing(page, drawing_ahead):
    """In idle time the Explorer draws the depths on either side off the page, and after a pause
    the residual switch flipped: a step to one of them is a swap of charts drawn with the engine's
    numbers, and nothing is drawn on the page; another setting is drawn when asked for."""
    app_url, _ = drawing_ahead
    open_app(page, f"{app_url}/?lang=en")
    page.wait_for_function(AHEAD_OF, arg={"depth": 24})
    page.evaluate(COUNT_SHOWN_DRAWS)
    slider = page.get_by_role("slider", name=Text("en")("control.depth"))
    for key, depth in (("ArrowRight", 25), ("ArrowRight", 26), ("ArrowLeft", 25), ("ArrowLeft", 24)):
        slider.press(key)
        wait_for_view(page, depth=depth)
        assert page.evaluate("() => window.__shownDraws") == 0
        assert page.evaluate(CHARTS_NOW + ".length") == 3
        assert_shows(page, ExplorerState(depth=depth))
        page.wait_for_function(AHEAD_OF, arg={"depth": depth})
    click_label(page, Text("en")("control.residual"))
    wait_for_view(page, residual=False)
    assert page.evaluate("() => window.__shownDraws") == 0
    assert_shows(page, ExplorerState(residual=False, depth=24))
    click_label(page, Text("en")("control.norm"))  # another setting: not drawn ahead
    wait_for_view(page, residual=False, norm=False)
    assert page.evaluate("() => window.__shownDraws") == 3
    assert_healthy(page)


def test_a_walk_of_the_block_by_page_up_draws_its_next_step_ahead_in_the_next_range(page, drawing_ahead):
    """After a PageUp on the block (ten blocks, into another range), the block ten further on is drawn
    ahead once its range is read: a second PageUp is a swap of a chart drawn with the engine's numbers."""
    app_url, _ = drawing_ahead
    open_app(page, f"{app_url}/?lang=en&block=2")
    deadline = time.monotonic() + 300  # a wait, not a budget: the ranges beside are built after the page
    while "blocks-21" not in parts_built(page, app_url) and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    slider = page.get_by_role("slider", name=Text("en")("control.block"))
    slider.press("PageUp")
    wait_for_view(page, block=12)
    page.wait_for_function(AHEAD_OF, arg={"block": 12})
    page.evaluate(COUNT_SHOWN_DRAWS)
    slider.press("PageUp")
    wait_for_view(page, block=22)
    assert page.evaluate("() => window.__shownDraws") == 0
    assert_shows(page, ExplorerState(block=22))
    assert_healthy(page)
