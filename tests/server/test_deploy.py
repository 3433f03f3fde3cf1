"""What a school's IT would deploy (deploy/): the Kubernetes manifest validated against the API's schemas
(not run: the HAProxy cluster is the one run, tests/browser/test_cluster_browser.py) and carrying that
cluster's settings, and the systemd unit checked by systemd itself."""

from __future__ import annotations

import re
import shutil
import subprocess

import kubernetes_validate
import pytest
import yaml

from support import ROOT

DEPLOY = ROOT / "deploy"
MANIFEST = list(yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()))
HAPROXY = (DEPLOY / "haproxy.cfg").read_text()
IMAGE_SH = (ROOT / "scripts" / "image.sh").read_text()
BY_NAME = {(doc["kind"], doc["metadata"]["name"]): doc for doc in MANIFEST}


@pytest.mark.parametrize("doc", MANIFEST, ids=lambda doc: f"{doc['kind']}/{doc['metadata']['name']}")
def test_each_resource_is_valid_kubernetes(doc):
    kubernetes_validate.validate(doc, "1.37.0", strict=True)  # raises on any error


def test_the_manifest_carries_the_tested_clusters_settings():
    app = BY_NAME["Deployment", "blockstab"]["spec"]
    (container,) = app["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    secrets = {e["name"]: e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"] if "valueFrom" in e}
    assert secrets == {"BLOCKSTAB_ADDRESS_KEY": "blockstab", "BLOCKSTAB_TEACHER_PASSPHRASE": "blockstab"}
    assert app["replicas"] >= 2 and container["command"][1:3] == ["-m", "server"]
    redis = BY_NAME["Service", "blockstab-redis"]["spec"]["ports"][0]["port"]
    assert env["BLOCKSTAB_CLASS_STORE"] == f"redis://blockstab-redis:{redis}/0" and env["BLOCKSTAB_BEHIND_PROXY"]
    health = re.search(r"option httpchk GET (\S+)", HAPROXY)[1]
    assert container["readinessProbe"]["httpGet"]["path"] == health == "/_stcore/health"
    annotations = BY_NAME["Ingress", "blockstab"]["metadata"]["annotations"]
    cookie = re.search(r"^\s*cookie (\S+) insert", HAPROXY, re.M)[1]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"] == cookie
    tunnel = int(re.search(r"timeout tunnel (\d+)h", HAPROXY)[1]) * 3600
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(annotations[f"nginx.ingress.kubernetes.io/{timeout}"]) >= tunnel, timeout
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"  # a live class's event stream


def test_haproxy_sends_an_event_streams_steps_at_once():
    """Without ``option http-no-delay`` HAProxy held plain HTTP/1's small sends (a step's event) ~200 ms (round 38b)."""
    defaults = re.search(r"^defaults\n(.*?)^\S", HAPROXY, re.M | re.S)[1]
    assert re.search(r"^\s*option http-no-delay$", defaults, re.M)


def test_the_deployment_runs_the_image_as_scripts_image_sh_checks_it():
    """The image scripts/image.sh tags and checks, as that check runs it: not root (UID 1000), a read-only root with
    a volume at /tmp, the port from ``PORT``; and the Ingress serves it over TLS."""
    pod = BY_NAME["Deployment", "blockstab"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == re.search(r"^IMAGE=\$\{IMAGE:-(\S+)\}$", IMAGE_SH, re.M)[1]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 1000
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert [m["name"] for m in container["volumeMounts"] if m["mountPath"] == "/tmp"] == ["tmp"]
    assert "emptyDir" in volumes["tmp"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    secrets = {e["name"]: e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"] if "valueFrom" in e}
    assert secrets == {"BLOCKSTAB_ADDRESS_KEY": "blockstab", "BLOCKSTAB_TEACHER_PASSPHRASE": "blockstab"}
    assert container["ports"][0]["containerPort"] == int(env["PORT"])
    ingress = BY_NAME["Ingress", "blockstab"]["spec"]
    (tls,) = ingress["tls"]
    assert tls["secretName"] and tls["hosts"] == [rule["host"] for rule in ingress["rules"]]


def test_redis_runs_with_redis_conf_settings_everywhere():
    conf = dict(line.split(None, 1) for line in (DEPLOY / "redis.conf").read_text().splitlines()
                if line and not line.startswith("#"))
    (container,) = BY_NAME["Deployment", "blockstab-redis"]["spec"]["template"]["spec"]["containers"]
    args = dict(zip(container["args"][::2], container["args"][1::2], strict=True))
    assert conf["save"] == '""' and args["--save"] == ""
    for key in ("appendonly", "maxmemory", "maxmemory-policy"):
        assert args[f"--{key}"] == conf[key], key


def test_the_systemd_unit_passes_systemd_analyze(tmp_path):
    """The unit as installed in this checkout (its paths made this checkout's) passes ``systemd-analyze
    verify``, and runs what scripts/start.sh --lan runs."""
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing (Debian's systemd package)"
    text = (DEPLOY / "blockstab.service").read_text()
    assert re.search(r"^ExecStart=\S+/\.venv/bin/python -m server --lan\b", text, re.M)
    unit = tmp_path / "blockstab.service"
    unit.write_text(text.replace("/opt/blockstab", str(ROOT)).replace("User=blockstab", "User=root"))
    result = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True)
    problems = [line for line in result.stderr.splitlines() if "blockstab.service" in line]
    assert result.returncode == 0 and problems == [], result.stderr
