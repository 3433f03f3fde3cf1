"""The lesson and the Depth lab give commit 8fa1d4f's numbers, from before the engine learned a
trained model's parts: its engine's results are pinned in ``data/unchanged_engine.npz`` (made by
``python tests/support/unchanged_engine.py --pin``), so the check needs no history.

The tolerances are stored here because float64 rounding differs from CPU to CPU: on the machine the
pin was made on, the lesson was bit-identical and the lab equal to its last bits."""

import numpy as np
import pytest

from support.unchanged_engine import PINNED, lab_cases, lesson_cases, numbers

LESSON_RTOL = 1e-12  # relative to each array's largest value (a stream of 10^46 rounds at 10^30)
LAB_RTOL, LAB_ATOL = 1e-9, 1e-13  # values under 1e-13 are rounding noise either way
LESSON_CASES = [case for case, _ in lesson_cases()]
LAB_CASES = ["lab-layernorm-True-pre-one", "lab-rmsnorm-False-post-one", "lab-none-True-post-deepnorm",
             "lab-layernorm-True-pre-inv_sqrt_depth", "dong"]


@pytest.fixture(scope="module")
def then() -> dict[str, np.ndarray]:
    with np.load(PINNED) as pinned:
        return dict(pinned)


@pytest.fixture(scope="module")
def now() -> dict[str, np.ndarray]:
    return numbers()


def arrays_of(numbers: dict[str, np.ndarray], case: str) -> list[np.ndarray]:
    return [numbers[key] for key in sorted((k for k in numbers if k.rsplit("/", 1)[0] == case),
                                           key=lambda k: int(k.rsplit("/", 1)[1]))]


@pytest.mark.parametrize("case", LESSON_CASES)
def test_the_lesson_gives_8fa1d4fs_numbers(case, then, now):
    for old, new in zip(arrays_of(then, case), arrays_of(now, case), strict=True):
        scale = np.max(np.abs(old[np.isfinite(old)]), initial=0.0)
        np.testing.assert_allclose(new, old, rtol=0, atol=LESSON_RTOL * scale, equal_nan=True,
                                   err_msg=f"{case}: the numbers changed since 8fa1d4f")


@pytest.mark.parametrize("case", LAB_CASES)
def test_the_lab_gives_8fa1d4fs_curves(case, then, now):
    for old, new in zip(arrays_of(then, case), arrays_of(now, case), strict=True):
        np.testing.assert_allclose(new, old, rtol=LAB_RTOL, atol=LAB_ATOL, equal_nan=True, err_msg=case)


def test_every_case_is_compared(then, now):
    assert set(now) == set(then)
    assert {k.rsplit("/", 1)[0] for k in now} == set(LESSON_CASES) | set(LAB_CASES)
    assert [case for case, _ in lab_cases()] == LAB_CASES
