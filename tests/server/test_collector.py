"""The server process's garbage collector (``server.asgi.collect_seldom``): what the process holds once it has
loaded the app and drawn each figure is set aside for good, and the youngest generation is collected seldom;
a full collection then walks only what came after (round 43: the pauses that set one replica's step p95)."""

from __future__ import annotations

import json
import subprocess
import sys

from support import ROOT

PROBE = """import gc, json
before = len(gc.get_objects())
import server.asgi
print(json.dumps({"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold(), "tracked": len(gc.get_objects()),
                  "before": before, "young": server.asgi.YOUNG_OBJECTS}))"""


def test_the_loaded_app_is_set_aside_and_the_young_generation_collected_seldom():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["threshold"][0] == seen["young"] > 700
    assert seen["frozen"] > 10 * seen["before"]  # the app, Streamlit and Plotly's validators, not the interpreter's
    assert seen["tracked"] < seen["frozen"] / 10  # a full collection walks only what came after
