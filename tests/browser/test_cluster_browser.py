"""Past one process: two replicas behind a real HAProxy with a real Redis, started by the project's own
``scripts/serve_cluster.sh`` as a school's IT would start them. A tab's Explorer, block-range files and
upload stay on its replica (HAProxy's cookie); one computer's script gets its per-address limits of open
and new connections while another computer still opens the app; a forged X-Forwarded-For does not make
one computer many (its wrong codes are one address's); a teacher and a student on different replicas share
one live class through Redis (a change made on the teacher's replica is pushed to the student's), and the
student's replica is killed mid-question (last: the module has one replica after it): the student's page
connects again, to the live one, follows the class on, and the answer is still counted once."""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect
from websockets.exceptions import InvalidMessage

from blockstab.scenario import PRESETS, to_json
from server.class_store import RedisStore
from server.policy import POLICY
from support import in_own_loop
from support.browser import assert_healthy, assert_shows, open_app, set_depth, shot, wait_for_view
from support.cluster import LIMITS, Cluster, replica_of, serve_cluster
from testbed.protocol_client import ProtocolSession
from ui.controls import ExplorerState
from ui.lessons import QUESTIONS, TOUR
from ui.text import Text

EN = Text("en")
PER_ADDRESS, RATE = LIMITS.values()  # HAProxy's per-address limits, as the fixture sets them
# Other computers, as HAProxy counts them: its stick table is keyed by the source address, and any 127.x.y.z
# reaches the loopback port. Each limit's test has an address of its own, so that neither its counts nor
# the rest of the module's (Chromium and the sessions, from 127.0.0.1) move the other's.
FLOODER, FAST_OPENER, GUESSER = "127.0.0.2", "127.0.0.3", "127.0.0.4"
# Before it finds its server at the root, the frontend looks under a deep link's path (404s, as on one process).
PROBE = re.compile(r"^/[^/]+/_stcore/(health|host-config)$")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``bash scripts/serve_cluster.sh --replicas 2`` on a free port, with its per-address limits' defaults."""
    with serve_cluster(tmp_path_factory.mktemp("cluster") / "serve_cluster.log", 2) as running:
        yield running


async def a_student_opens_the_explorer(port: int, source: str = "") -> int:
    """A whole Streamlit session through HAProxy (from ``source``, a loopback address): connect, run the
    Explorer to its end; the number of exceptions it showed. Raises if HAProxy refused it or the run failed."""
    session = ProtocolSession(port, "lang=en", source=source)
    try:
        await session.connect(timeout=60)
        assert session.component_bytes, "the Explorer was not sent"
        return session.exceptions
    finally:
        if hasattr(session, "ws"):  # (connected)
            await session.close()


def health(connection: http.client.HTTPConnection) -> int:
    """One request on ``connection`` (kept alive): the status HAProxy relayed from its replica."""
    connection.request("GET", "/_stcore/health")
    response = connection.getresponse()
    response.read()
    return response.status


def opened(cluster: Cluster, source: str) -> http.client.HTTPConnection:
    """A connection to HAProxy from ``source``, not yet used."""
    return http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=30, source_address=(source, 0))


def refused(connection: http.client.HTTPConnection) -> bool:
    """Whether HAProxy closed ``connection`` at once, with no answer to its request (its per-address
    limits' ``tcp-request connection reject``); ``False`` if a replica answered."""
    try:
        health(connection)
    except ConnectionError:  # reset, a broken pipe, or closed before any answer (RemoteDisconnected)
        return True
    finally:
        connection.close()
    return False


def let_go(connection: http.client.HTTPConnection) -> None:
    """Close ``connection`` and wait until HAProxy has closed its side too (it then counts it no more)."""
    connection.sock.shutdown(socket.SHUT_WR)
    assert connection.sock.recv(1) == b""
    connection.close()


def test_the_explorer_a_block_range_and_an_upload_stay_on_one_replica_behind_haproxy(cluster, new_page):
    """What each replica keeps for its own sessions (the Explorer's block-range files, an upload's bytes, the
    Depth lab's runs, the Real model's caches) is reached through HAProxy: the affinity cookie keeps a tab's
    requests on its replica. A block-range file is named by its replica's own secret, so the other replica
    has no such file: the page could not draw the block it moved to had one fetch gone astray."""
    page = new_page(1280, 720, cold=True)
    failed, fetched = [], []
    page.on("response", lambda r: r.status >= 400 and not PROBE.match(urlsplit(r.url).path)
            and failed.append(f"{r.status} {r.url}"))
    page.on("response", lambda r: "/api/bundles/" in r.url
            and fetched.append((r.url.rsplit("-", 1)[1], r.status)))
    unanswered = []  # requests with no answer at all (a refused or reset connection, a timeout)
    page.on("requestfailed", lambda r: unanswered.append(f"{r.failure} {r.url}"))
    open_app(page, f"{cluster.base}/explore?lang=en&depth=30")
    mine = replica_of(page)
    set_depth(page, 21, key="block")  # out of the block range read at the mount (1-10): blocks 21-30
    page.wait_for_selector(".instant-place-block:not(.instant-waiting)")
    assert page.locator(".instant-waiting").count() == 0  # nothing left faded: the block view and numbers
    assert_shows(page, ExplorerState(depth=30, block=21))
    assert ("21.js", 200) in fetched, fetched
    block_range = page.evaluate("() => document.querySelector('.instant-explorer').dataset.bundle") + "blocks-21.js"
    for replica, (_, port) in cluster.replicas.items():  # the file is its replica's alone
        try:
            status = urllib.request.urlopen(f"http://127.0.0.1:{port}{block_range}", timeout=30).status
        except urllib.error.HTTPError as error:
            status = error.code
        assert status == (200 if replica == mine else 404), (replica, mine, status)
    assert_healthy(page)

    open_app(page, f"{cluster.base}/scenario?lang=en", charts=False)
    assert_healthy(page)
    upload = page.locator(".st-key-editor_upload input[type=file]")
    # The page is idle and settled: its uploader is drawn, or its element's code failed to load (Streamlit then
    # shows an error where the skeleton was): say which request failed rather than wait for it.
    assert upload.count() == 1, (failed, unanswered, page.locator(".st-key-editor_upload").inner_text()[:300])
    upload.set_input_files(files=[{"name": "mine.json", "mimeType": "application/json",
                                   "buffer": to_json(PRESETS["support"]).encode()}])
    page.wait_for_url(re.compile(r"[?&]sc=support(&|$)"))  # the uploaded example is in use
    open_app(page, f"{cluster.base}/lab?lang=en&lab_width=16&lab_tokens=8&lab_depth=6")  # a run of milliseconds
    open_app(page, f"{cluster.base}/real?lang=en")
    assert replica_of(page) == mine
    assert_healthy(page)
    assert failed == []


def test_one_address_holding_its_limit_of_connections_has_the_rest_refused(cluster):
    """A script on one computer opens connections and keeps them (HTTP keep-alive): HAProxy lets it hold
    its per-address limit and closes every one past it at once, while those it holds keep working and a
    student on another computer opens the Explorer meanwhile; once it lets go, its own page works again."""
    held = [opened(cluster, FLOODER) for _ in range(PER_ADDRESS)]
    try:
        assert [health(c) for c in held] == [200] * PER_ADDRESS  # every one open, each answered
        sockets = [c.sock for c in held]
        assert [refused(opened(cluster, FLOODER)) for _ in range(5)] == [True] * 5
        with pytest.raises((InvalidMessage, ConnectionError)):  # a Streamlit session from it: closed unanswered
            in_own_loop(a_student_opens_the_explorer(cluster.port, FLOODER))
        assert in_own_loop(a_student_opens_the_explorer(cluster.port)) == 0  # another computer (127.0.0.1)
        assert [health(c) for c in held] == [200] * PER_ADDRESS
        assert [c.sock for c in held] == sockets  # on the same connections, none closed
        for connection in held:
            let_go(connection)
    finally:
        for connection in held:
            connection.close()
    assert in_own_loop(a_student_opens_the_explorer(cluster.port, FLOODER)) == 0


def test_one_address_opening_connections_too_fast_is_refused_past_the_rate(cluster):
    """A script on one computer opens connection after connection, each closed after its answer: HAProxy
    answers its limit of new connections per 10 s, then closes the next at once (the stick table's rate,
    counted from this address's first connection: all of these come well within its first 10 s)."""
    start = time.monotonic()
    for n in range(RATE):
        connection = opened(cluster, FAST_OPENER)
        assert health(connection) == 200, n
        let_go(connection)
    assert refused(opened(cluster, FAST_OPENER)), f"{RATE + 1} connections in {time.monotonic() - start:.1f} s"
    assert in_own_loop(a_student_opens_the_explorer(cluster.port)) == 0  # another computer (127.0.0.1)


def join(port: int, code: str, forged: str) -> int:
    """A phone's join of class ``code`` through HAProxy from :data:`GUESSER`, with a forged X-Forwarded-For: the
    status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(GUESSER, 0))
    connection.request("POST", f"/api/class/{code}/join?lang=en", body=b"{}",
                       headers={"Content-Type": "application/json", "X-Forwarded-For": forged})
    status = connection.getresponse().status
    connection.close()
    return status


def test_forged_x_forwarded_for_headers_guess_codes_as_the_one_address_they_came_from(cluster, new_page):
    """A script on one computer tries wrong codes, each with another forged X-Forwarded-For (one a whole chain),
    through HAProxy to both replicas: HAProxy appends the address it came from, the app counts that one, so past
    the computer's wrong codes a minute (counted in Redis, whichever replica answered) even the right code is
    not looked up; every phone it joined before counts as a seat of its own, and the class counts them all."""
    teacher = new_page(1280, 720, cold=True)
    open_app(teacher, f"{cluster.base}/class?lang=en", charts=False)
    teacher.get_by_role("button", name=EN("class.start")).click()
    link = teacher.locator("code", has_text="/join?").inner_text()
    code = dict(parse_qsl(urlsplit(link).query))["class"]
    forged = ["203.0.113.5", "198.51.100.23", "192.0.2.77, 203.0.113.9", "2001:db8::1"]
    assert [join(cluster.port, code, address) for address in forged] == [200] * 4  # four seats
    teacher.get_by_text(EN("class.students", count=4)).wait_for()
    wrong = "".join(c for c in "ACDEFGHJKMNPRTWXY34679" if c not in code)[:len(code)]
    most = POLICY["WRONG_CODES_PER_MINUTE"]
    tries = [join(cluster.port, wrong, forged[n % 4]) for n in range(most)]
    assert tries == [404] * most
    assert join(cluster.port, code, "203.0.113.77") == 429  # the right code: not looked up any more
    assert len(RedisStore(cluster.store).read(code).seats) == 4
    assert join_from_elsewhere(cluster.port, code) == 200  # another computer joins
    teacher.get_by_text(EN("class.students", count=5)).wait_for()
    assert_healthy(teacher)


def join_from_elsewhere(port: int, code: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", f"/api/class/{code}/join?lang=en", body=b"{}",
                       headers={"Content-Type": "application/json"})
    status = connection.getresponse().status
    connection.close()
    return status


def test_a_class_spans_replicas_and_survives_the_students_replica_dying(cluster, new_page):
    teacher = new_page(1280, 720, cold=True)  # contexts of their own: each browser has its own cookie
    open_app(teacher, f"{cluster.base}/class?lang=en", charts=False)
    teacher.get_by_role("button", name=EN("class.start")).click()
    link = teacher.locator("code", has_text="/join?").inner_text()
    student = new_page(390, 844, cold=True)  # the class's light page: any replica serves it
    student.goto(link.replace(urlsplit(link).netloc, urlsplit(cluster.base).netloc))
    expect(student.locator("#activity h2")).to_have_text(EN(f"tour.{TOUR[0].id}.title"))
    assert replica_of(student) != replica_of(teacher)  # leastconn: the second browser to the other replica
    teacher.get_by_text(EN("class.one_student")).wait_for()  # the teacher's replica reads the class from Redis

    teacher.get_by_role("button", name=EN("tour.next"), exact=True).click()  # pushed from the other replica
    expect(student.locator("#activity h2")).to_have_text(EN(f"tour.{TOUR[1].id}.title"))
    teacher.get_by_role("button", name=EN("class.activity.question"), exact=True).click()
    asked = QUESTIONS[0]
    student.get_by_role("radio", name=EN(asked.choice_key(asked.answer))).check()
    teacher.get_by_role("heading", name=re.compile(re.escape(EN("class.answered", answered=1, students=1)))).wait_for()

    killed = replica_of(student)
    os.kill(cluster.replicas[killed][0], signal.SIGKILL)
    # The page's event stream breaks; the browser connects again, HAProxy sends it to the live replica, which
    # reads the class from Redis and pushes the student's state: the answer the store kept is theirs again.
    teacher.get_by_role("button", name=EN("class.close")).click()
    expect(student.locator("#activity .note")).to_have_text(EN("join.closed"))
    shot(student, "cluster-student-back-on-another-replica")
    assert replica_of(student) != killed
    teacher.get_by_role("button", name=EN("class.reveal")).click()
    teacher.wait_for_selector(".js-plotly-plot")
    label = teacher.get_by_role("figure").first.get_attribute("aria-label")
    assert label.startswith(EN("class.describe", answered=1, students=1, choices="").split(".")[0]), label
    expect(student.locator(".verdict")).to_have_text(EN("ex.right", answer=EN(asked.choice_key(asked.answer))))
    teacher.get_by_role("button", name=EN("ex.show_me")).click()  # the bundle's files, from the live replica
    want = {k: v for k, v in asked.show_me.items() if k in ("residual", "norm", "depth")}
    assert wait_for_view(student, **want) == wait_for_view(teacher, **want)
    record = RedisStore(cluster.store).read(dict(parse_qsl(urlsplit(link).query))["class"])
    assert len(record.seats) == 1 and list(record.answers.values()) == [asked.answer]  # counted once
