"""The lesson's and the Depth lab's numbers, as the engine computes them today or as commit 8fa1d4f
(from before the engine learned a trained model's parts: biases, erf GELU, per-layer switches) did.

``python tests/support/unchanged_engine.py --pin`` runs this module over a ``git archive`` of
8fa1d4f and stores its numbers in ``tests/engine/data/unchanged_engine.npz``, which
``tests/engine/test_unchanged_engine.py`` compares today's engine with (within a stored tolerance:
BLAS rounds the last bits differently on different CPUs). Needs the history only to pin.
"""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

BEFORE = "8fa1d4f"
PINNED = Path(__file__).resolve().parents[1] / "engine" / "data" / "unchanged_engine.npz"


def lesson_cases():
    """(case, arrays): the lesson's traces at every switch setting, and one backward pass."""
    from blockstab.block import StackConfig
    from blockstab.gradients import stack_backward
    from blockstab.lesson import lesson_params, lesson_trace

    for residual, norm, placement, depth in itertools.product(
            (True, False), ("none", "layernorm", "rmsnorm"), ("post", "pre"), (1, 24)):
        trace = lesson_trace(StackConfig(depth=depth, residual=residual, norm=norm, placement=placement))
        yield f"lesson-{residual}-{norm}-{placement}-{depth}", [trace.values, trace.attention, trace.output]
    x = np.random.default_rng(5).normal(size=(2, 5, 2))
    grads = stack_backward(x, lesson_params(), StackConfig(depth=3, norm="layernorm"), np.ones_like(x))
    yield "lesson-backward", [grads.stream]


def lab_cases():
    """(case, curves): Depth-lab setups' curves, and the Dong preset's."""
    from blockstab.lab import LabSetup, depth_curves
    from blockstab.papers import dong

    for norm, residual, placement, scale in (
            ("layernorm", True, "pre", "one"), ("rmsnorm", False, "post", "one"),
            ("none", True, "post", "deepnorm"), ("layernorm", True, "pre", "inv_sqrt_depth")):
        setup = LabSetup(d_model=16, tokens=8, heads=2, depth=6, norm=norm, residual=residual,
                         placement=placement, residual_scale=scale)
        c = depth_curves(setup)
        yield f"lab-{norm}-{residual}-{placement}-{scale}", [
            c.relative_residual, c.pairwise_cosine, c.stream_rms, c.gradient_norm, c.stream_gradient_norm]
    run = dong(seeds=(0,))
    yield "dong", [c.relative_residual for c in run.curves.values()]


def numbers() -> dict[str, np.ndarray]:
    """``{"<case>/<i>": array}`` for every case's arrays, on one BLAS thread."""
    with threadpool_limits(limits=1, user_api="blas"):
        return {f"{case}/{i}": np.asarray(a, dtype=np.float64)
                for case, arrays in itertools.chain(lesson_cases(), lab_cases()) for i, a in enumerate(arrays)}


def pin() -> None:
    """Store 8fa1d4f's numbers, computed by its engine (a ``git archive``) on this machine."""
    root = Path(__file__).resolve().parents[2]
    archive = subprocess.run(["git", "-C", str(root), "archive", BEFORE], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as old, tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(old, filter="data")
        subprocess.run([sys.executable, __file__, str(PINNED)], env={**os.environ, "PYTHONPATH": old}, check=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--pin"]:
        pin()
    else:
        np.savez_compressed(sys.argv[1], **numbers())
