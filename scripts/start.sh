#!/usr/bin/env bash
# One command: set up and start BlockStab at http://localhost:8501 (--lan: for phones on the LAN too;
# other flags go to streamlit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements.txt
exec .venv/bin/python -m server "$@"
