"""Engine benchmark: lesson traces at several depths and a random deep stack, forward and backward.

Run: ``.venv/bin/python -m benchmarks.engine``. Prints min and median wall time over repeats.
Targets on the 2-core reference machine: lesson depth 1000 < 30 ms; random stack < 300 ms.
"""

from __future__ import annotations

import statistics
import time


def timed(fn, repeats: int) -> tuple[float, float]:
    """(min, median) wall time in ms over ``repeats`` calls after one warm-up call; real_model.py
    uses it too, so the engine is imported only in main()."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3, statistics.median(times) * 1e3


def main() -> None:
    from blockstab.block import StackConfig, run_stack
    from blockstab.gradients import stack_backward
    from blockstab.init import random_stack, random_tokens
    from blockstab.lab import LabSetup, depth_curves
    from blockstab.lesson import ACTION_TOKEN, lesson_trace
    from blockstab.readouts import readouts

    cases = []
    for depth in (1, 10, 100, 1000):
        cfg = StackConfig(depth=depth)
        cases.append((f"lesson trace, both scenarios, depth {depth}", lambda c=cfg: lesson_trace(c), 30))
        cases.append((f"  + readouts, depth {depth}",
                      lambda c=cfg: readouts(lesson_trace(c), ACTION_TOKEN), 30))
    lab_cfg = StackConfig(depth=200, norm="layernorm", placement="pre")
    lab_params = random_stack(seed=0, depth=200, d_model=64, heads=4)
    lab_tokens = random_tokens(seed=1, batch=1, tokens=32, d_model=64)
    cases.append(("random stack d=64, 32 tokens, 4 heads, 200 blocks",
                  lambda: run_stack(lab_tokens, lab_params, lab_cfg), 5))
    readout = random_tokens(seed=2, batch=1, tokens=32, d_model=64)  # dL/d(output) of a random linear readout
    cases.append(("random stack d=64, 32 tokens, 4 heads, 200 blocks, forward + backward",
                  lambda: stack_backward(lab_tokens, lab_params, lab_cfg, readout), 5))
    # The Depth lab's runs: weights drawn block by block from the seed, readouts of every layer.
    lab = LabSetup(d_model=64, tokens=32, heads=4, depth=200, init="bert", placement="pre")
    cases.append(("lab d=64, 32 tokens, 4 heads, 200 blocks, forward + metrics",
                  lambda: depth_curves(lab, gradients=False), 5))
    cases.append(("lab d=64, 32 tokens, 4 heads, 200 blocks, forward + backward + metrics",
                  lambda: depth_curves(lab), 5))
    wide = LabSetup(d_model=512, tokens=128, heads=8, depth=12, init="bert", placement="pre")
    cases.append(("lab d=512, 128 tokens, 8 heads, 12 blocks, forward + metrics",
                  lambda: depth_curves(wide, gradients=False), 3))
    cases.append(("lab d=512, 128 tokens, 8 heads, 12 blocks, forward + backward + metrics",
                  lambda: depth_curves(wide), 3))
    print(f"{'case':<72}{'min ms':>10}{'median ms':>12}")
    for name, fn, repeats in cases:
        best, median = timed(fn, repeats)
        print(f"{name:<72}{best:>10.2f}{median:>12.2f}")


if __name__ == "__main__":
    main()
