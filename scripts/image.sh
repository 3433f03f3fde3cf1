#!/usr/bin/env bash
# BlockStab's one container image (Containerfile), with podman:
#   bash scripts/image.sh build         make the base if it is missing (mmdebstrap), then build localhost/blockstab:latest
#   bash scripts/image.sh run [PORT]    run it on PORT (8501) as hosts run it: read-only root, a tmpfs at /tmp
#   bash scripts/image.sh check         build (cached), run it read-only on a port of its own and check it (below; a
#                                       session of its Explorer through .venv's protocol client, testbed/)
# The build sees this host's CA bundle and its pip indexes (a pip.conf of the http(s) ones), mounted for the build only:
# nothing of the host stays in the image. IMAGE names another tag, BASE another base image.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-localhost/blockstab:latest}
BASE=${BASE:-docker.io/library/debian:bookworm-slim}
MAX_BYTES=$((900 * 1000 * 1000))
# This sandbox refuses crun's cgroups and raising NPROC to its maximum: runc, cgroupfs and explicit limits.
podman=(podman --runtime runc --cgroup-manager=cgroupfs)
limits=(--ulimit nofile=20000:20000 --ulimit nproc=30000:30000)

elapsed() { # since $1 (date +%s%N), as "12.3 s"
  local ms=$((($(date +%s%N) - $1) / 1000000))
  printf '%d.%d s' $((ms / 1000)) $((ms % 1000 / 100))
}

base() { # the base image, made from Debian's packages where no registry can be reached
  "${podman[@]}" image exists "$BASE" && return
  command -v mmdebstrap >/dev/null || { echo "No $BASE and no mmdebstrap: podman pulls it" >&2; return; }
  local dir start
  dir=$(mktemp -d)
  start=$(date +%s%N)
  echo "Making $BASE with mmdebstrap (Debian bookworm, minbase, slimmed as Debian's -slim images are) ..."
  # No manuals, documentation (but its copyright files) or translations, here nor in what the build installs;
  # no perl beyond perl-base (nothing in minbase needs it): a base of 78 MB, not 170.
  mmdebstrap --quiet --variant=minbase \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook='chroot "$1" apt-mark auto --quiet $(chroot "$1" dpkg-query -W -f "\${Package}\n" | grep perl)' \
    --customize-hook='chroot "$1" apt-get purge --quiet --yes --auto-remove perl' \
    bookworm "$dir/base.tar"
  "${podman[@]}" import --quiet "$dir/base.tar" "$BASE" >/dev/null
  rm -rf "$dir"
  echo "base: $(elapsed "$start")"
}

pip_conf() { # the host's pip indexes (http(s) only: a file:// one is not in the container) as a pip.conf
  local python=.venv/bin/python
  [ -x "$python" ] || python=python3
  echo "[global]"
  # pip config list: the environment's (":env:") first, the files' after; the first of each key is kept
  "$python" -m pip config list 2>/dev/null \
    | sed -n "s/^[^.]*\.\(index-url\|extra-index-url\)='\(.*\)'$/\1 \2/p" \
    | awk '!seen[$1]++ { urls = ""; for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) urls = urls " " $i
                         if (urls != "") print $1 " =" urls }'
}

build() {
  base
  local conf mounts=() start
  conf=$(mktemp)
  pip_conf >"$conf"
  mounts+=(-v "$conf:/etc/pip.conf:ro")
  [ -f /etc/ssl/certs/ca-certificates.crt ] \
    && mounts+=(-v /etc/ssl/certs/ca-certificates.crt:/run/build/ca-certificates.crt:ro)
  start=$(date +%s%N)
  # (--format docker: an OCI image has no HEALTHCHECK)
  "${podman[@]}" build --format docker "${limits[@]}" "${mounts[@]}" --build-arg "BASE=$BASE" -t "$IMAGE" -f Containerfile .
  rm -f "$conf"
  echo "build: $(elapsed "$start")"
}

run() { # PORT, then podman run's own flags
  local port=$1
  shift
  "${podman[@]}" run "${limits[@]}" --read-only --tmpfs /tmp -e "PORT=$port" -p "127.0.0.1:$port:$port" "$@" "$IMAGE"
}

rss() { # the app's process's resident memory, in the check's container
  "${podman[@]}" exec "$name" cat /proc/1/status | awk '/^VmRSS:/ {printf "%d MiB", $2 / 1024}'
}

check() {
  build  # (podman's layer cache: seconds when nothing changed)
  local port failed=0 start
  name=blockstab-check-$$ err=$(mktemp)  # (global: the trap below runs after check returns)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  ok() { echo "ok    $*"; }
  bad() { echo "FAIL  $*"; failed=1; }
  start=$(date +%s%N)
  # (podman's own scheduling of the HEALTHCHECK needs systemd: its complaint is kept for a failure's report)
  run "$port" -d --name "$name" >/dev/null 2>"$err"
  trap '"${podman[@]}" rm -f "$name" >/dev/null; rm -f "$err"' EXIT
  local healthy=""
  for _ in $(seq 600); do
    if curl -fsS "http://127.0.0.1:$port/_stcore/health" 2>/dev/null | grep -qx ok; then healthy=1; break; fi
    [ "$("${podman[@]}" inspect -f '{{.State.Running}}' "$name")" = true ] || break
    sleep 0.1
  done
  if [ -n "$healthy" ]; then
    ok "/_stcore/health answers ok on \$PORT=$port: $(elapsed "$start") from start to healthy"
  else
    bad "/_stcore/health never answered; podman said and the log:"; cat "$err"
    "${podman[@]}" logs "$name" | tail -20
  fi
  local idle
  idle=$(rss)
  "${podman[@]}" healthcheck run "$name" && ok "the image's HEALTHCHECK passes" || bad "the image's HEALTHCHECK fails"
  local uid
  uid=$("${podman[@]}" exec "$name" sh -c 'awk "/^Uid:/ {print \$2}" /proc/1/status')
  [ "$uid" = 1000 ] && ok "the app runs as UID $uid" || bad "the app runs as UID $uid, not 1000"
  local hexport
  hexport=$(printf ':%04X ' "$port")
  "${podman[@]}" exec "$name" sh -c "grep -q '$hexport' /proc/net/tcp /proc/net/tcp6" \
    && ok "it listens on \$PORT ($port) inside the container" || bad "nothing listens on $port inside the container"
  for path in / /join; do
    local encoding
    encoding=$(curl -fsS -o /dev/null -D - -H 'Accept-Encoding: gzip, br' "http://127.0.0.1:$port$path" \
      | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ee]ncoding: //p')
    case "$encoding" in
      gzip|br) ok "$path answers, compressed ($encoding)" ;;
      *) bad "$path: Content-Encoding '${encoding}', not gzip or br" ;;
    esac
  done
  # A session of the Explorer: its bundle and its workers' forkserver socket are written under /tmp
  if .venv/bin/python -c 'import asyncio, sys
from testbed.protocol_client import ProtocolSession
async def explorer():
    session = ProtocolSession(int(sys.argv[1]), "lang=en")
    await session.connect(timeout=120)
    await session.close()
    sys.exit(session.exceptions > 0 or not session.component_bytes)
asyncio.run(explorer())' "$port"; then
    ok "a session's Explorer page runs, its bundle made"
  else
    bad "a session's Explorer page failed; the log:"; "${podman[@]}" logs "$name" | tail -20
  fi
  if "${podman[@]}" exec "$name" sh -c 'touch /opt/blockstab/written 2>/dev/null || touch /written 2>/dev/null'; then
    bad "the root file system is writable"
  else
    ok "the root file system is read-only; the app wrote under /tmp: $("${podman[@]}" exec "$name" ls -A /tmp | tr '\n' ' ')"
  fi
  local size
  size=$("${podman[@]}" image inspect --format '{{.Size}}' "$IMAGE")
  [ "$size" -le "$MAX_BYTES" ] && ok "image size $((size / 1000000)) MB (at most 900)" \
    || bad "image size $((size / 1000000)) MB, over 900"
  echo "what takes the space (the image's layers, then the venv's largest packages, MB):"
  "${podman[@]}" history --format '{{.Size}}  {{.CreatedBy}}' "$IMAGE" | grep -v '^0 B' | cut -c1-100 | sed 's/^/      /'
  "${podman[@]}" exec "$name" sh -c 'cd /opt/blockstab/.venv/lib/python3*/site-packages && du -sm -- * | sort -rn | head -8' \
    | sed 's/^/      /'
  echo "RSS idle: $idle (the app's process, healthy, before any session); $(rss) after one Explorer session;" \
    "the container's: $("${podman[@]}" stats --no-stream --format '{{.MemUsage}}' "$name" | cut -d/ -f1)(podman stats)"
  return "$failed"
}

case "${1:-}" in
  build) build ;;
  run) run "${2:-8501}" --rm --name blockstab ;;
  check) check ;;
  *) echo "usage: bash scripts/image.sh build|run [PORT]|check" >&2; exit 2 ;;
esac
