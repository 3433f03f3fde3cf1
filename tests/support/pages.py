"""The app in Streamlit's AppTest: run it, and read what a page shows (charts, tables, notices)."""

import base64
import json
import re

import numpy as np
from streamlit.testing.v1 import AppTest

from support import APP
from support.explorer_view import shown
from support.text import says


def run_app(context: dict | None = None, **query) -> AppTest:
    """The app run once on a link's ``query`` (and a browser's ``context``, such as its locale)."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params.update(query)
    if context:
        at.context = context
    return at.run()


def run_page(page: str | None = None, **query) -> AppTest:
    """The app run on ``query``, then switched to ``page``; it must raise nothing."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(query)
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception][:1]
    return at


def decode(value):
    """Plotly's JSON with every ``{"dtype", "bdata"}`` typed array turned into a NumPy array."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]).newbyteorder("<"))
            if "shape" in value:
                array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
            return array
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def charts(at: AppTest) -> dict[str, dict]:
    """Every chart on the page: Streamlit's, and the instant Explorer's for the view it holds."""
    instant = shown(at)["figures"] if at.get("bidi_component") else {}
    return {el.key: decode(json.loads(el.proto.spec)) for el in at.get("plotly_chart")} | decode(instant)


def xy(trace: dict) -> np.ndarray:
    return np.column_stack([np.asarray(trace["x"], dtype=float), np.asarray(trace["y"], dtype=float)])


def same_data(spec: dict, fig) -> bool:
    """The chart in the page draws the same points as the pure figure function."""
    if len(spec["data"]) != len(fig.data):
        return False
    for drawn, expected in zip(spec["data"], fig.data, strict=True):
        if drawn.get("name") != expected.name:
            return False
        a = xy(drawn)
        b = np.column_stack([np.asarray(expected.x, dtype=float), np.asarray(expected.y, dtype=float)])
        if a.shape != b.shape or not np.allclose(a, b, equal_nan=True):
            return False
    return True


def tables(at: AppTest) -> list[list[dict]]:
    """Every Markdown table on the page (ui.views.tables.markdown_table) as rows of column -> cell text."""
    found = []
    for element in at.markdown:
        lines = element.value.splitlines()
        if len(lines) < 2 or not lines[0].startswith("| ") or not set(lines[1]) <= {"|", "-"}:
            continue
        split = lambda line: [re.sub(r"\\(.)", r"\1", c.strip()).replace("\u2060", "")  # noqa: E731
                              for c in re.split(r"(?<!\\)\|", line)[1:-1]]  # word joiners: markdown_text
        columns = split(lines[0])
        found.append([dict(zip(columns, split(line), strict=True)) for line in lines[2:]])
    return found


def url_warnings(at: AppTest, lang: str = "en") -> list[str]:
    """The notices naming link settings the app ignored."""
    return [w.value for w in at.warning if says(w.value, lang, "url.ignored")]
