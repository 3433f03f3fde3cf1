"""The Explorer at /explore, its documented path: Streamlit serves the default page at / only."""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).with_name("explorer.py")), run_name="__main__")
