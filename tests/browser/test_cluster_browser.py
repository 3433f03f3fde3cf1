"""Past one process: two replicas behind a real HAProxy with a real Redis, started by the project's own
``scripts/serve_cluster.sh`` as a school's IT would start them. A teacher and a student land on different
replicas (HAProxy's cookie keeps each tab on its own), share one live class through Redis, and the
student's replica is killed mid-question: the page reconnects to the live one and shows the class again
from its link, and the student's answer is still counted once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from benchmarks.local_server import free_port
from blockstab.scenario import PRESETS, to_json
from support import ROOT
from support.browser import open_app, shot, wait_for_view
from ui.lessons import QUESTIONS, TOUR
from ui.text import Text

EN = Text("en")
LINE = re.compile(r"replica (\d+) pid (\d+) port (\d+)")


@dataclass
class Cluster:
    base: str
    replicas: dict[int, tuple[int, int]]  # replica -> (pid, port)
    process: subprocess.Popen


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``bash scripts/serve_cluster.sh --replicas 2`` on a free port, once it printed its replicas; stopped
    with SIGTERM afterwards, which must stop every process it started."""
    port, log = free_port(), tmp_path_factory.mktemp("cluster") / "serve_cluster.log"
    env = {**os.environ, "BLOCKSTAB_LAB_SECONDS": "600", "BLOCKSTAB_CLASS_STORE": ""}
    with open(log, "w") as errors:
        process = subprocess.Popen(["bash", "scripts/serve_cluster.sh", "--replicas", "2", "--port", str(port)],
                                   cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
    replicas = {}
    for line in process.stdout:
        if match := LINE.fullmatch(line.strip()):
            replicas[int(match[1])] = int(match[2]), int(match[3])
        if line.startswith("haproxy pid"):
            break
    if len(replicas) != 2:
        process.kill()
        pytest.fail(f"the cluster did not start: {log.read_text()[-3000:]}", pytrace=False)
    yield Cluster(f"http://localhost:{port}", replicas, process)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    alive = [pid for pid, _ in replicas.values() if os.path.exists(f"/proc/{pid}")]
    assert alive == [], "serve_cluster.sh left replicas running"


def replica_of(page) -> int:
    """The replica HAProxy pinned this page's browser to (its affinity cookie, rN)."""
    (cookie,) = [c["value"] for c in page.context.cookies() if c["name"] == "BLOCKSTAB_REPLICA"]
    return int(cookie.removeprefix("r"))


def test_a_class_spans_replicas_and_survives_the_students_replica_dying(cluster, new_page):
    teacher = new_page(1280, 720, cold=True)  # contexts of their own: each browser has its own cookie
    open_app(teacher, f"{cluster.base}/class?lang=en", charts=False)
    teacher.get_by_role("button", name=EN("class.start")).click()
    link = teacher.locator("code", has_text="/join?").inner_text()
    student = new_page(390, 844, cold=True)
    open_app(student, link, charts=True)
    assert replica_of(student) != replica_of(teacher)  # leastconn: the second browser to the other replica
    teacher.get_by_text(EN("class.one_student")).wait_for()  # the teacher's replica reads the class from Redis

    teacher.get_by_role("button", name=EN("tour.next"), exact=True).click()
    student.get_by_text(EN(f"tour.{TOUR[1].id}.title")).wait_for()
    teacher.get_by_role("button", name=EN("class.activity.question"), exact=True).click()
    asked = QUESTIONS[0]
    student.get_by_text(EN(asked.choice_key(asked.answer)), exact=True).click()
    teacher.get_by_text(re.compile(re.escape(EN("class.answered", answered=1, students=1)))).wait_for()

    killed = replica_of(student)
    os.kill(cluster.replicas[killed][0], signal.SIGKILL)
    # Streamlit's page reconnects; HAProxy sends it to the live replica, where a new session runs the page
    # from its link (the class and the student's token): the answer the store kept is the student's again.
    student.get_by_text(EN("app.new_session")).wait_for()  # said in one line (server/resume.py)
    shot(student, "cluster-student-back-on-another-replica")
    expect(student.get_by_label(EN(asked.choice_key(asked.answer)), exact=True)).to_be_checked()
    assert replica_of(student) != killed
    wrong = next(c for c in asked.choices if c != asked.answer)
    student.get_by_text(EN(asked.choice_key(wrong)), exact=True).click()  # changed after the reconnect
    teacher.get_by_role("button", name=EN("class.reveal")).click()
    teacher.wait_for_selector(".js-plotly-plot")
    label = teacher.get_by_role("figure").first.get_attribute("aria-label")
    assert label.startswith(EN("class.describe", answered=1, students=1, choices="").split(".")[0]), label
    student.get_by_text(EN("ex.wrong", answer=EN(asked.choice_key(asked.answer)))).wait_for()
    teacher.get_by_role("button", name=EN("ex.show_me")).click()  # the bundle's files, from each one's replica
    want = {k: v for k, v in asked.show_me.items() if k in ("residual", "norm", "depth")}
    assert wait_for_view(student, **want) == wait_for_view(teacher, **want)


def test_an_upload_the_depth_lab_and_the_real_model_work_behind_haproxy(cluster, new_page):
    """What each replica keeps for its own sessions (an upload's bytes, the Depth lab's runs, the Real
    model's caches) is reached through HAProxy: the affinity cookie keeps a tab's requests on its replica."""
    page = new_page(1280, 720, cold=True)
    open_app(page, f"{cluster.base}/scenario?lang=en", charts=False)
    upload = page.locator(".st-key-editor_upload input[type=file]")
    upload.set_input_files(files=[{"name": "mine.json", "mimeType": "application/json",
                                   "buffer": to_json(PRESETS["support"]).encode()}])
    page.wait_for_url(re.compile(r"[?&]sc=support(&|$)"))  # the uploaded example is in use
    open_app(page, f"{cluster.base}/lab?lang=en")
    open_app(page, f"{cluster.base}/real?lang=en")
    assert not page.query_selector("[data-testid=stException]") and not page.js_errors
