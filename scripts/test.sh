#!/usr/bin/env bash
# One command: set up and run every test (engine, pages, real headless Chromium), then lint.
# A browser that cannot start is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements-dev.txt
if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -qi "noto.*cjk"; then
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's chromium and CJK fonts for the browser tests ..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
  else
    echo "Browser tests need /usr/bin/chromium and fonts-noto-cjk: sudo apt-get install chromium fonts-noto-cjk" >&2
    exit 1
  fi
fi
.venv/bin/python -m ruff check .
exec .venv/bin/python -m pytest "$@"
