"""Tests of the command line, ``python -m blockstab`` (blockstab.cli)."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from blockstab.block import POST_STAGES, PRE_STAGES, StackConfig
from blockstab.cli import main
from blockstab.lesson import lesson_trace
from blockstab.readouts import angle_degrees

REPO_ROOT = Path(__file__).resolve().parents[2]
STAGES = 7
TOKENS = 5
FIELDS = ["scenario", "block", "stage", "token", "symptom_cause", "recovery_state"]


def run(capsys, *argv):
    assert main(list(argv)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def json_rows(capsys, *argv):
    return json.loads(run(capsys, "trace", "--format", "json", *argv))


# ---------------------------------------------------------------------------------------- formats


@pytest.mark.parametrize(
    "argv, scenarios, depth, tokens",
    [
        ([], 2, 1, 1),
        (["--depth", "3"], 2, 3, 1),
        (["--scenario", "confirmed", "--depth", "2"], 1, 2, 1),
        (["--scenario", "not-confirmed", "--depth", "4", "--all-tokens"], 1, 4, TOKENS),
        (["--depth", "2", "--all-tokens", "--placement", "pre", "--norm", "layernorm"], 2, 2, TOKENS),
    ],
)
def test_row_counts_in_every_format(capsys, argv, scenarios, depth, tokens):
    expected = scenarios * depth * STAGES * tokens

    rows = json_rows(capsys, *argv)
    assert isinstance(rows, list)
    assert len(rows) == expected
    assert all(list(r) == FIELDS for r in rows)

    text = run(capsys, "trace", "--format", "csv", *argv)
    reader = csv.DictReader(io.StringIO(text))
    assert "symptom_cause" in reader.fieldnames
    assert "recovery_state" in reader.fieldnames
    assert reader.fieldnames == FIELDS
    csv_rows = list(reader)
    assert len(csv_rows) == expected

    table = run(capsys, "trace", *argv).rstrip("\n").split("\n")
    header, rule, body = table[0], table[1], table[2:]
    assert header.split() == FIELDS
    assert set(rule) == {"-"}
    assert len(body) == expected
    for line in body:
        fields = line.split()
        assert len(fields) == 6
        float(fields[4]), float(fields[5])


def test_formats_agree_and_match_the_engine(capsys):
    argv = ("--depth", "2", "--all-tokens", "--norm", "layernorm", "--placement", "pre", "--residual", "off")
    rows = json_rows(capsys, *argv)
    csv_rows = list(csv.DictReader(io.StringIO(run(capsys, "trace", "--format", "csv", *argv))))
    table = run(capsys, "trace", *argv).rstrip("\n").split("\n")[2:]
    trace = lesson_trace(StackConfig(depth=2, norm="layernorm", placement="pre", residual=False))
    i = 0
    for b, scenario in enumerate(("confirmed", "not_confirmed")):
        for block in range(2):
            for s, stage in enumerate(PRE_STAGES):
                for t in range(TOKENS):
                    row, crow, trow = rows[i], csv_rows[i], table[i].split()
                    assert (row["scenario"], row["block"], row["stage"]) == (scenario, block + 1, stage)
                    want = trace.values[block, s, b, t]
                    got = [row["symptom_cause"], row["recovery_state"]]
                    assert_allclose(got, want, rtol=1e-15)
                    assert_allclose([float(crow["symptom_cause"]), float(crow["recovery_state"])], want, rtol=1e-15)
                    assert trow[:4] == [scenario, str(block + 1), stage, row["token"]]
                    assert_allclose([float(trow[4]), float(trow[5])], want, atol=5e-5)
                    i += 1
    assert i == len(rows)


def test_token_names_and_stage_order(capsys):
    rows = json_rows(capsys, "--all-tokens")
    confirmed = [r for r in rows if r["scenario"] == "confirmed" and r["stage"] == "input"]
    assert [r["token"] for r in confirmed] == ["errors", "after_deploy", "rollback", "confirmed", "action"]
    not_conf = [r for r in rows if r["scenario"] == "not_confirmed" and r["stage"] == "input"]
    assert not_conf[3]["token"] == "not_confirmed"
    assert [r["stage"] for r in json_rows(capsys) if r["scenario"] == "confirmed"] == list(POST_STAGES)
    pre = json_rows(capsys, "--placement", "pre")
    assert [r["stage"] for r in pre if r["scenario"] == "confirmed"] == list(PRE_STAGES)
    assert {r["token"] for r in json_rows(capsys, "--depth", "3")} == {"action"}


def test_options_change_the_numbers(capsys):
    base = json_rows(capsys, "--depth", "2")
    for option in (["--residual", "off"], ["--norm", "layernorm"], ["--norm", "none"]):
        other = json_rows(capsys, "--depth", "2", *option)
        assert len(other) == len(base)
        assert [r["symptom_cause"] for r in other] != [r["symptom_cause"] for r in base], option
    assert json_rows(capsys, "--depth", "2", "--residual", "on") == base


def test_maximum_depth_runs(capsys):
    rows = json_rows(capsys, "--depth", "1000", "--scenario", "confirmed")
    assert len(rows) == 1000 * STAGES
    assert rows[-1]["block"] == 1000
    assert all(math.isfinite(r["symptom_cause"]) for r in rows)  # default config stays finite


def test_json_output_is_strict_json_even_when_the_stack_diverges(capsys):
    out = run(capsys, "trace", "--format", "json", "--depth", "200", "--norm", "none")

    def reject(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    rows = json.loads(out, parse_constant=reject)
    assert len(rows) == 2 * 200 * STAGES
    values = [r[axis] for r in rows for axis in ("symptom_cause", "recovery_state")]
    assert any(v is None for v in values)  # the stack really diverged; overflowed values are null
    assert all(v is None or math.isfinite(v) for v in values)
    assert rows[0]["symptom_cause"] is not None  # the input row is still a number


def test_lesson_json(capsys):
    model = json.loads(run(capsys, "lesson", "--format", "json"))
    assert model["tokens"] == ["errors", "after_deploy", "rollback", "status", "action"]
    assert model["axes"] == ["symptom_cause", "recovery_state"]
    assert model["tokens"][model["action_token"]] == "action"
    for scenario in ("confirmed", "not_confirmed"):
        entry = model["scenarios"][scenario]
        assert len(entry["tokens"]) == TOKENS
        embeddings = np.array(entry["embeddings"])
        assert embeddings.shape == (TOKENS, 2)
        assert np.all(np.isfinite(embeddings))
    attention = model["block"]["attention"]
    for name in ("w_query", "w_key", "w_value", "w_out"):
        assert np.array(attention[name]).shape == (2, 2)
    ffn = model["block"]["feed_forward"]
    hidden = np.array(ffn["w_in"]).shape[1]
    assert np.array(ffn["w_in"]).shape == (2, hidden)
    assert np.array(ffn["w_out"]).shape == (hidden, 2)
    assert len(ffn["b_in"]) == hidden and len(ffn["b_out"]) == 2
    assert np.array(model["block"]["norm"]["gain"]).shape == (2,)
    assert run(capsys, "lesson") == run(capsys, "lesson", "--format", "json")


def test_lesson_json_embeddings_reproduce_the_trace_input(capsys):
    model = json.loads(run(capsys, "lesson"))
    rows = json_rows(capsys, "--all-tokens")
    for scenario in ("confirmed", "not_confirmed"):
        inputs = [r for r in rows if r["scenario"] == scenario and r["stage"] == "input"]
        got = [[r["symptom_cause"], r["recovery_state"]] for r in inputs]
        assert_allclose(got, model["scenarios"][scenario]["embeddings"], rtol=1e-15)


# ------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "argv",
    [
        ["trace", "--depth", "0"],
        ["trace", "--depth", "1000000"],
        ["trace", "--depth", "1001"],
        ["trace", "--depth", "-3"],
        ["trace", "--depth", "nan"],
        ["trace", "--depth", "abc"],
        ["trace", "--depth", "1.5"],
        ["trace", "--depth", ""],
        ["trace", "--depth"],
        ["trace", "--scenario", "maybe"],
        ["trace", "--norm", "batchnorm"],
        ["trace", "--placement", "middle"],
        ["trace", "--residual", "maybe"],
        ["trace", "--format", "xml"],
        ["trace", "--unknown"],
        ["lesson", "--format", "csv"],
        ["bogus"],
        [],
    ],
    ids=lambda argv: " ".join(argv) or "<none>",
)
def test_bad_arguments_exit_2_with_one_error_line(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith("\n")
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("blockstab: error:")
    assert "Traceback" not in err


def test_error_messages_name_the_problem(capsys):
    for argv, words in (
        (["trace", "--depth", "0"], ["--depth", "1000"]),
        (["trace", "--depth", "abc"], ["--depth", "abc"]),
        (["trace", "--residual", "maybe"], ["--residual", "maybe"]),
        (["trace", "--norm", "batchnorm"], ["--norm", "batchnorm"]),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        err = capsys.readouterr().err
        for word in words:
            assert word in err, (argv, err)


# ------------------------------------------------------------------------------------- subprocess


def test_module_entry_point_subprocess():
    result = subprocess.run(
        [sys.executable, "-m", "blockstab", "trace", "--depth", "2"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.rstrip("\n").split("\n")
    assert lines[0].split() == FIELDS
    assert len(lines) == 2 + 2 * 2 * STAGES
    assert lines[2].split()[:4] == ["confirmed", "1", "input", "action"]


def test_at_depth_1000_the_action_token_keeps_its_own_direction(capsys):
    """Issue #12's check, as a reader would run it: `trace --scenario both --depth 1000 --format json
    --all-tokens`, last block: the action token is at least 15 degrees from every other token."""
    rows = json_rows(capsys, "--depth", "1000", "--scenario", "both", "--all-tokens")
    last = [r for r in rows if r["block"] == 1000 and r["stage"] == rows[-1]["stage"]]
    for scenario in ("confirmed", "not_confirmed"):
        vectors = {r["token"]: np.array([r["symptom_cause"], r["recovery_state"]]) for r in last
                   if r["scenario"] == scenario}
        action = vectors.pop("action")
        assert len(vectors) == 4
        assert min(float(angle_degrees(action, v)) for v in vectors.values()) >= 15.0
