"""For every test: none leaves the instant Explorer building tens of blocks in the background (a
page test that moved the block in focus starts such a build, ui/instant_tens.py build_around; the
next test would find its worker process running, or its tens landing in what it keeps)."""

import pytest

from ui import instant_tens


@pytest.fixture(autouse=True)
def no_tens_left_building():
    yield
    with instant_tens._BUILDING:  # held while a build ahead runs
        pass
