"""The lesson and the Depth lab give bit-identical numbers to commit 8fa1d4f, from before the engine
learned a trained model's parts (see ``tests/unchanged_engine.py``)."""

import json
from pathlib import Path

import pytest
from unchanged_engine import digests

PINNED = json.loads((Path(__file__).with_name("data") / "unchanged_engine.json").read_text())


@pytest.fixture(scope="module")
def now() -> dict[str, str]:
    return digests()


@pytest.mark.parametrize("case", sorted(PINNED))
def test_bit_identical_to_8fa1d4f(case, now):
    assert now[case] == PINNED[case], f"{case}: the numbers changed since 8fa1d4f"


def test_every_case_is_pinned(now):
    assert set(now) == set(PINNED)
