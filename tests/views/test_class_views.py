"""The live class's answers, revealed: the bar chart and its description come from the class's counts."""

import csv
import io
import re

import pytest
import zxingcpp
from PIL import Image

from support.figures import contrast
from ui.class_views import (
    SUMMARY_COLUMNS,
    answers_description,
    answers_figure,
    link_code,
    link_code_svg,
    share,
    summary_csv,
    summary_rows,
)
from ui.lessons import ASKABLE, NUMBERS, QUESTIONS, engine_number
from ui.live_class import (
    answer,
    ask,
    end,
    join,
    new_code,
    new_key,
    new_student,
    reveal,
    rounds,
    start,
    view_state,
    vote_again,
)
from ui.text import Text

LANGS = pytest.mark.parametrize("lang", ["en", "zh"])


def asked(question: int, students: int):
    """A class of ``students`` seats asked ``question`` (an index into ASKABLE), and their tokens."""
    tokens = [new_student() for _ in range(students)]
    c = start(new_code(), new_key(), "en")
    for token in tokens:
        c = join(c, token, 0.0, 200)
    return ask(c, question), tokens


def revealed(question: int, picks: list[int], students: int):
    """A class of ``students`` on ``question``, the first ones having picked ``picks`` (choice indices)."""
    c, tokens = asked(question, students)
    choices = QUESTIONS[question].choices
    for token, pick in zip(tokens, picks, strict=False):
        c = answer(c, token, choices[pick])
    return reveal(c)


@LANGS
@pytest.mark.parametrize(("question", "picks", "students"), [(0, [0, 1, 1, 2, 1], 7), (3, [1] * 12 + [0] * 3, 15),
                                                              (2, [], 4)])
def test_each_bar_is_a_choices_count_and_share_and_the_right_one_is_marked(lang, question, picks, students):
    t = Text(lang)
    c = revealed(question, picks, students)
    q = QUESTIONS[question]
    bars = answers_figure(c, t).to_plotly_json()["data"][0]
    expected = [picks.count(i) for i in range(len(q.choices))]
    assert list(bars["x"]) == expected
    assert bars["text"] == [f"{n} ({share(n, len(picks))})" for n in expected]
    labels = [label.replace("<br>", "" if lang == "zh" else " ") for label in bars["y"]]  # (wrapped lines)
    assert labels == [t("class.right_choice", choice=t(q.choice_key(choice))) if choice == q.answer
                      else t(q.choice_key(choice)) for choice in q.choices]
    title = answers_figure(c, t).layout.title.text.replace("<br>", " ")
    assert title.replace(" ", "") == t("class.answers_title", answered=len(picks), students=students).replace(" ", "")


@LANGS
def test_the_description_says_what_the_bars_show(lang):
    t = Text(lang)
    c = revealed(1, [2, 2, 0], 5)
    text = answers_description(c, t)
    q = QUESTIONS[1]
    assert text.startswith(t("class.describe", answered=3, students=5, choices="").rstrip("。."))
    for choice, n in zip(q.choices, (1, 0, 2), strict=True):
        name = t(q.choice_key(choice))
        name = t("class.right_choice", choice=name) if choice == q.answer else name
        assert t("class.describe_choice", choice=name, count=n, share=share(n, 3)) in text


@LANGS
def test_after_a_vote_again_a_bar_per_round_each_rounds_counts_and_both_said_in_words(lang):
    t, q = Text(lang), QUESTIONS[0]
    c, tokens = asked(0, 6)
    for token, pick in zip(tokens, (0, 0, 1, 2, 0), strict=False):
        c = answer(c, token, q.choices[pick])
    c = vote_again(c)
    for token, pick in zip(tokens, (1, 1, 1, 1, 2, 1), strict=True):
        c = answer(c, token, q.choices[pick])
    c = reveal(c)
    first, second = (dict(result.counts) for result in rounds(c))
    figure = answers_figure(c, t).to_plotly_json()
    assert [bars["name"] for bars in figure["data"]] == [t("class.round", n=1), t("class.round", n=2)]
    assert [list(bars["x"]) for bars in figure["data"]] == [[tally[k] for k in q.choices] for tally in (first, second)]
    assert figure["data"][1]["text"] == [f"{second[k]} ({share(second[k], 6)})" for k in q.choices]
    assert figure["layout"]["showlegend"]
    assert figure["data"][0]["marker"]["pattern"]["shape"] == "/"  # the rounds told apart not by colour alone
    text = answers_description(c, t)
    for n, (tally, answered) in enumerate(((first, 5), (second, 6)), 1):
        said = text.split(t("class.round", n=n))[1]
        assert said.lstrip(":： ").startswith(t("class.describe", answered=answered, students=6, choices="")[:4])
        name = t(q.choice_key(q.choices[1]))
        name = t("class.right_choice", choice=name) if q.choices[1] == q.answer else name
        assert t("class.describe_choice", choice=name, count=tally[q.choices[1]],
                 share=share(tally[q.choices[1]], answered)) in said.split(t("class.round", n=2))[0]
    rows = summary_rows(c, t)
    assert [row[t("class.summary.round")] for row in rows] == [1, 2]


@LANGS
def test_a_numbers_reveal_is_a_dot_per_answer_at_its_number_the_engines_value_marked_and_said(lang):
    t, q = Text(lang), NUMBERS[0]
    c, tokens = asked(ASKABLE.index(q), 5)
    typed = (c.value, c.value, 5, 12)
    for token, number in zip(tokens, typed, strict=False):
        c = answer(c, token, str(number))
    c = reveal(c)
    figure = answers_figure(c, t).to_plotly_json()
    (dots,) = figure["data"]
    assert sorted(zip(dots["x"], dots["y"], strict=True)) == sorted(
        (number, k) for number in set(typed) for k in range(1, typed.count(number) + 1))
    (line,) = figure["layout"]["shapes"]
    assert line["x0"] == line["x1"] == c.value == engine_number(q, view_state(()))
    assert figure["layout"]["annotations"][0]["text"] == t("class.engine_value", value=c.value)
    assert figure["layout"]["xaxis"]["title"]["text"] == t(q.number.unit)
    said = answers_description(c, t)
    numbers = t("describe.separator").join(f"{n} ({typed.count(n)})" for n in sorted(set(typed)))
    assert said == t("class.describe_numbers", answered=4, students=5, numbers=numbers, value=c.value, right=2,
                     share=share(2, 4))
    row = summary_rows(c, t)[-1]
    assert (row[t("class.summary.right")], row[t("class.summary.share_right")]) == (str(c.value), "50")


def test_shares_are_whole_percentages_and_nobody_is_zero():
    assert [share(1, 3), share(2, 3), share(0, 0), share(5, 5)] == ["33 %", "67 %", "0 %", "100 %"]


@pytest.mark.parametrize("projector", [False, True])
def test_chart_text_meets_wcag_aa(projector):
    layout = answers_figure(revealed(0, [0, 1], 2), Text("en"), projector).to_plotly_json()
    bars, layout = layout["data"][0], layout["layout"]
    colours = [*bars["textfont"]["color"], layout["title"]["font"]["color"], layout["font"]["color"],
               *(layout[axis][part]["color"] if part == "tickfont" else layout[axis]["title"]["font"]["color"]
                 for axis in ("xaxis", "yaxis") for part in ("tickfont", "title"))]
    assert all(contrast(colour) >= 4.5 for colour in colours), colours


@pytest.mark.parametrize("link", ["http://192.168.1.20:8501/join?class=ACDEFG",
                                  "https://blockstab.school.example/join?class=XY3479&lang=zh"])
def test_the_join_code_reads_back_as_the_link(link):
    """A QR reader (zxing-cpp) reads the link back from the code, as a phone's camera would."""
    png = io.BytesIO()
    link_code(link).save(png, kind="png", scale=8, border=4)
    png.seek(0)
    assert [found.text for found in zxingcpp.read_barcodes(Image.open(png))] == [link]


def test_the_join_code_svg_is_dark_on_white_and_larger_for_the_projector():
    small, large = link_code_svg("http://a/join?class=ACDEFG"), link_code_svg("http://a/join?class=ACDEFG", True)
    width = [int(re.search(r'width="(\d+)"', svg).group(1)) for svg in (small, large)]
    assert width[1] == 2 * width[0]
    colours = [re.search(rf'{attribute}="#([0-9a-fA-F]+)"', small).group(1) for attribute in ("stroke", "fill")]
    dark, light = ("#" + (c if len(c) == 6 else "".join(2 * d for d in c)) for c in colours)  # (#fff is #ffffff)
    assert contrast(dark, light) >= 7, (dark, light)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_and_its_csv_say_each_questions_counts_and_share_right_and_nothing_of_who(lang):
    t = Text(lang)
    c = revealed(0, [0, 1, 1, 2, 1], 7)
    seated, right = list(c.seats), QUESTIONS[0].choices.index(QUESTIONS[0].answer)
    c = end(ask(c, 3))  # then question 4, asked and not answered, and the class ended
    rows = summary_rows(c, t)
    header = [t(f"class.summary.{column}") for column in SUMMARY_COLUMNS]
    assert [list(row) for row in rows] == [header, header]
    first = list(rows[0].values())
    assert first[:2] == [1, 1] and first[2] == t(f"ex.{QUESTIONS[0].id}.prompt") and first[3] == 5
    assert first[4] == "; ".join(f"{t(QUESTIONS[0].choice_key(ch))} ({[0, 1, 1, 2, 1].count(i)})"
                                 for i, ch in enumerate(QUESTIONS[0].choices))
    assert first[5] == t(QUESTIONS[0].choice_key(QUESTIONS[0].answer))
    assert first[6] == str(round(100 * [0, 1, 1, 2, 1].count(right) / 5))
    assert list(rows[1].values())[3] == 0 and list(rows[1].values())[6] == ""
    made = summary_csv(c, t)
    assert made.startswith(b"\xef\xbb\xbf")  # UTF-8's mark: a spreadsheet reads Chinese as such
    read = list(csv.reader(io.StringIO(made.decode("utf-8-sig"))))
    assert read[0] == header and read[1] == [str(v) for v in first] and len(read) == 3
    assert not any(token in made.decode("utf-8-sig") for token in seated)
