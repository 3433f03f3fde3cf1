"""What a link's notice says is what the page shows (issue #15, wrong fallbacks): a value the app
refuses is named once and its default is used, whatever Streamlit's own parsing would make of
it; a flood of parameters is one short notice; a query Streamlit drops whole for its size is
reported; a file names the real reason it is refused."""

import base64
import json
import re
import string
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from blockstab.scenario import MAX_URL, TRIAGE, Problem, decode, from_json, to_json
from support.explorer_view import view
from support.pages import run_page
from ui.controls import BY_KEY, TOUR_STEPS
from ui.lessons import TOUR
from ui.text import Text, catalog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)




def says(text: str, key: str, lang: str = "en") -> bool:
    parts = [re.escape(lit) + ("(.+?)" if field is not None else "")
             for lit, field, _, _ in string.Formatter().parse(catalog(lang)[key])]
    return re.fullmatch("".join(parts), text.strip(), re.DOTALL) is not None


def slider(at: AppTest, key: str):
    """A number control's value: a Streamlit slider's, or the instant Explorer's view."""
    if BY_KEY[key].instant:
        return view(at)[key]
    return next(s for s in at.slider if s.key == key).value


@pytest.mark.parametrize("raw", ["²", "①", "٣", "9" * 5000, "101", "9", "+3", " 3", "3.0"])
def test_a_step_the_tour_cannot_show_opens_step_one_with_a_notice(raw):
    at = run_page("pages/tour.py", lang="en", step=raw)
    assert at.subheader[0].value == Text("en")(f"tour.{TOUR[0].id}.title")
    (warning,) = at.warning
    assert says(warning.value, "url.ignored") and "step=" in warning.value


def test_the_tour_step_range_is_the_tour():
    assert BY_KEY["step"].high == TOUR_STEPS == len(TOUR)


@pytest.mark.parametrize("key,raw", [("depth", "1e1"), ("depth", "2.9"), ("block", "3e0"), ("depth", "1_0"),
                                     ("depth", "+7"), ("block", " 10"), ("depth", "１０")])
def test_a_number_the_check_refuses_is_not_the_one_shown(key, raw):
    at = run_page(lang="en", **{key: raw})
    (warning,) = at.warning
    assert says(warning.value, "url.ignored") and f"{key}=" in warning.value
    assert slider(at, key) == BY_KEY[key].default
    assert key not in at.query_params  # the link now says what the page shows


def test_a_lab_depth_in_e_notation_runs_the_default_depth():
    at = run_page("pages/depth_lab.py", lang="en", lab_depth="1e3", lab_width="4", lab_tokens="2", lab_heads="1",
             lab_gradients="false", lab_compare="none")
    assert [w.value for w in at.warning if says(w.value, "url.ignored")] != []
    assert slider(at, "lab_depth") == BY_KEY["lab_depth"].default


def test_many_unknown_parameters_are_one_short_notice():
    at = run_page(lang="en", **{f"p{n}": "1" for n in range(998)})
    (warning,) = at.warning
    assert says(warning.value, "url.ignored_list")
    assert warning.value.count("p") < 20 and Text("en")("url.more", count=993) in warning.value


@pytest.mark.parametrize("query", [{"sc": "v1." + "A" * 600_000}, {f"k{n}": "1" for n in range(1001)}])
def test_a_query_streamlit_drops_for_its_size_is_reported(query):
    at = run_page(**query, lang="zh")
    (warning,) = at.warning
    assert says(warning.value, "url.dropped", "zh") or says(warning.value, "url.dropped")


def test_a_file_writing_numbers_as_text_is_refused_with_the_reason():
    doc = json.loads(to_json(TRIAGE))
    doc["tokens"][0]["x"], doc["tokens"][2]["y"] = "1", "-0.5"
    assert from_json(json.dumps(doc)) == [Problem("file_number_text", 1, "x", '"1"'),
                                          Problem("file_number_text", 3, "y", '"-0.5"')]


def test_deep_nesting_is_named_as_such():
    assert from_json("[" * 5000 + "]" * 5000) == [Problem("file_too_deep")]
    deep = "v1." + base64.urlsafe_b64encode(b"[" * 2200 + b"]" * 2200).decode().rstrip("=")
    assert len(deep) <= MAX_URL and decode(deep) == [Problem("payload_too_deep")]
