"""For every test: Hypothesis's profile, and one folder of built bundle parts for the whole run.

In CI (``CI`` set) a run is reproducible: each property test draws the same examples every time
(derandomized, no example database), within its own ``max_examples`` budget (100 where a test sets
none); no deadline, since a shared 2-core machine's timing is noise, not a property of the engine.

The built-in examples' bundles are built once per run, not once per process: the run's processes (its
workers, the AppTests in them, the servers the tests start) share ``BLOCKSTAB_BUNDLE_CACHE``, a folder
made here by the first process (xdist's workers inherit it) and removed by it at exit. A test of
building on demand says so and unsets it (tests/app/test_bundles.py).

Every AppTest of a process shares one scan of the installed packages for Streamlit components' manifests:
Streamlit 1.67's AppTest scans every distribution's metadata at each new AppTest (half a second, most of a
page test's time) and what is installed does not change during a run. (A Streamlit that moves the scan
fails here, at once.)

A test may leave its process on fewer BLAS threads, never on more (``_blas_threads_not_raised``).

The run takes its files heaviest kind first (a browser's, a server's, the app's, then the rest), and of a
kind those with the most tests first: with ``--dist loadfile --no-loadscope-reorder`` (scripts/test.sh) each
worker takes the next file in this order, so the last files are short and the workers end together."""

import atexit
import collections
import functools
import os
import shutil
import tempfile

import numpy  # noqa: F401 - loads OpenBLAS before the controller below looks for it
import pytest
from hypothesis import settings
from streamlit.components.v2 import manifest_scanner
from threadpoolctl import ThreadpoolController

manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

if "BLOCKSTAB_BUNDLE_CACHE" not in os.environ:
    os.environ["BLOCKSTAB_BUNDLE_CACHE"] = tempfile.mkdtemp(prefix="blockstab-test-bundles-")
    atexit.register(shutil.rmtree, os.environ["BLOCKSTAB_BUNDLE_CACHE"], ignore_errors=True)


BLAS = ThreadpoolController().select(user_api="blas")


@pytest.fixture(autouse=True)
def _blas_threads_not_raised():
    """A test may leave its process on fewer BLAS threads (the app pins one where it computes, for good), never on
    more: a test that left two made every later test of its worker spin the second (four times the CPU)."""
    before = [lib.num_threads for lib in BLAS.lib_controllers]
    yield
    after = [lib.num_threads for lib in BLAS.lib_controllers]
    assert all(a <= b for a, b in zip(after, before, strict=True)), f"BLAS threads left at {after}, were {before}"


HEAVIEST_FIRST = ("browser", "server", "app")  # tests/<kind>/: a file of each of these takes seconds to minutes


def pytest_collection_modifyitems(items):
    files = collections.Counter(item.path for item in items)
    kind = {path: HEAVIEST_FIRST.index(path.parent.name) if path.parent.name in HEAVIEST_FIRST else len(HEAVIEST_FIRST)
            for path in files}
    items.sort(key=lambda item: (kind[item.path], -files[item.path], str(item.path)))  # (stable: a file's own order)
