"""A Streamlit server on a free localhost port and the Chromium that drives it, and a Redis: shared by
the tests (``tests/browser/conftest.py``, ``tests/server/``) and the benchmarks (``harness.py``).

Standard library only. The server is waited for on ``/_stcore/health`` (bounded) and always
stopped; Chromium is Debian's ``/usr/bin/chromium``, never a download.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# What a phone's Chromium sends: the app lays subplots out one under another for it ("Mobi").
PHONE_USER_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                    "Chrome/140.0 Mobile Safari/537.36")
HEALTH_TIMEOUT = 60.0


class ServerFailed(RuntimeError):
    """The server exited, or did not answer its health check in time; the message has its log."""


def stop(process: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop a server: SIGTERM, then SIGKILL if it has not exited within ``grace`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


def launch_command(script: str, cwd: Path) -> list[str]:
    """How ``script`` is started: our app as ``scripts/start.sh`` starts it (``python -m server``;
    ``scripts/serve.py`` in a checkout from before it, for a benchmark's "before"), anything else
    with ``streamlit run``."""
    if script == "app.py" and (cwd / "server" / "__main__.py").exists():
        return [sys.executable, "-m", "server"]
    if script == "app.py" and (cwd / "scripts" / "serve.py").exists():
        return [sys.executable, str(cwd / "scripts" / "serve.py")]
    return [sys.executable, "-m", "streamlit", "run", script]


@contextlib.contextmanager
def streamlit_server(script: str, log_path: Path, cwd: Path, extra: tuple[str, ...] = (), env: dict | None = None,
                     command: list[str] | None = None):
    """``script`` started from ``cwd`` (its .streamlit/config.toml applies; ``command`` if given,
    else :func:`launch_command`), headless, on a free localhost port (``extra`` flags come last, so
    they may override), with ``env`` if given; yields ``(url, Popen)`` once healthy and stops the
    server afterwards."""
    port = free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [*(command or launch_command(script, cwd)), "--server.port", str(port),
             "--server.address", "localhost", "--server.headless", "true", *extra],
            cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    base = f"http://localhost:{port}"
    deadline = time.monotonic() + HEALTH_TIMEOUT
    try:
        while not healthy(base + "/_stcore/health"):
            if server.poll() is not None or time.monotonic() > deadline:
                reason = f"exited with {server.returncode}" if server.poll() is not None else "timed out"
                raise ServerFailed(f"{script}: the Streamlit server {reason} before /_stcore/health said ok; "
                                   f"log:\n{log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        yield base, server
    finally:
        stop(server)


def redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server(log_path: Path, cwd: Path):
    """Redis as ``scripts/redis.sh`` starts it (``deploy/redis.conf``), on a free loopback port;
    yields its URL once it answers PING and stops it afterwards."""
    port = free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        server = subprocess.Popen(["bash", "scripts/redis.sh", str(port)], cwd=cwd, stdout=log,
                                  stderr=subprocess.STDOUT)
    deadline = time.monotonic() + HEALTH_TIMEOUT
    try:
        while not redis_answers(port):
            if server.poll() is not None or time.monotonic() > deadline:
                reason = f"exited with {server.returncode}" if server.poll() is not None else "timed out"
                raise ServerFailed(f"Redis {reason} before it answered PING; log:\n"
                                   f"{log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(server)


def self_signed_pem(folder: Path) -> Path:
    """A self-signed ECDSA P-256 certificate (the kind certbot issues by default) for localhost and 127.0.0.1 (the
    ``openssl`` command's) followed by its key, in one file in ``folder``, as ``scripts/serve_cluster.sh --tls``
    takes them; a client trusts it with ``ssl.create_default_context(cafile=...)`` on the same file."""
    key, certificate, pem = folder / "key.pem", folder / "certificate.pem", folder / "blockstab.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "2",
                    "-keyout", str(key), "-out", str(certificate)], check=True, capture_output=True, timeout=60)
    pem.write_bytes(certificate.read_bytes() + key.read_bytes())
    return pem
