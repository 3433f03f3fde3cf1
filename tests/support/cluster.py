"""A cluster as a school's IT starts it: ``bash scripts/serve_cluster.sh`` (HAProxy, Redis, replicas), for the
browser tests that run one per module."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import ROOT
from testbed.local_server import free_port

LINE = re.compile(r"replica (\d+) pid (\d+) port (\d+)")
REDIS = re.compile(r"redis pid \d+ port (\d+)")
# HAProxy's per-address bounds, small so that a test reaches them in a second (their defaults, sized for a school
# behind one NAT address, are server/policy.py's; the script passes these on as it would any setting).
LIMITS = {"BLOCKSTAB_CONNECTIONS_PER_ADDRESS": 40, "BLOCKSTAB_CONNECTION_RATE": 120}
LOGS: list[Path] = []  # the running clusters' logs (HAProxy's, each replica's): shown under a failed browser test


@dataclass
class Cluster:
    base: str
    port: int  # HAProxy's
    replicas: dict[int, tuple[int, int]]  # replica -> (pid, port)
    store: str  # the Redis the script started (redis://...)
    process: subprocess.Popen


@contextlib.contextmanager
def serve_cluster(log: Path, replicas: int, *options: str):
    """``bash scripts/serve_cluster.sh --replicas N --port P *options`` on a free port P, yielded once it printed
    its replicas (its base URL https with ``--tls``); stopped with SIGTERM afterwards, which must stop every
    process it started."""
    port = free_port()
    env = {**os.environ, **{k: str(v) for k, v in LIMITS.items()},
           "BLOCKSTAB_LAB_SECONDS": "600", "BLOCKSTAB_CLASS_STORE": ""}
    with open(log, "w") as errors:
        process = subprocess.Popen(["bash", "scripts/serve_cluster.sh", "--replicas", str(replicas),
                                    "--port", str(port), *options],
                                   cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
    started, store, folder = {}, "", None
    for line in process.stdout:
        if match := LINE.fullmatch(line.strip()):
            started[int(match[1])] = int(match[2]), int(match[3])
        if match := REDIS.fullmatch(line.strip()):
            store = f"redis://127.0.0.1:{match[1]}/0"
        if line.startswith("haproxy pid"):
            folder = Path(re.search(r"\(logs in (\S+)\)", line)[1])
            break
    if len(started) != replicas or not store:
        process.kill()
        pytest.fail(f"the cluster did not start: {log.read_text()[-3000:]}", pytrace=False)
    scheme = "https" if "--tls" in options else "http"
    logs = [folder / "haproxy.log", *(folder / f"replica{n}.log" for n in started)]
    LOGS.extend(logs)
    try:
        yield Cluster(f"{scheme}://localhost:{port}", port, started, store, process)
    finally:
        del LOGS[-len(logs):]
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    alive = [pid for pid, _ in started.values() if os.path.exists(f"/proc/{pid}")]
    assert alive == [], "serve_cluster.sh left replicas running"


def replica_of(page) -> int:
    """The replica HAProxy pinned this page's browser to (its affinity cookie, rN)."""
    (cookie,) = [c["value"] for c in page.context.cookies() if c["name"] == "BLOCKSTAB_REPLICA"]
    return int(cookie.removeprefix("r"))
