"""The lesson's and the Depth lab's numbers: sha256 digests of the lesson's float64 bytes, and the
lab's curves themselves.

``tests/test_unchanged_engine.py`` runs this module twice on the same machine: here, and as a
script over a ``git archive`` of commit 8fa1d4f, from before the engine learned a trained model's
parts (biases, erf GELU, per-layer switches), and compares. (Digests pinned on one machine do not
hold on another: BLAS rounds differently on different CPUs.)
"""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
from threadpoolctl import threadpool_limits

from blockstab.block import StackConfig
from blockstab.gradients import stack_backward
from blockstab.lab import LabSetup, depth_curves
from blockstab.lesson import lesson_params, lesson_trace
from blockstab.papers import dong


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def lesson_cases():
    for residual, norm, placement, depth in itertools.product(
            (True, False), ("none", "layernorm", "rmsnorm"), ("post", "pre"), (1, 24)):
        trace = lesson_trace(StackConfig(depth=depth, residual=residual, norm=norm, placement=placement))
        yield f"lesson-{residual}-{norm}-{placement}-{depth}", digest(trace.values, trace.attention, trace.output)
    x = np.random.default_rng(5).normal(size=(2, 5, 2))
    grads = stack_backward(x, lesson_params(), StackConfig(depth=3, norm="layernorm"), np.ones_like(x))
    yield "lesson-backward", digest(grads.stream)


def lab_cases():
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


def numbers() -> dict:
    """``{"lesson": {case: digest}, "lab": {case: [curve as a list]}}``, on one BLAS thread."""
    with threadpool_limits(limits=1, user_api="blas"):
        return {"lesson": dict(lesson_cases()),
                "lab": {case: [np.asarray(a, dtype=np.float64).tolist() for a in curves]
                        for case, curves in lab_cases()}}


if __name__ == "__main__":
    print(json.dumps(numbers()))
