"""For every test: Hypothesis's profile, and one folder of built bundle parts for the whole run.

In CI (``CI`` set) a run is reproducible: each property test draws the same examples every time
(derandomized, no example database), within its own ``max_examples`` budget (100 where a test sets
none); no deadline, since a shared 2-core machine's timing is noise, not a property of the engine.

The built-in examples' bundles are built once per run, not once per process: the run's processes (its
workers, the AppTests in them, the servers the tests start) share ``BLOCKSTAB_BUNDLE_CACHE``, a folder
made here by the first process (xdist's workers inherit it) and removed by it at exit. A test of
building on demand says so and unsets it (tests/app/test_bundles.py)."""

import atexit
import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

if "BLOCKSTAB_BUNDLE_CACHE" not in os.environ:
    os.environ["BLOCKSTAB_BUNDLE_CACHE"] = tempfile.mkdtemp(prefix="blockstab-test-bundles-")
    atexit.register(shutil.rmtree, os.environ["BLOCKSTAB_BUNDLE_CACHE"], ignore_errors=True)
