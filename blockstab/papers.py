"""Published results about deep Transformers at initialisation, re-measured with this engine.

Each preset runs the paper's setting (at reduced width where noted) over several seeds and returns
:class:`Finding` records: the paper's claim as a number or bound, ours, and whether ours meets
it with the stated tolerance; a preset that re-runs a published figure also returns its curves
beside ours (:class:`PublishedCurve`, data in ``data/``). Text lives in the app's catalogs under
``paper.<id>.*``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from .block import run_stack
from .lab import FLOAT_FLOOR, DepthCurves, LabSetup, depth_curves, forward_stream
from .sublayers import NormParams, layer_norm

SEEDS = (0, 1, 2)
Progress = Callable[[float], None]


@dataclass(frozen=True)
class Finding:
    """One claim checked: ``values`` hold the numbers its sentence quotes (ours and the paper's)."""

    claim: str
    passed: bool
    values: dict

    def __post_init__(self):  # plain Python values, whatever NumPy scalars came in
        object.__setattr__(self, "passed", bool(self.passed))
        object.__setattr__(self, "values", {k: v if isinstance(v, int) else float(v) for k, v in self.values.items()})


@dataclass(frozen=True)
class PublishedCurve:
    """A curve read off a paper's figure beside ours (the mean over ``seeds`` seeds), index = layer;
    ours reproduces it when it stays within ``tolerance`` from layer 1 on."""

    variant: str
    ours: np.ndarray
    published: np.ndarray
    seeds: int
    tolerance: float

    @property
    def gap(self) -> float:
        """Largest |ours - published| from layer 1 on (layer 0 is the input, not the stack)."""
        return float(np.abs(self.ours[1:] - self.published[1:]).max())

    @property
    def layers_beyond(self) -> tuple[int, ...]:
        """The layers from 1 on where ours is more than ``tolerance`` from the published value."""
        return tuple(int(i) + 1 for i in np.flatnonzero(np.abs(self.ours[1:] - self.published[1:]) > self.tolerance))


@dataclass(frozen=True)
class PaperRun:
    """A preset's result: the curves to draw (first seed), by variant id, the findings, and any
    published curves re-measured."""

    paper: str
    curves: dict[str, DepthCurves]
    findings: tuple[Finding, ...]
    published: tuple[PublishedCurve, ...] = ()

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.findings)


def _runs(setups: dict[str, LabSetup], seeds, progress, gradients=False) -> dict[str, list[DepthCurves]]:
    """Curves of every setup over every seed, reporting progress run by run."""
    total, done, results = len(setups) * len(seeds), 0, {}
    for name, setup in setups.items():
        results[name] = []
        for seed in seeds:
            results[name].append(depth_curves(replace(setup, seed=seed), gradients=gradients))
            done += 1
            if progress:
                progress(done / total)
    return results


def _part(progress: Progress | None, start: float, share: float) -> Progress | None:
    """``progress`` for one part of a preset's work, from ``start`` over ``share`` of the whole."""
    return None if progress is None else (lambda fraction: progress(start + share * fraction))


def _first(runs: dict[str, list[DepthCurves]]) -> dict[str, DepthCurves]:
    return {name: curves[0] for name, curves in runs.items()}


# --------------------------------------------------------------------------- Dong et al. 2021

DONG_DEPTH = 12
DONG_INITS = ("bert", "fan_in")
DATA = Path(__file__).with_name("data")
# Figure 2's configurations, by our variant: pure attention, attention + MLP, attention + skip.
FIGURE_2_CONFIGS = {"attention": "SAN", "mlp": "SAN+MLP", "skip": "SAN+skip"}
FIGURE_2_TOLERANCE = 0.1  # ten times the figure's reading accuracy (about 0.01)
# The paper's curves are means over 32 inputs; ours over 32 seeds (weights and tokens). Three seeds
# are not enough: one seed's curve with skip connections varies by about 0.07 (sd) at layer 12.
FIGURE_2_SEEDS = tuple(range(32))


@cache
def dong_figure_2() -> dict[str, np.ndarray]:
    """Dong et al. 2021's Figure 2 (BERT at initialisation), relative residual at layers 0-12 by
    configuration, as read off the figure's vector drawings (provenance in the file's header)."""
    lines = (DATA / "dong2021_fig2_bert_init.csv").read_text(encoding="utf-8").splitlines()
    header, *rows = [line.split(",") for line in lines if line and not line.startswith("#")]
    config = header.index("config")
    layers = [i for i, name in enumerate(header) if name.startswith("l")]
    return {row[config]: np.array([float(row[i]) for i in layers]) for row in rows}


def dong_setups() -> dict[str, LabSetup]:
    """Pure attention, attention + skip, attention + MLP; no normalization, BERT-scale and fan-in
    weights; every stack fed BERT's embedding output at initialisation, as the paper's figure was."""
    base = LabSetup(d_model=64, tokens=32, heads=4, depth=DONG_DEPTH, norm="none", embedding="bert")
    return {
        f"{variant}.{init}": replace(base, init=init, residual=residual, feed_forward=mlp)
        for init in DONG_INITS
        for variant, residual, mlp in (("attention", False, False), ("skip", True, False), ("mlp", False, True))
    }


def _layers_to_floor(r: np.ndarray) -> int:
    below = np.flatnonzero(r < 1e-12)
    return int(below[0]) if below.size else len(r)


def _digit_growth(r: np.ndarray) -> float:
    """Smallest factor by which -log(r) grows from one layer to the next (from layer 1 until the
    floor): about 1 for an exponential decay, >= 2 for a doubly exponential one."""
    logs = -np.log(r[1:_layers_to_floor(r)])
    return float((logs[1:] / logs[:-1]).min()) if len(logs) >= 2 else float("inf")


def dong(seeds=SEEDS, progress: Progress | None = None) -> PaperRun:
    """Dong, Cordonnier & Loukas 2021, "Attention is not all you need: pure attention loses rank
    doubly exponentially with depth". The skip claims compare the residual with its value at the
    input (the tokens fed in set where every curve starts); Figure 2's curves are compared as drawn."""
    setups = dong_setups()
    claims_share = len(setups) * len(seeds) / (len(setups) * len(seeds) + len(FIGURE_2_CONFIGS) * len(FIGURE_2_SEEDS))
    runs = _runs(setups, seeds, _part(progress, 0.0, claims_share))
    figure_runs = _runs({f"{variant}.bert": setups[f"{variant}.bert"] for variant in FIGURE_2_CONFIGS},
                        FIGURE_2_SEEDS, _part(progress, claims_share, 1.0 - claims_share))
    pure = [c.relative_residual for init in DONG_INITS for c in runs[f"attention.{init}"]]
    mlp = [c.relative_residual for init in DONG_INITS for c in runs[f"mlp.{init}"]]
    skip_bert = [c.relative_residual for c in runs["skip.bert"]]
    skip_fan_in = [c.relative_residual for c in runs["skip.fan_in"]]
    floor_layer = max(_layers_to_floor(r) for r in pure)
    growth = min(_digit_growth(r) for r in pure)
    skip_kept = min(r.min() / r[0] for r in skip_bert)
    slowed = min(s[6] / s[0] for s in skip_fan_in)
    mlp_at_6 = max(r[6] for r in mlp)
    figure = dong_figure_2()
    published = tuple(
        PublishedCurve(f"{variant}.bert", np.mean([c.relative_residual for c in figure_runs[f"{variant}.bert"]],
                                                  axis=0), figure[config], len(FIGURE_2_SEEDS), FIGURE_2_TOLERANCE)
        for variant, config in FIGURE_2_CONFIGS.items())
    gaps = {curve.variant.split(".")[0]: curve.gap for curve in published}
    return PaperRun("dong", _first(runs), (
        Finding("doubly_exponential", floor_layer <= 6 and growth >= 2.0,
                {"layers": floor_layer, "growth": growth}),
        Finding("skip_keeps_rank", skip_kept >= 0.5, {"kept": skip_kept, "depth": DONG_DEPTH}),
        Finding("skip_slows", slowed >= 0.1, {"residual": slowed}),
        Finding("mlp_does_not_stop", mlp_at_6 < 1e-6, {"residual": max(mlp_at_6, FLOAT_FLOOR)}),
        Finding("figure_2", not any(curve.layers_beyond for curve in published), gaps | {"seeds": len(FIGURE_2_SEEDS)}),
    ), published)


# --------------------------------------------------------------------------- Xiong et al. 2020

XIONG_POST_SQUARED_NORM = 1.5  # Lemma 1: E||x^{post,5}||^2 / d = 3/2
XIONG_DEPTHS = (6, 12, 24, 48)
XIONG_BASE = LabSetup(d_model=64, tokens=32, heads=1, init="xiong", placement="post", norm="layernorm")


def xiong_pre_bounds(layer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 2: (1 + l/2) d <= E||x_l||^2 <= (1 + 3l/2) d for Pre-LN, per d."""
    return 1.0 + layer / 2.0, 1.0 + 1.5 * layer


def _post_ffn_sums(setup: LabSetup) -> np.ndarray:
    """||x^{post,5}||^2 / d (the FFN residual sum before the second LayerNorm) of every token and block."""
    values = run_stack(setup.input_tokens(), setup.params, setup.config).stage("ffn_residual")
    return (values**2).sum(axis=-1) / setup.d_model


def xiong(seeds=SEEDS, progress: Progress | None = None) -> PaperRun:
    """Xiong et al. 2020, "On layer normalization in the Transformer architecture": the simplified
    setting W_Q = W_K = 0, other weights N(0, 1/d); Lemmas 1-2 and Theorem 1."""
    grad_setups = {f"{placement}.{depth}": replace(XIONG_BASE, placement=placement, depth=depth)
                   for placement in ("post", "pre") for depth in XIONG_DEPTHS}
    runs = _runs(grad_setups, seeds, progress, gradients=True)
    post_norm = float(np.mean([_post_ffn_sums(replace(XIONG_BASE, depth=6, seed=s)) for s in seeds]))
    deepest = XIONG_DEPTHS[-1]
    pre_streams = [forward_stream(replace(XIONG_BASE, placement="pre", depth=deepest, seed=s)) for s in seeds]
    squared = np.mean([(x**2).sum(axis=-1).mean(axis=-1) for x in pre_streams], axis=0) / XIONG_BASE.d_model
    low, high = xiong_pre_bounds(np.arange(deepest + 1))
    worst = float(np.max(np.maximum(low / squared, squared / high)))

    def last_gradient(placement):
        return np.array([np.mean([c.ffn_out_gradient_norm[-1] for c in runs[f"{placement}.{d}"]])
                         for d in XIONG_DEPTHS])

    post_grad, pre_grad = last_gradient("post"), last_gradient("pre")
    post_spread = float(post_grad.max() / post_grad.min())
    pre_slope = float(np.polyfit(np.log(XIONG_DEPTHS), np.log(pre_grad), 1)[0])
    return PaperRun("xiong", _first({k: v for k, v in runs.items() if k.endswith(str(deepest))}), (
        Finding("post_norm", abs(post_norm - XIONG_POST_SQUARED_NORM) <= 0.1,
                {"ours": post_norm, "published": XIONG_POST_SQUARED_NORM}),
        Finding("pre_bounds", worst <= 1.1, {"depth": deepest, "worst": worst}),
        Finding("post_gradient_flat", post_spread <= 1.5,
                {"spread": post_spread, "low": XIONG_DEPTHS[0], "high": deepest}),
        Finding("pre_gradient_shrinks", -0.7 <= pre_slope <= -0.3, {"slope": pre_slope}),
    ))


# ---------------------------------------------------------------------------- Noci et al. 2022

NOCI_DEPTHS = (6, 24, 96)
NOCI_BASE = LabSetup(d_model=64, tokens=32, heads=4, init="fan_in", placement="post", norm="layernorm")


def noci(seeds=SEEDS, progress: Progress | None = None) -> PaperRun:
    """Noci et al. 2022, "Signal propagation in Transformers: theoretical perspectives and the role
    of rank collapse": residual branches scaled by 1/sqrt(L) keep tokens apart at any depth."""
    setups = {f"{scale}.{depth}": replace(NOCI_BASE, depth=depth, residual_scale=scale)
              for scale in ("one", "inv_sqrt_depth") for depth in NOCI_DEPTHS}
    runs = _runs(setups, seeds, progress)

    def final_cosine(scale, depth):
        return float(np.mean([c.pairwise_cosine[-1] for c in runs[f"{scale}.{depth}"]]))

    plain = [final_cosine("one", d) for d in NOCI_DEPTHS]
    scaled = [final_cosine("inv_sqrt_depth", d) for d in NOCI_DEPTHS]
    # Block i's weights depend on (seed, i) only, so with alpha = 1 the shorter stacks are the first
    # blocks of the deepest one: draw that one alone, and the scaled stacks at each depth.
    drawn = {k: v for k, v in _first(runs).items() if k.startswith("inv_sqrt_depth") or k == f"one.{NOCI_DEPTHS[-1]}"}
    return PaperRun("noci", drawn, (
        Finding("plain_collapses", plain[-1] >= 0.99 and plain == sorted(plain),
                {"cosine": plain[-1], "depth": NOCI_DEPTHS[-1]}),
        Finding("scaled_bounded", max(scaled) <= 0.5 and max(scaled) - min(scaled) <= 0.2,
                {"low": min(scaled), "high": max(scaled)}),
    ))


# ------------------------------------------------------------------------ Wang et al. 2022

DEEPNET_BASE = LabSetup(d_model=64, tokens=32, heads=4, depth=200, init="fan_in", placement="post",
                        norm="layernorm")


def deepnet(seeds=SEEDS, progress: Progress | None = None) -> PaperRun:
    """Wang et al. 2022, "DeepNet: scaling Transformers to 1,000 layers": DeepNorm's
    x_{l+1} = LN(alpha x_l + F(x_l)), alpha = (2N)^(1/4), branch weights times beta = (8N)^(-1/4)."""
    runs = _runs({"plain": DEEPNET_BASE, "deepnorm": replace(DEEPNET_BASE, residual_scale="deepnorm")},
                 seeds, progress)
    plain = max(c.relative_residual[-1] for c in runs["plain"])
    kept = min(c.relative_residual[-1] for c in runs["deepnorm"])
    cosine = max(c.pairwise_cosine[-1] for c in runs["deepnorm"])
    return PaperRun("deepnet", _first(runs), (
        Finding("plain_collapses", plain <= 1e-3, {"residual": max(plain, FLOAT_FLOOR), "depth": 200}),
        Finding("deepnorm_keeps", kept >= 0.5 and cosine <= 0.1, {"residual": kept, "cosine": cosine}),
    ))


# ------------------------------------------------------- Ba et al. 2016, Brody et al. 2023

GEOMETRY_WIDTHS = (2, 3, 64)


def geometry(seeds=SEEDS, progress: Progress | None = None) -> PaperRun:
    """LayerNorm (unit gain, zero bias) = projection onto the hyperplane orthogonal to (1, ..., 1),
    then scaling to radius sqrt(d): checked on random vectors of several widths."""
    mean_error, radius_error = 0.0, 0.0
    for seed in seeds:
        for d in GEOMETRY_WIDTHS:
            x = np.random.default_rng(seed).normal(scale=3.0, size=(256, d))
            y = layer_norm(x, NormParams.identity(d), eps=0.0)  # the description is the eps -> 0 limit
            projected = x - x.mean(axis=-1, keepdims=True)
            expected = np.sqrt(d) * projected / np.linalg.norm(projected, axis=-1, keepdims=True)
            mean_error = max(mean_error, float(np.abs(y.sum(axis=-1)).max()))
            radius_error = max(radius_error, float(np.abs(y - expected).max()))
    if progress:
        progress(1.0)
    return PaperRun("geometry", {}, (
        Finding("projection", max(mean_error, radius_error) <= 1e-9,
                {"error": max(mean_error, radius_error, FLOAT_FLOOR)}),
    ))


PAPERS = {"dong": dong, "xiong": xiong, "noci": noci, "deepnet": deepnet, "geometry": geometry}
# The presets that draw their curves beside a published figure (PaperRun.published).
WITH_FIGURE = ("dong",)
# Each preset's findings, in order (their sentences live in the catalogs).
CLAIMS = {
    "dong": ("doubly_exponential", "skip_keeps_rank", "skip_slows", "mlp_does_not_stop", "figure_2"),
    "xiong": ("post_norm", "pre_bounds", "post_gradient_flat", "pre_gradient_shrinks"),
    "noci": ("plain_collapses", "scaled_bounded"),
    "deepnet": ("plain_collapses", "deepnorm_keeps"),
    "geometry": ("projection",),
}
