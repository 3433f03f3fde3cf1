"""For every test: Hypothesis's profile. In CI (``CI`` set) a run is reproducible: each property
test draws the same examples every time (derandomized, no example database), within its own
``max_examples`` budget (100 where a test sets none); no deadline, since a shared 2-core machine's
timing is noise, not a property of the engine."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
