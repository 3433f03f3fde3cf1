#!/usr/bin/env bash
# BlockStab past one process: N app processes (replicas) on loopback ports, HAProxy in front of them on
# the public port (deploy/haproxy.cfg: session affinity by cookie, health checks, per-address limits) and
# Redis for what they share (deploy/redis.conf; or the one BLOCKSTAB_CLASS_STORE names). Ctrl-C or
# SIGTERM stops everything it started. --tls FILE.pem (a certificate and its key in one file, as HAProxy
# takes them) serves HTTPS on the port (HTTP/2 or HTTP/1.1); --http-port Q then redirects plain HTTP on Q to it.
#   bash scripts/serve_cluster.sh --replicas N [--port 8501] [--lan] [--tls FILE.pem [--http-port Q]]
set -euo pipefail
cd "$(dirname "$0")/.."

replicas="" port=8501 bind_host=127.0.0.1 tls="" http_port=""
usage="usage: --replicas N [--port 8501] [--lan] [--tls FILE.pem [--http-port Q]]"
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas) replicas="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --lan) bind_host=0.0.0.0; shift ;;
    --tls) tls="$2"; shift 2 ;;
    --http-port) http_port="$2"; shift 2 ;;
    *) echo "unknown argument: $1 ($usage)" >&2; exit 2 ;;
  esac
done
[[ "$replicas" =~ ^[1-9][0-9]?$ ]] || { echo "--replicas N (1-99) is required" >&2; exit 2; }
[ -z "$tls" ] || [ -r "$tls" ] || { echo "--tls $tls: no such file can be read" >&2; exit 2; }
[ -z "$http_port" ] || [ -n "$tls" ] || { echo "--http-port redirects to HTTPS: it needs --tls ($usage)" >&2; exit 2; }
for tool in haproxy redis-server; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: sudo apt-get install $tool" >&2; exit 1; }
done
bash scripts/setup.sh requirements.txt >&2
python=.venv/bin/python

run=$(mktemp -d -t blockstab-cluster.XXXXXX)
pids=() lines=()
stop() {
  trap - INT TERM EXIT
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$run"
}
trap stop INT TERM EXIT

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Wait until URL answers 200 (the server is up), or give up after 60 s. (An https URL is HAProxy's on this
# machine: its certificate names the public host, not 127.0.0.1, so it is not checked here.)
wait_healthy() {
  "$python" - "$1" <<'PY' || { echo "not healthy after 60 s: $1 (logs in $run)" >&2; exit 1; }
import ssl, sys, time, urllib.request
deadline = time.monotonic() + 60
unchecked = ssl.create_default_context()
unchecked.check_hostname, unchecked.verify_mode = False, ssl.CERT_NONE
while time.monotonic() < deadline:
    try:
        if urllib.request.urlopen(sys.argv[1], timeout=2, context=unchecked).status == 200:
            sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
PY
}

if [ -z "${BLOCKSTAB_CLASS_STORE:-}" ]; then
  redis_port=$(free_port)
  redis-server deploy/redis.conf --port "$redis_port" >"$run/redis.log" 2>&1 &
  pids+=($!)
  echo "redis pid $! port $redis_port"
  export BLOCKSTAB_CLASS_STORE="redis://127.0.0.1:$redis_port/0"
fi
# The replicas: loopback only; each reads the client's address from HAProxy's X-Forwarded-For, counts it
# under the same key as the others (server/client_address.py: a keyed hash, never the address, is what
# Redis keeps), and says the public address in a live class's join link.
export BLOCKSTAB_BEHIND_PROXY=1 BLOCKSTAB_PUBLIC_ADDRESS="$bind_host:$port"
if [ -z "${BLOCKSTAB_ADDRESS_KEY:-}" ]; then
  BLOCKSTAB_ADDRESS_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
  export BLOCKSTAB_ADDRESS_KEY
fi
config="$run/haproxy.cfg"
cp deploy/haproxy.cfg "$config"
for n in $(seq 1 "$replicas"); do
  replica_port=$(free_port)
  "$python" -m server --server.address 127.0.0.1 --server.port "$replica_port" >"$run/replica$n.log" 2>&1 &
  pids+=($!)
  echo "    server replica$n 127.0.0.1:$replica_port cookie r$n check" >>"$config"
  lines+=("replica $n pid $! port $replica_port")
done
for n in $(seq 1 "$replicas"); do
  wait_healthy "http://127.0.0.1:${lines[$((n - 1))]##* }/_stcore/health"
done
scheme=http
if [ -n "$tls" ]; then  # (deploy/haproxy.cfg's TLS parts are those under ".if defined(BLOCKSTAB_TLS_PEM)")
  scheme=https
  export BLOCKSTAB_TLS_PEM
  BLOCKSTAB_TLS_PEM=$(realpath "$tls")
fi
if [ -n "$http_port" ]; then
  export BLOCKSTAB_HTTP_BIND="$bind_host:$http_port" BLOCKSTAB_HTTPS_PORT="$port"
fi
# HAProxy's limits per address, as server/policy.py says them (sized for a class behind one NAT address).
export $("$python" -m server.policy --haproxy)
BLOCKSTAB_BIND="$bind_host:$port" haproxy -db -f "$config" >"$run/haproxy.log" 2>&1 &
pids+=($!)
haproxy_pid=$!
wait_healthy "$scheme://127.0.0.1:$port/_stcore/health"
printf '%s\n' "${lines[@]}"
echo "haproxy pid $haproxy_pid port $port: $scheme://localhost:$port${http_port:+ (and http://localhost:$http_port)} (logs in $run)"
wait "$haproxy_pid"
