#!/usr/bin/env bash
# One command: set up, lint (ruff, import-linter, ESLint) and run every test (engine, views, pages, the browser
# side's own tests under node, servers, a real Redis, real headless Chromium).
# A browser, a Redis or an HAProxy that cannot start is a failure, never a skip.
#   bash scripts/test.sh                  everything, a worker per core, each file in one worker (what CI runs);
#                                         the browser's pages, sizes and languages pairwise (tests/support/matrix.py)
#   bash scripts/test.sh --full-matrix    the same with every page at every size in every language and the input
#                                         fuzzers' every example (before a change to a layout, the CSS, a catalog or
#                                         a parser lands), and the container image built and
#                                         checked with podman (tests/server/test_image.py; installs podman, mmdebstrap
#                                         and runc)
#   bash scripts/test.sh --quick          engine, view and page tests: no server, no browser
#   bash scripts/test.sh tests/browser/test_lab_browser.py   one file (pytest's arguments), in one process
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements-dev.txt
need() { # install Debian packages for the tests as root; otherwise say which and fail
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's $* for the tests ..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "The tests need Debian's $*: sudo apt-get install $*" >&2
    exit 1
  fi
}
command -v node >/dev/null && command -v npm >/dev/null || need nodejs npm
# ESLint, pinned in package-lock.json, for the instant Explorer's browser side (ui/explorer/)
[ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --silent
.venv/bin/python -m ruff check .
PYTHONPATH=tests .venv/bin/lint-imports --no-cache  # the layers (pyproject.toml; its contract type in tests/support)
npx --no-install eslint ui widgets tests/js eslint.config.js
# A worker per core fills the machine: each worker, and each server it starts, computes on one BLAS thread (OpenBLAS's
# spare thread spins: two paper presets took twice the CPU with two threads, in the same time)
export OPENBLAS_NUM_THREADS=1
only=(-m "not image")  # the image's build and check (minutes) only in the full matrix
if [ "${1:-}" = "--full-matrix" ]; then
  shift
  export BLOCKSTAB_FULL_MATRIX=1
  only=()
fi
if [ "${1:-}" = "--quick" ]; then
  shift
  exec .venv/bin/python -m pytest -n auto --dist loadfile --no-loadscope-reorder tests/engine tests/views tests/app "$@"
fi
missing=()  # what the server and browser tests start: Chromium (with a Chinese font), Redis and HAProxy
if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -i "noto.*cjk" >/dev/null; then  # (grep -q would cut fc-list short: pipefail)
  missing+=(chromium fonts-noto-cjk)
fi
command -v redis-server >/dev/null || missing+=(redis-server)
command -v haproxy >/dev/null || missing+=(haproxy)
if [ ${#only[@]} -eq 0 ]; then  # the image's test: podman, as scripts/image.sh runs it, and mmdebstrap for its base
  for tool in podman mmdebstrap runc; do command -v $tool >/dev/null || missing+=($tool); done
fi
[ ${#missing[@]} -eq 0 ] || need "${missing[@]}"
if [ $# -gt 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=30 "${only[@]}"
