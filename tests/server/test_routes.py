"""BlockStab's own HTTP routes on the served app (``server/asgi.py``, ``server/routes.py``): a bundle's
files, compressed on the way, the parts kept by the browser and the index asked for afresh, nothing else
of the server's disk reachable; the class version a student's page polls."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import http.client
import json
from pathlib import Path

import pytest

from server.bundles import ROUTE
from server.routes import CLASS_VERSION
from testbed.local_server import streamlit_server
from testbed.protocol_client import ProtocolSession

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app served as ``python -m server`` serves it, and the bundle address of its Explorer's first page."""
    with streamlit_server("app.py", tmp_path_factory.mktemp("routes") / "server.log", ROOT) as (base, _server):
        port = int(base.rsplit(":", 1)[1])

        async def opened() -> str:
            session = ProtocolSession(port, "lang=en")
            await session.connect(timeout=60)
            await session.close()
            return json.loads(session.component_bytes)["bundle"]

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # (a browser test's loop may run)
            bundle = pool.submit(asyncio.run, opened()).result()
        yield port, bundle


def get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("localhost", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_a_bundles_parts_are_compressed_and_kept_and_its_index_asked_for_afresh(served):
    """A part (megabytes unpacked) is compressed on the way and kept by the browser; the index (a few hundred
    bytes: too small for Streamlit's middleware to compress) is asked for afresh."""
    port, bundle = served
    assert bundle.startswith(ROUTE)
    status, headers, body = get(port, f"{bundle}figures.js")
    assert status == 200 and headers["cache-control"] == "public, max-age=31536000, immutable"
    assert headers["content-encoding"] == "gzip" and headers["content-type"].startswith("text/javascript")
    assert gzip.decompress(body).startswith(b"blockstabPart(") and len(body) < len(gzip.decompress(body))
    status, headers, body = get(port, f"{bundle}index.js")
    assert status == 200 and headers["cache-control"] == "no-cache"
    assert (gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body).startswith(b"blockstabPart(")


@pytest.mark.parametrize("name", ["..%2F..%2Fapp.py", "../app.py", "%2e%2e%2fapp.py", "index.js",
                                  "x" * 32 + "-index.js", "0" * 32 + "-index.js", "0" * 32 + "-figures.json", ""])
def test_nothing_but_a_bundles_written_files_is_served(served, name):
    """Refused: by the route (404), by Streamlit's path check (400) or sent to the folder's own path (301)."""
    port, _ = served
    assert get(port, ROUTE + name)[0] in (301, 400, 404)


def test_a_class_version_is_null_for_a_class_that_never_was(served):
    port, _ = served
    status, headers, body = get(port, CLASS_VERSION.format(code="ABCDEF") + "?me=" + "a" * 16)
    answer = json.loads(gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body)
    assert status == 200 and answer["version"] is None and answer["process"]
    assert headers["cache-control"] == "no-store"
