"""The Depth lab page in Streamlit's AppTest: the user's stack under every comparison, each paper
preset, bad links and clamped setups, in both languages.

AppTest opens the default page first and then switches (as a visitor clicking the sidebar does):
a first run that starts on another page does not show app.py's URL warnings in AppTest, while a
real browser's deep link does (see tests/browser/test_lab_browser.py). Small stacks (width 16,
8 tokens, 5 blocks) keep the default runs quick; the full-size defaults, the long presets and the
whole language matrix are marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from blockstab import lab, papers
from blockstab.lab import COMPARISONS, MAX_LAB_DEPTH, LabSetup, check_budget, compared_setups, depth_curves
from blockstab.papers import CLAIMS, PAPERS
from blockstab.shipped import differences, shipped
from server import lab_runs
from server.lab_runs import _lab_runs
from server.lab_worker import in_worker
from support import APP, ROOT, lab_jobs
from support.pages import charts, says, tables
from support.paper_runs import paper_run
from ui.controls import BY_KEY, LAB_CONTROLS
from ui.lab_views import (
    PANELS,
    curves_figure,
    finding_rows,
    lab_setup,
    layer_zero,
    published_figure,
    published_notes,
    summary_rows,
    variant_label,
)
from ui.numbers import readable
from ui.text import LANGUAGES, Text

LAB = "pages/depth_lab.py"
DEFAULTS = {c.key: c.default for c in LAB_CONTROLS}
SMALL = {"lab_width": 16, "lab_tokens": 8, "lab_heads": 2, "lab_depth": 5}


@pytest.fixture(autouse=True)
def _no_wall_clock_deadline(monkeypatch):
    """A run here may take longer than the page's 20 s on a loaded machine (tests run a worker per
    core): these tests check what the page draws, so the deadline, which is wall-clock time, is far
    away (what a deadline stops is tested in test_lab_fair.py and test_lab_worker.py)."""
    monkeypatch.setattr(lab_runs, "LAB_SECONDS", 600.0)


def open_lab(lang: str = "en", timeout: float = 120, **query) -> AppTest:
    """The app opened with ``query`` in the URL, then switched to the Depth lab."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.query_params.update({"lang": lang, **{key: str(value) for key, value in query.items()}})
    at.run()
    at.switch_page(LAB).run()
    assert not at.exception, [e.value for e in at.exception][:1]
    assert at.title[0].value == Text(lang)("lab.title")
    return at


def shown_values(at: AppTest) -> dict:
    """Every lab control's value as the page's widgets show it."""
    values = {}
    for control in LAB_CONTROLS:
        kind = control.kind
        widgets = {"steps": at.select_slider, "int": at.slider, "toggle": at.toggle, "choice": at.radio}[kind]
        values[control.key] = widgets(key=control.key).value
    return values


def table_rows(at: AppTest, index: int = 0) -> list[dict]:
    return tables(at)[index]


def assert_chart_is(spec: dict, fig) -> None:
    """The page's Plotly spec draws the same traces (name, x and y, gaps included) as ``fig``."""
    assert [tr.get("name") for tr in spec["data"]] == [tr.name for tr in fig.data]
    for drawn, expected in zip(spec["data"], fig.data, strict=True):
        np.testing.assert_array_equal(np.asarray(drawn["x"], dtype=float), np.asarray(expected.x, dtype=float))
        y = np.asarray([np.nan if v is None else v for v in drawn["y"]], dtype=float)
        np.testing.assert_array_equal(y, np.asarray([np.nan if v is None else v for v in expected.y], dtype=float))


@pytest.fixture
def fresh_results():
    """The lab keeps results for every session in one cache: start and end a test without them."""
    _lab_runs.clear()
    yield
    _lab_runs.clear()


# ----------------------------------------------------------------------------------- the user's stack


def compare_case(compare: str, lang: str):
    quick = (compare, lang) in {("stabilisers", "en"), ("placement", "zh"), ("none", "en")}
    return pytest.param(compare, lang, marks=[] if quick else [pytest.mark.slow], id=f"{compare}-{lang}")


@pytest.mark.parametrize("compare, lang", [compare_case(c, lang) for c in COMPARISONS for lang in LANGUAGES])
def test_a_small_stack_draws_every_compared_run(compare, lang):
    t = Text(lang)
    at = open_lab(lang, lab_compare=compare, lab_placement="pre", **SMALL)
    assert not at.warning, [w.value for w in at.warning]
    values = shown_values(at)
    assert values == DEFAULTS | SMALL | {"lab_compare": compare, "lab_placement": "pre"}
    setup, notes = lab_setup(values)
    assert notes == []
    curves = {name: depth_curves(s) for name, s in compared_setups(setup, compare).items()}
    drawn = charts(at)
    assert set(drawn) == {"lab_curves"}
    assert len(drawn["lab_curves"]["data"]) == len(curves) * len(PANELS)
    assert_chart_is(drawn["lab_curves"], curves_figure(curves, t))
    assert table_rows(at) == summary_rows(curves, t)
    assert at.caption[-1].value == t("lab.init_note")


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_default_stack_renders(lang):
    t = Text(lang)
    at = open_lab(lang, timeout=600)
    assert not at.warning, [w.value for w in at.warning]
    assert shown_values(at) == DEFAULTS
    spec = charts(at)["lab_curves"]
    variants = compared_setups(LabSetup(), "stabilisers")
    assert len(spec["data"]) == len(variants) * len(PANELS)
    assert {len(tr["x"]) for tr in spec["data"]} == {LabSetup().depth, LabSetup().depth + 1}
    assert len(table_rows(at)) == len(variants)
    assert [s.value for s in at.subheader] == [t("lab.controls")]


# ------------------------------------------------------------------------------------ paper presets


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("paper", PAPERS)
def test_each_paper_preset_shows_its_shipped_verdict_and_findings_at_once(paper, lang, fresh_results):
    """Nothing is computed: the page draws the result shipped with the engine (held to it by
    tests/engine/test_shipped.py), says so, and offers to compute it here."""
    t = Text(lang)
    run = shipped(paper)
    at = open_lab(lang, lab_show=paper)
    assert _lab_runs().running == {} and _lab_runs().get(("paper", paper)) is None
    assert at.radio(key="lab_show").value == paper
    assert at.button(key="lab_run_again").label == t("lab.run_again")
    assert t("lab.shipped") in [c.value for c in at.caption]
    assert not at.warning, [w.value for w in at.warning]
    assert [s.value for s in at.subheader] == [t(f"paper.{paper}.title")]
    assert [s.value for s in at.success] == ([t("lab.all_pass")] if run.passed else [])
    assert [e.value for e in at.error] == ([] if run.passed else [t("lab.some_fail")])
    rows = table_rows(at)
    assert len(rows) == len(CLAIMS[paper])
    assert rows == finding_rows(run, t)
    assert [i.value for i in at.info] == [t(f"paper.{paper}.reading")]
    drawn = charts(at)
    captions = [c.value for c in at.caption]
    if paper == "geometry":
        assert set(drawn) == {"paper_geometry_2d", "paper_geometry_3d"}
    elif run.published:
        assert set(drawn) == {"paper_curves", "paper_published"}
        assert_chart_is(drawn["paper_curves"], curves_figure(run.curves, t))
        assert_chart_is(drawn["paper_published"], published_figure(run, t))
        assert t(f"paper.{paper}.figure_note", **layer_zero(run.published)) in captions
        assert set(published_notes(run, t)) <= set(captions)
        assert t(f"paper.{paper}.definition") in captions
    else:
        assert set(drawn) == {"paper_curves"}
        assert_chart_is(drawn["paper_curves"], curves_figure(run.curves, t))
    assert not at.sidebar.select_slider  # the stack's controls are not shown for a preset


def test_a_preset_that_fails_shows_the_failure(monkeypatch, fresh_results):
    """Dong et al.'s skip-connection claims with the skip connection taken away: the page must say so."""
    runs = papers._runs

    def without_skip(setups, *args, **kwargs):
        return runs({name: replace(s, residual=False) if name.startswith("skip.") else s
                     for name, s in setups.items()}, *args, **kwargs)

    monkeypatch.setattr(papers, "_runs", without_skip)
    monkeypatch.setattr(lab_runs, "in_worker", lab_jobs.in_this_thread)  # where the replaced engine runs
    monkeypatch.setitem(PAPERS, "dong", lambda progress=None: papers.dong(seeds=(0,), progress=progress))
    t = Text("en")
    at = open_lab("en", lab_show="dong")
    at.button(key="lab_run_again").click().run()
    assert not at.success
    assert [e.value for e in at.error] == [t("lab.some_fail")]
    changed = differences(PAPERS["dong"](), shipped("dong"))  # the skip claims, their curves, one seed's numbers
    assert changed and t("lab.recomputed_differs", count=len(changed)) in [c.value for c in at.caption]
    assert t("lab.shipped") not in [c.value for c in at.caption] and not at.button
    badges = [row[t("lab.col.badge")] for row in table_rows(at)]
    assert badges == [t("lab.pass"), t("lab.fail"), t("lab.fail"), t("lab.pass"), t("lab.fail")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_dong_preset_fed_other_tokens_names_every_curve_off(monkeypatch, fresh_results, lang):
    """Standard-normal tokens (the preset before issue #13): the Figure 2 badge fails and the page
    names pure attention and attention + MLP as off at layer 1, while the qualitative claims hold."""
    runs = papers._runs
    monkeypatch.setattr(papers, "_runs", lambda setups, *args, **kwargs: runs(
        {name: replace(s, embedding="normal") for name, s in setups.items()}, *args, **kwargs))
    monkeypatch.setattr(lab_runs, "in_worker", lab_jobs.in_this_thread)  # where the replaced engine runs
    monkeypatch.setitem(PAPERS, "dong", lambda progress=None: papers.dong(seeds=(0,), progress=progress))
    t = Text(lang)
    at = open_lab(lang, lab_show="dong")
    at.button(key="lab_run_again").click().run()
    assert [e.value for e in at.error] == [t("lab.some_fail")]
    rows = table_rows(at)
    badges = {claim: row[t("lab.col.badge")] for claim, row in zip(CLAIMS["dong"], rows, strict=True)}
    assert badges["figure_2"] == t("lab.fail")
    assert badges["doubly_exponential"] == badges["mlp_does_not_stop"] == t("lab.pass")
    captions = [c.value for c in at.caption]
    for variant in ("attention.bert", "mlp.bert"):
        off = [c for c in captions if says(c, lang, "lab.published.off") and variant_label(variant, t) in c]
        assert len(off) == 1 and "1" in off[0]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_dong_preset_shows_the_figure_badge_as_measured(lang):
    """With BERT's embedding output the badge does not pass: attention + skip is 0.117 off at
    layer 1; the page says which curve, where, and why (the layer-0 note)."""
    t = Text(lang)
    run = shipped("dong")
    at = open_lab(lang, lab_show="dong")
    assert [e.value for e in at.error] == [t("lab.some_fail")]
    row = table_rows(at)[CLAIMS["dong"].index("figure_2")]
    assert row[t("lab.col.badge")] == t("lab.fail")
    values = {k: readable(v) if isinstance(v, float) else v for k, v in findings_values(run, "figure_2").items()}
    assert row[t("lab.col.ours")] == t("paper.dong.finding.figure_2.ours", **values)
    assert values["skip"] == "0.117" and values["seeds"] == 32
    captions = [c.value for c in at.caption]
    off = t("lab.published.off", run=variant_label("skip.bert", t), tolerance="0.1", layers="1")
    assert [c for c in captions if says(c, lang, "lab.published.off")] == [off]
    assert captions.index(off) < captions.index(t("paper.dong.figure_note", **layer_zero(run.published)))
    assert t("paper.dong.definition") in captions


def findings_values(run, claim: str) -> dict:
    return next(f.values for f in run.findings if f.claim == claim)


TINY_GRADIENTS = {"lab_width": 2, "lab_tokens": 2, "lab_heads": 1, "lab_depth": 18, "lab_init": "bert",
                  "lab_seed": 0, "lab_placement": "post", "lab_norm": "layernorm", "lab_compare": "none"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_gradients_far_below_where_squares_underflow_are_shown(lang):
    """Issue #13's case: block 1's gradient is 7.43 × 10⁻¹⁷¹; the table and the panel show it."""
    t = Text(lang)
    at = open_lab(lang, **TINY_GRADIENTS)
    setup, notes = lab_setup(shown_values(at))
    assert notes == [] and setup == LabSetup(d_model=2, tokens=2, heads=1, depth=18, init="bert", seed=0,
                                             placement="post", norm="layernorm")
    curves = {"this": depth_curves(setup)}
    (row,) = table_rows(at)
    assert row == summary_rows(curves, t)[0]
    assert row[t("lab.col.gradient_ratio")] == "5.51 × 10⁻¹⁷¹"
    spec = charts(at)["lab_curves"]
    assert_chart_is(spec, curves_figure(curves, t))
    gradient = spec["data"][PANELS.index("gradient_norm")]["y"]
    assert len(gradient) == 18 and all(v is not None and v > 0 for v in gradient)
    assert gradient[0] == pytest.approx(7.43095e-171, rel=1e-5)


def test_a_run_waits_in_line_while_every_worker_is_busy_then_shows_its_result(monkeypatch, fresh_results):
    """Other sessions' runs hold every worker (server.shared_runs): the page's own run ("Run it again here")
    starts only once they end, and shows the same findings as ever, and says they agree with the shipped ones."""
    run, _ = paper_run("dong")  # the expected findings, from the preset itself (cached per test session)
    runs, release, started, released = _lab_runs(), threading.Event(), [], []
    monkeypatch.setattr(lab_runs, "in_worker", lambda *args: started.append(time.monotonic()) or in_worker(*args))
    busy = [threading.Thread(target=runs.run, args=(("busy", i), lambda progress: release.wait(60) and "done",
                                                     lambda waiting: None), daemon=True)
            for i in range(runs.workers)]
    for thread in busy:
        thread.start()
    deadline = time.monotonic() + 30
    while len(runs.running) < runs.workers:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    at = open_lab("en", lab_show="dong")
    assert started == [], "the page computed a preset it ships"
    threading.Timer(1.0, lambda: released.append(time.monotonic()) or release.set()).start()
    at.button(key="lab_run_again").click().run()
    assert len(started) == 1 and started[0] >= released[0], "the page ran before a worker was free"
    assert table_rows(at) == finding_rows(run, Text("en"))
    assert Text("en")("lab.recomputed_same") in [c.value for c in at.caption]  # the same as shipped
    for thread in busy:
        thread.join(30)
    assert runs.running == {} and runs.line == {}


# -------------------------------------------------------------------------------------- bad links

BAD = {"lab_width": "7", "lab_depth": "5000", "lab_heads": "abc", "lab_show": "nope"}


@pytest.mark.parametrize("lang", [pytest.param("en"), pytest.param("zh", marks=pytest.mark.slow)])
def test_bad_lab_values_in_the_link_warn_and_fall_back_to_defaults(lang):
    query = {"lab_tokens": "8"} | BAD  # 8 tokens keep the fallback stack (width 64, 48 blocks) quick
    at = open_lab(lang, **query)
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and says(warnings[0], lang, "url.ignored_list"), warnings  # one notice names all
    for key, value in list(BAD.items())[:5]:
        assert f"{key}={value}" in warnings[0]
    values = shown_values(at)
    assert values == DEFAULTS | {"lab_tokens": 8}
    for key in BAD:
        assert values[key] == BY_KEY[key].default
        assert key not in at.query_params or BY_KEY[key].parse(at.query_params[key]) is not None
    assert set(charts(at)) == {"lab_curves"}


def test_more_heads_than_features_give_the_heads_note():
    t = Text("en")
    at = open_lab("en", **SMALL | {"lab_width": 4, "lab_heads": 16, "lab_compare": "none"})
    assert [w.value for w in at.warning] == [t("lab.note.heads", heads=16, width=4)]
    assert at.select_slider(key="lab_heads").value == 16  # the control keeps the user's choice
    (spec,) = charts(at).values()
    setup = LabSetup(d_model=4, tokens=8, heads=4, depth=5)
    assert_chart_is(spec, curves_figure({"this": depth_curves(setup)}, t))


def test_an_over_budget_stack_is_clamped_with_a_note_and_still_drawn(monkeypatch):
    """A stack whose stream would not fit: the page draws the deepest stack that fits instead, and says so. (The
    stream's bound made small here, so that the clamped stack is quick to run; the real bounds' clamp of the
    largest stack a user can ask for is ``tests/views/test_lab_views.py``'s.)"""
    t = Text("en")
    monkeypatch.setattr(lab, "MAX_STREAM_BYTES", 8 * 16 * 64 * 13)  # 12 blocks' stream and the input's
    query = {"lab_width": 64, "lab_tokens": 16, "lab_depth": MAX_LAB_DEPTH, "lab_heads": 4,
             "lab_compare": "none", "lab_gradients": "false"}
    at = open_lab("en", **query)
    (note,) = [w.value for w in at.warning]
    assert says(note, "en", "lab.note.budget")
    setup, notes = lab_setup(shown_values(at))
    assert [key for key, _ in notes] == ["lab.note.budget"] and note == t(notes[0][0], **notes[0][1])
    assert setup.depth == 12 and str(setup.depth) in note
    check_budget(setup, gradients=False, runs=1)
    (spec,) = charts(at).values()
    assert len(spec["data"]) == 3  # no gradient panel
    assert all(len(tr["x"]) == setup.depth + 1 for tr in spec["data"])
    assert len(table_rows(at)) == 1


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_teachers_page_links_every_paper_preset(lang):
    t = Text(lang)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("pages/teachers.py").run()
    links = [(link.proto.label, link.proto.page, link.proto.query_string) for link in at.get("page_link")]
    assert links == [(t(f"paper.{p}.title"), "lab", f"lab_show={p}&lang={lang}") for p in PAPERS]


# As in tests/app/test_real_page.py: in a fresh process, as a server runs the page, which has set two
# BLAS threads for itself. tests/support/lab_probe.py records where each run computes, read inside the run:
# it wraps the engine in the probe process and, preloaded, in every worker forked for it.
BLAS_PROBE = """
import json, multiprocessing, os
from streamlit.testing.v1 import AppTest
from threadpoolctl import threadpool_info, threadpool_limits
import support.lab_probe, server.lab_runs

threadpool_limits(limits=2, user_api="blas")
before = sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})
multiprocessing.get_context("forkserver").set_forkserver_preload(["support.lab_probe"])
at = AppTest.from_file("app.py", default_timeout=120)
at.query_params.update(QUERY)
at.run()
at.switch_page("pages/depth_lab.py").run()
print(json.dumps({"pid": os.getpid(), "before": before, "errors": [str(e.value) for e in at.exception]}))
"""


def test_lab_runs_compute_in_a_low_priority_process_on_one_blas_thread(tmp_path):
    """Read inside each run, not a call checked: another process (the server's GIL is not held),
    at nice 19, on one BLAS thread though the server set two."""
    record = tmp_path / "runs.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env |= {"LAB_PROBE_FILE": str(record), "PYTHONPATH": str(ROOT / "tests")}
    query = {"lang": "en", "lab_compare": "stabilisers", **{key: str(value) for key, value in SMALL.items()}}
    done = subprocess.run([sys.executable, "-c", BLAS_PROBE.replace("QUERY", repr(query))], cwd=APP.parent,
                          env=env, capture_output=True, text=True, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert not found["errors"], found["errors"]
    assert found["before"] == [2], "the probe could not set two BLAS threads: nothing would show a missing pin"
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(runs) == len(compared_setups(lab_setup(DEFAULTS | SMALL)[0], "stabilisers"))
    assert all(run["pid"] != found["pid"] and run["nice"] == 19 and run["blas"] == [1] for run in runs), runs
