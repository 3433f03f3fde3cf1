#!/usr/bin/env bash
# Redis for the app processes' shared state, as deploy/redis.conf sets it up, on PORT (default 6379),
# in the foreground: bash scripts/redis.sh [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v redis-server >/dev/null || { echo "Redis is missing: sudo apt-get install redis-server" >&2; exit 1; }
exec redis-server deploy/redis.conf --port "${1:-6379}"
