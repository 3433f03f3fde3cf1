"""The one container image (Containerfile), built and run as hosts run it by ``bash scripts/image.sh check``: a
read-only root with a tmpfs at /tmp, a port of the environment's, UID 1000, health, compressed pages, its size.
Only in ``bash scripts/test.sh --full-matrix`` (the ``image`` marker; it installs podman there): a build takes
minutes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from support import ROOT

pytestmark = [
    pytest.mark.image,
    pytest.mark.skipif(shutil.which("podman") is None,
                       reason="podman is missing: bash scripts/test.sh --full-matrix installs it and runs this test"),
]


@pytest.mark.timeout(1800)
def test_the_image_passes_scripts_image_sh_check():
    result = subprocess.run(["bash", "scripts/image.sh", "check"], cwd=ROOT, capture_output=True, text=True)
    print(result.stdout)  # the checks and the figures, in pytest's report of the test
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout and result.stdout.count("ok    ") >= 9, result.stdout
