"""The lesson gives bit-identical numbers to commit 8fa1d4f, from before the engine learned a
trained model's parts, and the Depth lab the same curves to float64 rounding: both engines run
here, on this machine (see ``tests/unchanged_engine.py``). Needs the repository's history."""

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pytest
from unchanged_engine import lab_cases, lesson_cases, numbers

BEFORE = "8fa1d4f"
SCRIPT = Path(__file__).with_name("unchanged_engine.py")
LESSON_CASES = [case for case, _ in lesson_cases()]
LAB_CASES = ["lab-layernorm-True-pre-one", "lab-rmsnorm-False-post-one", "lab-none-True-post-deepnorm",
             "lab-layernorm-True-pre-inv_sqrt_depth", "dong"]


@pytest.fixture(scope="module")
def then() -> dict:
    """The numbers of 8fa1d4f's engine (a ``git archive`` of it), computed on this machine."""
    root = SCRIPT.resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(root), "archive", BEFORE], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as old, tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(old, filter="data")
        out = subprocess.run([sys.executable, str(SCRIPT)], env={**os.environ, "PYTHONPATH": old},
                             capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def now() -> dict:
    return numbers()


@pytest.mark.parametrize("case", LESSON_CASES)
def test_the_lesson_is_bit_identical_to_8fa1d4f(case, then, now):
    assert now["lesson"][case] == then["lesson"][case], f"{case}: the numbers changed since {BEFORE}"


@pytest.mark.parametrize("case", LAB_CASES)
def test_the_lab_gives_8fa1d4fs_curves(case, then, now):
    """The same curves to float64 rounding (on some CPUs the new code's order of operations rounds
    the last bits differently); values under 1e-13 are rounding noise either way."""
    for old, new in zip(then["lab"][case], now["lab"][case], strict=True):
        np.testing.assert_allclose(new, old, rtol=1e-9, atol=1e-13, equal_nan=True, err_msg=case)


def test_every_case_is_compared(then, now):
    assert set(now["lesson"]) == set(then["lesson"]) == set(LESSON_CASES)
    assert set(now["lab"]) == set(then["lab"]) == set(LAB_CASES)
    assert [case for case, _ in lab_cases()] == LAB_CASES
