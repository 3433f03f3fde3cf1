"""The instant Explorer's browser side (ui/explorer/): its lookups pass node's own tests against the
Python reference (tests/js/), and its modules join into the one script the app and the take-home
page load."""

import re
import shutil
import subprocess
import sys

from support import ROOT
from ui.instant import EXPLORER, MODULES, explorer_script


def test_the_browser_lookups_pick_and_cut_as_the_python_reference():
    node = shutil.which("node")
    assert node, "node is missing: apt-get install nodejs (bash scripts/test.sh installs it as root)"
    done = subprocess.run([node, "--test", "tests/js/"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", done.stdout, re.M) and re.search(r"^# fail 0$", done.stdout, re.M)


def test_the_modules_join_into_one_script_with_one_export_and_no_import():
    script = explorer_script()
    assert sorted(p.stem for p in EXPLORER.glob("*.js")) == sorted(MODULES)
    assert script.count("export default function instantExplorer(") == 1
    assert not re.search(r"^\s*(import|export (?!default))", script, re.M)
    for name in MODULES:  # every module's own lines are in it, in dependency order
        first = (EXPLORER / f"{name}.js").read_text(encoding="utf-8").splitlines()[0]
        assert first in script
    imported = {name: set(re.findall(r'from "\./(\w+)\.js"', (EXPLORER / f"{name}.js").read_text(encoding="utf-8")))
                for name in MODULES}
    assert all(MODULES.index(dep) < MODULES.index(name) for name, deps in imported.items() for dep in deps)
