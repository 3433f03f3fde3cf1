"""Numbers as a student reads them: no 1.3e+40, no 0×, powers of ten written out."""

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.oracles import value_of
from ui.numbers import fixed, power_of_ten, readable, vector_text


@pytest.mark.parametrize("x, text", [
    (161.3, "161"), (0.0512, "0.0512"), (1.28e40, "1.28 × 10⁴⁰"), (1e-16, "10⁻¹⁶"), (0.0, "0"), (1.414, "1.41"),
    (3.31e4, "3.31 × 10⁴"), (-2.5e-7, "-2.5 × 10⁻⁷"), (9.996e5, "10⁶"), (1234.0, "1234"), (5e-324, "4.94 × 10⁻³²⁴"),
    (0.0123456, "0.0123"), (444.4, "444"), (0.5, "0.5"), (-0.25, "-0.25"), (1.2097e-160, "1.21 × 10⁻¹⁶⁰"),
    (1e43, "10⁴³"), (2.5e300, "2.5 × 10³⁰⁰"), (123456.0, "1.23 × 10⁵"), (-3e-20, "-3 × 10⁻²⁰"),
    (float("inf"), "∞"), (float("nan"), "—"),
])
def test_readable_hand_picked(x, text):
    assert readable(x) == text


def test_power_of_ten_and_vectors():
    assert power_of_ten(40) == "10⁴⁰" and power_of_ten(-15) == "10⁻¹⁵"
    assert vector_text([1.0259, 1.9781]) == "[1.026, 1.978]"
    assert vector_text([-0.00001, 2.07e40]) == "[0.000, 2.07 × 10⁴⁰]"
    assert fixed(float("nan")) == "—"
    assert readable(0.61234, 2) == "0.61" and readable(1.209729e-160, 7) == "1.209729 × 10⁻¹⁶⁰"


@given(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False).filter(lambda v: v == 0 or abs(v) > 1e-300))
def test_readable_never_shows_an_exponent_and_reads_back_close(x):
    text = readable(x)
    assert not re.search(r"\d[eE][+-]?\d", text)
    back = value_of(text)
    assert back == 0 if x == 0 else math.isclose(back, x, rel_tol=0.006)
