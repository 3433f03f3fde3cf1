"""The take-home Explorer in real Chromium: the folder ``python -m ui.take_home`` writes, opened
from ``file://`` with every request outside the folder refused, switches, moves the depth, the block
and the stage, and draws all three charts, the verdict and the numbers table to the engine's
numbers, in both languages; the Explorer's "Download this Explorer" gives the same folder, zipped,
opening on the view switched to in the browser."""

import subprocess
import sys
import zipfile

import pytest

from blockstab.scenario import PRESETS
from support import ROOT
from support.browser import (
    IDLE,
    REDRAWN_AFRESH,
    SVGS_HEARD,
    assert_shows,
    click_label,
    open_app,
    set_depth,
    wait_for_view,
)
from ui.bundle import PARTS, read_part
from ui.controls import ExplorerState
from ui.student_page import plotly_script
from ui.take_home import LANG_TAGS
from ui.text import Text

pytestmark = pytest.mark.browser
EXAMPLES = {"en": "lesson", "zh": "support"}  # the lesson's sentence, and a preset's
FILES = {"index.html", "explorer.js", "explorer.css", "plotly-basic.min.js", "bundle/index.js",
         *(f"bundle/{name}.js" for name in PARTS)}


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def exported(request, tmp_path_factory):
    """(language, folder): the take-home Explorer written by the command a teacher runs."""
    lang, out = request.param, tmp_path_factory.mktemp(f"take-home-{request.param}")
    subprocess.run([sys.executable, "-m", "ui.take_home", "--out", str(out), "--lang", lang,
                    "--sc", EXAMPLES[lang]], cwd=ROOT, check=True, timeout=600, capture_output=True)
    return lang, out


def open_folder(new_page, folder, lang: str, width: int = 1280, height: int = 720):
    """The folder's index.html in a new tab, every request outside the folder refused and recorded."""
    page = new_page(width, height, locale={"en": "en-US", "zh": "zh-CN"}[lang])
    page.outside = []
    inside = folder.as_uri() + "/"
    page.on("request", lambda r: r.url.startswith(inside) or page.outside.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(inside) else route.abort())
    page.goto(inside + "index.html")
    wait_for_view(page)
    return page


def test_the_folder_holds_the_page_the_bundle_and_the_phones_plotly_and_nothing_else(exported):
    lang, folder = exported
    assert {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} == FILES
    assert (folder / "plotly-basic.min.js").read_bytes() == plotly_script()  # the partial bundle a class's phones load
    assert read_part((folder / "bundle" / "index.js").read_text(encoding="ascii"))["built"] == sorted(PARTS)
    assert f'<html lang="{LANG_TAGS[lang]}">' in (folder / "index.html").read_text(encoding="utf-8")


def test_every_switch_the_depth_the_block_and_the_stage_work_offline(new_page, exported):
    lang, folder = exported
    t, example = Text(lang), PRESETS[EXAMPLES[lang]]
    page = open_folder(new_page, folder, lang)
    assert page.evaluate("document.documentElement.lang") == LANG_TAGS[lang]
    marked = page.evaluate("() => [...document.querySelectorAll('.instant-controls [lang]')]"
                           ".map(e => e.textContent + ' ' + e.lang)")  # English names on a Chinese page: their voice
    assert marked == ([] if lang == "en" else ["RMSNorm en", "LayerNorm en", "Post-LN en", "Pre-LN en"])
    view = {}
    assert_shows(page, ExplorerState(example=example), lang)
    for label, change in (("control.residual", {"residual": False}), ("control.norm", {"norm": False}),
                          ("option.placement.pre", {"placement": "pre"}), ("control.norm", {"norm": True}),
                          ("option.norm_kind.layernorm", {"norm_kind": "layernorm"}),
                          ("control.residual", {"residual": True})):
        click_label(page, t(label))
        view |= change
        wait_for_view(page, **change)
        assert_shows(page, ExplorerState(example=example, **view), lang)
    set_depth(page, 63)
    set_depth(page, 57, key="block")  # another block range: read from the folder
    page.wait_for_selector(".instant-place-block:not(.instant-waiting)")
    click_label(page, t("option.focus.ffn_norm"))
    wait_for_view(page, focus="ffn_norm")
    assert_shows(page, ExplorerState(example=example, depth=63, block=57, focus="ffn_norm", **view), lang)
    assert page.evaluate(SVGS_HEARD) == 0  # each chart is named in words: its tick labels are not read beside it,
    page.evaluate(REDRAWN_AFRESH)
    assert page.evaluate(SVGS_HEARD) == 0  # not even once Plotly drew its SVGs anew
    assert page.outside == [] and page.js_errors == []


def test_the_explorers_download_is_this_folder_zipped_opening_on_the_view_switched_to(new_page, app_url, tmp_path):
    page = new_page(1280, 900)
    open_app(page, f"{app_url}/?lang=zh&scenario=confirmed")
    click_label(page, Text("zh")("control.residual"))
    set_depth(page, 7)
    page.wait_for_function("() => location.search.includes('depth=7')")  # the report-back has run
    page.wait_for_selector(IDLE, state="attached")  # and drawn the buttons for this view
    with page.expect_download(timeout=300_000) as download:
        page.get_by_role("button", name=Text("zh")("download.take_home")).click()
    download.value.save_as(tmp_path / "take-home.zip")
    archive = zipfile.ZipFile(tmp_path / "take-home.zip")
    assert download.value.suggested_filename == "blockstab-explorer.zip"
    assert {name.removeprefix("blockstab-explorer/") for name in archive.namelist()} == FILES
    archive.extractall(tmp_path)
    folder = tmp_path / "blockstab-explorer"
    opened = open_folder(new_page, folder, "zh")
    assert_shows(opened, ExplorerState(scenario="confirmed", residual=False, depth=7), "zh")
    assert opened.outside == [] and opened.js_errors == []
