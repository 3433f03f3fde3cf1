"""HTTPS in the cluster: ``bash scripts/serve_cluster.sh --tls PEM --http-port Q`` with a certificate of the test's
own (made by the openssl command). HAProxy speaks HTTP/2 (ALPN) and HTTP/1.1, marks its affinity cookie Secure,
tells browsers to come back by HTTPS alone, and answers plain HTTP with a redirect; a teacher on HTTPS shows an
``https://`` join link and QR code, and a phone that joins follows the teacher's step pushed over HTTP/2 (its
event stream, unbuffered), with no plain ``http://`` request from either page."""

from __future__ import annotations

import http.client
import socket
import ssl
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from support.browser import assert_healthy, open_app, read_qr
from support.cluster import replica_of, serve_cluster
from testbed.local_server import PHONE_USER_AGENT, free_port, self_signed_pem
from ui.lessons import TOUR
from ui.text import Text

pytestmark = pytest.mark.browser

EN = Text("en")
HSTS = "strict-transport-security"


@pytest.fixture(scope="module")
def secure_cluster(tmp_path_factory):
    """Two replicas behind HAProxy on HTTPS (a self-signed certificate for localhost and 127.0.0.1), and its
    plain-HTTP port: ``(cluster, http_port)``."""
    made = tmp_path_factory.mktemp("tls")
    pem = self_signed_pem(made)
    http_port = free_port()
    with serve_cluster(made / "serve_cluster.log", 2, "--tls", str(pem), "--http-port", str(http_port)) as running:
        yield running, http_port


def unchecked() -> ssl.SSLContext:
    """A TLS client that accepts the test's own certificate."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def test_haproxy_negotiates_http2_and_still_speaks_http11(secure_cluster):
    cluster, _ = secure_cluster
    chosen = []
    for offered in (["h2", "http/1.1"], ["http/1.1"]):
        context = unchecked()
        context.set_alpn_protocols(offered)
        with socket.create_connection(("127.0.0.1", cluster.port), timeout=30) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            chosen.append(tls.selected_alpn_protocol())
    assert chosen == ["h2", "http/1.1"]


@pytest.mark.parametrize("path", ["/class?lang=en", "/join?class=ABCDEF", "/"])
def test_plain_http_is_redirected_to_the_same_address_on_https(secure_cluster, path):
    cluster, http_port = secure_cluster
    connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": f"localhost:{http_port}"})
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    assert response.status in (301, 302, 308)
    assert response.getheader("Location") == f"{cluster.base}{path}"


def test_a_class_on_https_gives_https_links_and_a_phone_follows_it_over_http2(secure_cluster, new_page):
    cluster, _ = secure_cluster
    origin = cluster.base
    teacher = new_page(1280, 720, cold=True, self_signed=True)
    phone = new_page(390, 844, user_agent=PHONE_USER_AGENT, cold=True, self_signed=True)
    requested, responses, sockets = [], [], []
    for page in (teacher, phone):
        page.on("request", lambda r: requested.append(r.url))
        page.on("response", lambda r: r.url.startswith(origin) and responses.append(r))
        page.on("websocket", lambda ws: sockets.append(ws.url))
    # How the phone's responses came (the DevTools protocol's Network domain: Playwright does not say).
    devtools, protocols = phone.context.new_cdp_session(phone), {}
    devtools.on("Network.responseReceived",
                lambda event: protocols.__setitem__(urlsplit(event["response"]["url"]).path,
                                                    event["response"]["protocol"]))
    devtools.send("Network.enable")

    open_app(teacher, f"{origin}/class?lang=en", charts=False)
    teacher.get_by_role("button", name=EN("class.start")).click()
    link = teacher.locator("code", has_text="/join?").inner_text()
    assert link.startswith(f"{origin}/join?class=")
    assert read_qr(teacher) == link

    phone.goto(link)
    expect(phone.locator("#activity h2")).to_have_text(EN(f"tour.{TOUR[0].id}.title"))
    teacher.get_by_text(EN("class.one_student")).wait_for()
    teacher.get_by_role("button", name=EN("tour.next"), exact=True).click()
    expect(phone.locator("#activity h2")).to_have_text(EN(f"tour.{TOUR[1].id}.title"))  # pushed, as it came

    stream = [path for path in protocols if path.startswith("/api/class/") and path.endswith("/events")]
    assert len(stream) == 1 and protocols[stream[0]] == "h2", protocols
    assert not any(path.endswith("/state") for path in protocols)  # followed by its push, not by polling
    assert set(protocols.values()) == {"h2"}, protocols
    plain = [url for url in requested + sockets if url.startswith(("http://", "ws://"))]
    assert plain == [] and requested and sockets and all(url.startswith("wss://") for url in sockets)
    assert [r.url for r in responses if HSTS not in r.all_headers()] == []
    for page in (teacher, phone):
        (cookie,) = [c for c in page.context.cookies() if c["name"] == "BLOCKSTAB_REPLICA"]
        assert cookie["secure"] and cookie["httpOnly"], cookie
        assert replica_of(page) in cluster.replicas
        assert_healthy(page)
