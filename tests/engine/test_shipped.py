"""Tests of blockstab.shipped: every preset's shipped result is what the engine computes now, whole (every seed,
every curve), and the comparison that says so can fail."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import numpy as np
import pytest

from blockstab import shipped
from blockstab.papers import PAPERS, SEEDS
from scripts import ship_papers
from support.paper_runs import paper_run


@pytest.mark.parametrize("paper", PAPERS)
def test_the_shipped_result_is_what_the_engine_computes(paper):
    run, _ = paper_run(paper)  # the preset computed afresh with its own seeds (shared with test_papers.py)
    assert shipped.differences(shipped.shipped(paper), run) == [], \
        "the engine or the preset changed: run .venv/bin/python -m scripts.ship_papers"
    assert shipped.shipped(paper).passed == run.passed


def test_the_shipped_files_are_small_and_one_per_preset():
    files = sorted(shipped.FOLDER.iterdir())
    assert [f.name for f in files] == sorted(f"{paper}.json" for paper in PAPERS)
    assert sum(f.stat().st_size for f in files) < 100 * 1024  # 62 KiB when written


def test_a_record_reads_back_as_the_same_run_to_the_last_bit():
    run = shipped.shipped("dong")
    again = shipped.from_record(json.loads(shipped.to_text(run)))
    assert shipped.differences(run, again) == []
    for variant, curves in run.curves.items():
        for name in shipped.CURVE_FIELDS:
            np.testing.assert_array_equal(getattr(again.curves[variant], name), getattr(curves, name))
        assert again.curves[variant].setup == curves.setup
    assert again.findings == run.findings and [type(v) for f in again.findings for v in f.values.values()] == \
        [type(v) for f in run.findings for v in f.values.values()]  # an int stays an int


def changed(run, change):
    record = shipped.record(run)
    change(record)
    return shipped.from_record(record)


def test_differences_name_each_changed_verdict_number_curve_and_setup():
    run = shipped.shipped("dong")

    def off(record):
        record["findings"][4]["passed"] = True
        record["findings"][1]["values"]["kept"] *= 1 + 1e-5
        record["curves"]["skip.bert"]["stream_rms"][3] *= 1 + 1e-5
        record["curves"]["mlp.fan_in"]["setup"]["depth"] = 11
        record["published"][0]["ours"][12] += 0.01

    assert shipped.differences(run, changed(run, off)) == [
        "curves.mlp.fan_in.setup.depth", "curves.skip.bert.stream_rms", "findings.1.values.kept",
        "findings.4.passed", "published.0.ours"]
    missing = changed(run, lambda record: record["curves"].pop("skip.bert"))
    assert "curves.skip.bert.relative_residual" in shipped.differences(run, missing)
    assert shipped.differences(run, replace(run, published=())) != []


def test_differences_pass_over_rounding_and_noise_below_the_float_floor():
    run = shipped.shipped("dong")

    def rounded(record):
        curve = record["curves"]["attention.bert"]["relative_residual"]
        curve[1] *= 1 + 1e-9  # another BLAS kernel's last bits
        curve[-1] = 3e-16 if curve[-1] < 1e-16 else curve[-1]  # below the float64 floor: noise

    assert shipped.differences(run, changed(run, rounded)) == []


@pytest.mark.parametrize("field, value", [("format", shipped.FORMAT + 1), ("seeds", [*SEEDS, 99])])
def test_a_file_of_another_layout_or_other_seeds_is_refused(field, value):
    record = shipped.record(shipped.shipped("geometry")) | {field: value}
    with pytest.raises(ValueError, match="format"):
        shipped.from_record(record)


def test_the_script_writes_what_the_lab_reads(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(shipped, "FOLDER", tmp_path)
    monkeypatch.setattr(sys, "argv", ["ship_papers", "geometry"])
    ship_papers.main()
    assert [f.name for f in tmp_path.iterdir()] == ["geometry.json"]
    assert "geometry.json" in capsys.readouterr().out
    written = shipped.from_record(json.loads((tmp_path / "geometry.json").read_text(encoding="utf-8")))
    assert shipped.differences(written, paper_run("geometry")[0]) == []
    monkeypatch.setattr(sys, "argv", ["ship_papers", "nope"])
    with pytest.raises(SystemExit):
        ship_papers.main()
