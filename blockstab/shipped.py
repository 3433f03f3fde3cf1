"""The paper presets' results, computed once and shipped with the engine in ``data/papers/``.

A preset's seeds, sizes and depths are fixed, so it gives the same curves at every run: the Depth lab shows the
shipped result at once and recomputes it live on request. ``python -m scripts.ship_papers`` writes the files;
:func:`differences` says where two results of a preset disagree (the tests hold the files to the engine with it).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, fields
from functools import cache
from pathlib import Path

import numpy as np

from .lab import FLOAT_FLOOR, DepthCurves, LabSetup
from .papers import DATA, SEEDS, Finding, PaperRun, PublishedCurve

FORMAT = 1  # the files' layout; a file of another layout is refused, not misread
FOLDER = DATA / "papers"
# Two results agree where every number is within this relative tolerance, or both are below the float64
# noise floor: another BLAS kernel or NumPy rounds differently in the last bits, and a doubly exponential
# decay doubles a relative rounding error at each layer.
RELATIVE_TOLERANCE = 1e-6
CURVE_FIELDS = tuple(f.name for f in fields(DepthCurves) if f.name != "setup")


def path(paper: str) -> Path:
    return FOLDER / f"{paper}.json"


def _array(values) -> np.ndarray | None:
    return None if values is None else np.array(values, dtype=float)


def _list(values: np.ndarray | None) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


def record(run: PaperRun) -> dict:
    """``run`` as plain JSON values (floats written to round-trip exactly)."""
    return {
        "format": FORMAT,
        "paper": run.paper,
        "seeds": list(SEEDS),
        "findings": [{"claim": f.claim, "passed": f.passed, "values": dict(f.values)} for f in run.findings],
        "curves": {variant: {"setup": asdict(c.setup)} | {name: _list(getattr(c, name)) for name in CURVE_FIELDS}
                   for variant, c in run.curves.items()},
        "published": [{"variant": p.variant, "ours": _list(p.ours), "published": _list(p.published),
                       "seeds": p.seeds, "tolerance": p.tolerance} for p in run.published],
    }


def from_record(data: dict) -> PaperRun:
    """The :class:`PaperRun` a :func:`record` holds."""
    if data.get("format") != FORMAT or data.get("seeds") != list(SEEDS):
        raise ValueError(f"a shipped result of format {FORMAT} with seeds {list(SEEDS)} was expected")
    curves = {variant: DepthCurves(LabSetup(**c["setup"]), **{name: _array(c[name]) for name in CURVE_FIELDS})
              for variant, c in data["curves"].items()}
    published = tuple(PublishedCurve(p["variant"], _array(p["ours"]), _array(p["published"]), p["seeds"],
                                     p["tolerance"]) for p in data["published"])
    findings = tuple(Finding(f["claim"], f["passed"], f["values"]) for f in data["findings"])
    return PaperRun(data["paper"], curves, findings, published)


def to_text(run: PaperRun) -> str:
    """The file's text: indented, each list of numbers on one line (a changed curve is a changed line)."""
    text = json.dumps(record(run), indent=1, ensure_ascii=False)
    numbers = re.compile(r"\[(?:\s*[-+0-9.eEInfityNa]+,?)+\s*\]")
    return numbers.sub(lambda m: re.sub(r"\s+", "", m[0]).replace(",", ", "), text) + "\n"


@cache
def shipped(paper: str) -> PaperRun:
    """The preset's shipped result (``data/papers/<paper>.json``)."""
    run = from_record(json.loads(path(paper).read_text(encoding="utf-8")))
    if run.paper != paper:
        raise ValueError(f"{path(paper).name} holds the result of {run.paper!r}")
    return run


def _leaves(value, at: tuple = ()) -> dict:
    """Every leaf of a record by its path (``curves.skip.bert.stream_rms``); a list of numbers is one leaf."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
        items = enumerate(value)
    else:
        return {".".join(map(str, at)): value}
    return {path: leaf for key, item in items for path, leaf in _leaves(item, (*at, key)).items()}


def _differ(a, b) -> bool:
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a != b
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape != b.shape or not np.allclose(a, b, rtol=RELATIVE_TOLERANCE, atol=FLOAT_FLOOR, equal_nan=True)


def differences(ours: PaperRun, theirs: PaperRun) -> list[str]:
    """Where two results of a preset disagree (a finding's verdict or number, a curve, a setup), by path."""
    a, b = _leaves(record(ours)), _leaves(record(theirs))
    return sorted(key for key in a.keys() | b.keys() if key not in a or key not in b or _differ(a[key], b[key]))
