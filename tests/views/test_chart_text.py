"""Chart titles wrapped to fit the narrowest chart (ui.views.style.wrap), and the phone layout."""

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.controls import ExplorerState
from ui.text import LANGUAGES, Text, catalog
from ui.views import explore
from ui.views.depth import readouts_figure
from ui.views.geometry import geometry_2d_figure
from ui.views.style import LINE_WIDTH, wrap


def columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_wrap_breaks_latin_between_words_and_chinese_anywhere():
    assert wrap("The sentence before any block: one arrow per token", 32) == \
        "The sentence before any block:<br>one arrow per token"
    assert wrap("进入任何 block 之前的句子：每个 token 一支箭头", 20) == \
        "进入任何 block 之前<br>的句子：每个 token<br>一支箭头"
    assert wrap("short") == "short"
    assert wrap("Inside block 1: up to normalized ①") == "Inside block 1: up to normalized ①"  # no lone ①


TEXT = st.lists(st.sampled_from(["block", "token", "归一化", "残差连接", "(°, log)", "：", "，", "x", "10⁻¹⁵", "①",
                                 "+", "F(x)", "「x"]),
                max_size=30).map(lambda words: " ".join(words).replace(" ：", "：").replace(" ，", "，"))


@given(TEXT, st.integers(min_value=8, max_value=60))
def test_wrapped_lines_fit_and_keep_every_word(text, width):
    kept = wrap(text, width).split("<br>")  # a sum's spaces are kept (no-break spaces)
    lines = [line.replace("\u00a0", " ") for line in kept]
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    for line in kept[:-1]:  # the last may take a two-column tail rather than leave it alone
        assert columns(line) <= width or " " not in line.strip()  # longer only where nothing may break
    assert all(line == line.strip() for line in lines)
    assert not any(line[:1] in "：，)" for line in lines[1:])  # punctuation never starts a line
    assert not any(line.endswith("「") for line in lines[:-1])  # nor does an opening bracket end one
    for before, after in zip(lines, lines[1:], strict=False):  # a sum stays on one line
        assert not (re.search(r"[\w)] \+$", before) and re.match(r"\w", after)), (before, after)
        assert not (re.search(r"[\w)]$", before) and re.match(r"\+ \w", after)), (before, after)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_block_title_keeps_a_formula_and_its_brackets_on_one_line(lang):
    t = Text(lang)
    sums = [text for key, text in catalog(lang).items() if key.startswith("stage.") and re.search(r"\w \+ \w", text)]
    assert "x + F(x)" in sums or any("x + F(x)" in text for text in sums)
    for stage in sums:
        lines = wrap(t("fig.block.title", block=100, stage=stage)).replace("\u00a0", " ").split("<br>")
        formula = re.search(r"\S+ \+ \S+", stage).group(0).strip("「」")
        assert any(formula in line for line in lines), lines
        assert not any(line.endswith("「") for line in lines[:-1]), lines


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_chart_title_the_explorer_draws_fits_the_narrowest_chart(lang):
    t = Text(lang)
    for key in ("fig.tokens.title", "fig.depth.title", "fig.block.title", "geometry.title_2d", "geometry.title_3d"):
        text = t(key, depth=100, block=100, stage=t("stage.attention_residual.no_residual"))
        assert all(columns(line) <= LINE_WIDTH + 2 for line in wrap(text).split("<br>")), text


def test_on_a_phone_the_readouts_and_geometry_panels_stack():
    t = Text("en")
    for phone in (False, True):
        state = ExplorerState(phone=phone)
        readouts = readouts_figure(state, explore(state), t)
        lefts = {round(readouts.layout[f"xaxis{i}"].domain[0], 3) for i in ("", 2, 3, 4, 5, 6)}
        assert len(lefts) == (1 if phone else 2)
        assert readouts.layout.height > (1100 if phone else 700)
        geometry = geometry_2d_figure(state, t)
        assert (geometry.layout.xaxis.domain == geometry.layout.xaxis2.domain) == phone
