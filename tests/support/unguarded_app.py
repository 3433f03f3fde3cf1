"""What app.py would be without its guard (tests/app/test_lab_worker.py): the router's imports at the top."""

import pandas  # noqa: F401
import streamlit  # noqa: F401

import widgets.chrome  # noqa: F401
