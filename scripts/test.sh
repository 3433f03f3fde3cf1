#!/usr/bin/env bash
# One command: set up and run every test (engine, views, pages, servers, real headless Chromium), then lint.
# A browser that cannot start is a failure, never a skip.
#   bash scripts/test.sh                  everything, a worker per core, each file in one worker (what CI runs)
#   bash scripts/test.sh --quick          engine, view and page tests: no server, no browser
#   bash scripts/test.sh tests/browser/test_lab_browser.py   one file (pytest's arguments), in one process
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements-dev.txt
.venv/bin/python -m ruff check .
if [ "${1:-}" = "--quick" ]; then
  shift
  exec .venv/bin/python -m pytest -n auto --dist loadfile tests/engine tests/views tests/app "$@"
fi
if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -qi "noto.*cjk"; then
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's chromium and CJK fonts for the browser tests ..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
  else
    echo "Browser tests need /usr/bin/chromium and fonts-noto-cjk: sudo apt-get install chromium fonts-noto-cjk" >&2
    exit 1
  fi
fi
if [ $# -gt 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n auto --dist loadfile --durations=30
