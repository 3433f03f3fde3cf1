"""Targeted search for the lesson model's weights (blockstab/lesson.py). Not run by CI.

Needs scipy, which the product does not: run it from a scratch environment, e.g.
``python3 -m venv /tmp/searchenv && /tmp/searchenv/bin/pip install numpy scipy`` and then
``PYTHONPATH=. /tmp/searchenv/bin/python scripts/search_lesson_model.py``.

The model family (the block's form is fixed: attention -> residual -> norm -> key-value memory
-> residual -> norm): W_Q = W_K = s*I; W_V = v*R(rho) (a scaled rotation); a memory of strong
keys -- a "symptom" key, a "recovery" key and three keys spread over the far side of the circle,
all with threshold tau and gain g -- and one weak, broad key inside the wide gap between the
symptom and recovery keys (its own threshold and gain). The four shared input embeddings are
free (angle and length each). For every candidate the two context embeddings are solved by
Newton's method, rounded to four decimals, so that block 1's Post-LN attention residual of the
action token is the course's table.

The objective (maximised by differential evolution, then Nelder-Mead) is a soft minimum
(temperature 0.05) of the requirement margins, each scaled so that 0 is the line and 1 a
comfortable pass, taken as the worst over Post-LN and Pre-LN, over every block up to the depth
and over +-5 % weight perturbations (all +5 %, all -5 %, five hand-picked corners that narrow or widen
the memory's fields or turn its keys, and seeded random draws per entry):

* the action token at least 15 degrees from every other token of its sentence;
* "confirmed"'s action token at least 3 degrees nearer the recovery axis (0, 1), from block 24 on;
* without the residual, relative residual <= 1e-3 by block 6 (and > 0.3 at the input);
* without normalization, the action token grows (or shrinks) by 1e4 by block 24;

plus 0.3 x (the two angle margins averaged over blocks, a smooth companion for the search, and
the recovery margin at every block from 1),
plus 0.3 x (aim) every pair of the five tokens 15 degrees apart at the end, minus a penalty when
a token leaves its meaning (errors / after_deploy / not-confirmed mostly symptom, rollback /
confirmed mostly recovery, action in the first quadrant).
With ``--presets`` the score is capped by the scenario presets' own margins on the same block
(``objective_with_presets``): the lesson's claims and the presets' must hold together.
"""

from __future__ import annotations

import sys

import numpy as np

TABLE = np.array([[1.026, 1.978], [1.238, 1.814]])
ACTION, CONTEXT = 4, 3
EPS = 1e-5


def rot(deg):
    a = np.radians(deg)
    return np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])  # x @ rot(deg) turns x by +deg


def unit(deg):
    return np.array([np.cos(np.radians(deg)), np.sin(np.radians(deg))])


# --- a batched copy of the engine's block: weights carry a leading perturbation axis P ----------

def norm(x, gain, on=True):
    if not on:
        return x
    return x / np.sqrt((x * x).sum(-1, keepdims=True) / 2 + EPS) * gain[:, None, None, :]


def attn(x, w):
    q, k, v = (np.einsum("pstd,pde->pste", x, w[n]) for n in ("wq", "wk", "wv"))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(2)
    e = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("pste,pef->pstf", (e / e.sum(-1, keepdims=True)) @ v, w["wo"])


def ffn(x, w):
    a = np.maximum(np.einsum("pstd,pdh->psth", x, w["win"]) + w["bin"][:, None, None, :], 0)
    return np.einsum("psth,phd->pstd", a, w["wout"])


def block(x, w, placement, residual=True, normed=True):
    s = 1.0 if residual else 0.0
    if placement == "post":
        h = norm(s * x + attn(x, w), w["g1"], normed)
        return norm(s * h + ffn(h, w), w["g2"], normed)
    h = s * x + attn(norm(x, w["g1"], normed), w)
    return s * h + ffn(norm(h, w["g2"], normed), w)


# --- the model ----------------------------------------------------------------------------------

def weights(s, v, rho, keys_deg, tau, gain_out):
    keys = np.stack([unit(a) for a in keys_deg])
    return {
        "wq": s * np.eye(2), "wk": s * np.eye(2), "wv": v * rot(rho), "wo": np.eye(2),
        "win": keys.T.copy(), "bin": -np.asarray(tau, float) * np.sqrt(2),
        "wout": np.asarray(gain_out, float)[:, None] * keys,
        "g1": np.ones(2), "g2": np.ones(2), "gf": np.ones(2),
    }


CORNERS = (  # hand-picked worst cases for the memory: narrower / wider fields, keys turned each way
    {"bin": 1.05, "win": 0.95, "g1": 0.95, "g2": 0.95, "wv": 1.05},
    {"bin": 0.95, "win": 1.05, "g1": 1.05, "g2": 1.05, "wv": 1.05, "wout": 0.95},
    {"bin": 0.95, "win": 1.05, "g1": 1.05, "g2": 1.05, "wv": 0.95, "wq": 1.05, "wk": 1.05},
    {"win": np.array([[1.05], [0.95]]), "wout": np.array([0.95, 1.05]), "wq": 1.05, "wk": 1.05},
    {"win": np.array([[0.95], [1.05]]), "wout": np.array([1.05, 0.95]), "wq": 0.95, "wk": 0.95},
)


def perturbed(w, count, seed=0, corners=False):
    """Nominal, all +5 %, all -5 %, (the corners), then ``count`` seeded draws in [-5 %, +5 %]."""
    rng = np.random.default_rng(seed)
    factors = [{}, 1.05, 0.95] + (list(CORNERS) if corners else []) + [None] * count
    out = {}
    for name, a in w.items():
        out[name] = np.stack([a * f if isinstance(f, float) else a * f.get(name, 1.0) if isinstance(f, dict)
                              else a * rng.uniform(0.95, 1.05, a.shape) for f in factors])
    return out


def table_error(x, w):
    one = {k: a[None] for k, a in w.items()}
    return (x + attn(x[None], one)[0])[:, ACTION] - TABLE


def solve_contexts(shared, w):
    """Newton's method (several starts, damped) for the two context embeddings."""
    def f(u):
        x = np.stack([shared, shared])
        x[:, CONTEXT] = u.reshape(2, 2)
        return table_error(x, w).ravel()

    for start in ([-0.6, 1.3, 1.5, -0.3], [-1.2, 2.0, 2.2, -0.5], [-0.3, 0.8, 0.8, -0.2]):
        u = np.array(start, float)
        for _ in range(40):
            r = f(u)
            if not np.all(np.isfinite(r)) or np.abs(r).max() < 1e-13:
                break
            jac = np.stack([(f(u + h) - r) / 1e-7 for h in np.eye(4) * 1e-7], axis=1)
            try:
                step = np.linalg.solve(jac, r)
            except np.linalg.LinAlgError:
                break
            u = u - step * min(1.0, 1.0 / np.abs(step).max())
        if np.all(np.isfinite(f(u))) and np.abs(f(u)).max() < 1e-9:
            return np.round(u.reshape(2, 2), 4)
    return None


NAMES = ("errors", "after_deploy", "rollback", "action")
#            errors      after_deploy  rollback     action        s           v          rho
BOUNDS = [(-40, 10), (0.6, 2.0), (-30, 25), (0.6, 2.0), (95, 140), (0.6, 2.0), (45, 75), (1.2, 2.5), (0.2, 1.2),
          (0.1, 0.8), (-10, 60),
          # symptom key, recovery key, tau, log gain, gap key, gap tau, gap log gain
          (-45, 0), (100, 150), (0.6, 0.92), (np.log(5), np.log(300)), (30, 80), (0.2, 0.8), (np.log(0.05), np.log(10))]


def build(p):
    """Parameter vector -> (embeddings (2, 5, 2), weights) or None when Newton fails."""
    shared = np.zeros((5, 2))
    for i, t in enumerate((0, 1, 2, 4)):
        shared[t] = p[2 * i + 1] * unit(p[2 * i])
    s, v, rho, k_sym, k_rec, tau, logg, k_gap, tau_gap, logg_gap = p[8:18]
    far = np.linspace(k_rec, k_sym + 360, 5)[1:-1]  # three keys spread over the far side
    keys = np.concatenate([[k_sym, k_rec], far, [k_gap]])
    w = weights(s, v, rho, keys, [tau] * 5 + [tau_gap], [np.exp(logg)] * 5 + [np.exp(logg_gap)])
    ctx = solve_contexts(np.round(shared, 4), w)
    if ctx is None:
        return None
    x = np.stack([np.round(shared, 4)] * 2)
    x[:, CONTEXT] = ctx
    return x, w


def angles(x):
    return np.degrees(np.arctan2(x[..., 1], x[..., 0]))


def gap(a, b):
    return np.abs((a - b + 180.0) % 360.0 - 180.0)


def relres(x):
    c, full = np.abs(x - x.mean(-2, keepdims=True)), np.abs(x)
    return np.sqrt(c.sum(-2).max(-1) * c.sum(-1).max(-1)) / np.sqrt(full.sum(-2).max(-1) * full.sum(-1).max(-1))


def margins(x, w, n_perturb=6, depth=1000, seed=0, corners=True):
    """Raw margins (degrees / decades), worst over placements, blocks and perturbations."""
    wp = perturbed(w, n_perturb, seed, corners)
    P = len(wp["wq"])
    m = {"action": np.inf, "towards": np.inf, "towards_late": np.inf, "pairs": np.inf, "collapse": 0.0, "norm": np.inf,
         "action_mean": 0.0, "towards_mean": 0.0, "start": relres(x).min()}
    for placement in ("post", "pre"):
        z = np.broadcast_to(x, (P, *x.shape)).copy()
        for i in range(depth):
            z = block(z, wp, placement)
            out = norm(z, wp["gf"]) if placement == "pre" else z
            if not np.all(np.isfinite(out)):
                return None
            a = angles(out)
            near = gap(a[..., ACTION:ACTION + 1], a[..., :ACTION]).min()
            up = gap(a[..., ACTION], 90.0)
            apart = (up[:, 1] - up[:, 0]).min()
            m["action"], m["towards"] = min(m["action"], near), min(m["towards"], apart)
            if i >= 23:  # the tested depths are 24, 100 and 1000
                m["towards_late"] = min(m["towards_late"], apart)
            m["action_mean"] += min(near, 30.0) / (2 * depth)
            m["towards_mean"] += min(apart, 6.0) / (2 * depth)
        m["pairs"] = min(m["pairs"], (gap(a[..., :, None], a[..., None, :]) + 1e3 * np.eye(5)).min())
        z = np.broadcast_to(x, (P, *x.shape)).copy()
        for _ in range(6):
            z = block(z, wp, placement, residual=False)
        r = relres(z)
        m["collapse"] = max(m["collapse"], 1.0 if not np.all(np.isfinite(r)) else r.max())
    z = np.broadcast_to(x, (P, *x.shape)).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(24):
            z = block(z, wp, "post", normed=False)
    grow = np.linalg.norm(z[..., ACTION, :], axis=-1) / np.linalg.norm(x[..., ACTION, :], axis=-1)
    m["norm"] = np.nan_to_num(np.abs(np.log10(grow)), nan=0.0, posinf=400.0).min()
    return m


def meaning_penalty(x):
    a = angles(x)
    pen = 0.0
    for t, (lo, hi) in {0: (-40, 40), 1: (-40, 40), 2: (50, 130), 4: (10, 80)}.items():
        pen += max(0, lo - a[0, t]) + max(0, a[0, t] - hi)
    pen += max(0, 50 - a[0, CONTEXT]) + max(0, a[0, CONTEXT] - 135)  # confirmed: towards recovery
    pen += max(0, -40 - a[1, CONTEXT]) + max(0, a[1, CONTEXT] - 40)  # not confirmed: towards symptom
    r = np.linalg.norm(x, axis=-1)
    return pen + 10 * (np.maximum(0, 0.5 - r).sum() + np.maximum(0, r - 3).sum())


def score(m):
    if m is None:
        return -10.0
    req = np.array([m["action"] / 15 - 1, m["towards_late"] / 3 - 1, (-3 - np.log10(m["collapse"] + 1e-300)) / 3,
                    m["start"] / 0.3 - 1, m["norm"] / 4 - 1])
    soft = -0.05 * np.log(np.exp(-np.minimum(req, 1.5) / 0.05).sum())
    smooth = min(m["action_mean"] / 15 - 1, 1.0) + min(m["towards_mean"] / 3 - 1, 1.0) + min(m["towards"] / 3 - 1, 1.0)
    return soft + 0.3 * smooth + 0.3 * min(m["pairs"] / 15 - 1, 1.0)


def objective(p, depth=400, n_perturb=6):
    built = build(p)
    if built is None:
        return 10.0
    with np.errstate(all="ignore"):
        return -score(margins(*built, n_perturb=n_perturb, depth=depth)) + 0.05 * meaning_penalty(built[0])


# Round 3 also scores the scenario presets (blockstab/scenario.py) on the same block, nominal weights:
# their action token >= 15 degrees from its sentence-mates and the two sentences >= 5 degrees apart.
PRESETS = {  # (sentence A, sentence B, action index)
    "triage": ([[1.3, 0.1], [0.9, -0.4], [-0.2, 1.0], [-0.4, 1.5], [0.6, 1.4]],
               [[1.3, 0.1], [0.9, -0.4], [-0.2, 1.0], [1.6, -0.5], [0.6, 1.4]], 4),
    "support": ([[0.7, 0.1], [-0.2, -1.0], [1.5, -0.4], [0.5, 1.5]],
                [[0.7, 0.1], [-0.2, -1.0], [-0.5, 1.4], [0.5, 1.5]], 3),
}


def preset_margin(w, preset, depth=200):
    a_side, b_side, act = preset
    x, one = np.array([a_side, b_side], float)[None], {k: a[None] for k, a in w.items()}
    near_min, apart_min, near_mean = np.inf, np.inf, 0.0
    for placement in ("post", "pre"):
        z = x.copy()
        for i in range(depth):
            z = block(z, one, placement)
            a = angles(norm(z, one["gf"]) if placement == "pre" else z)[0]
            near = gap(a[:, act:act + 1], np.delete(a, act, axis=1)).min()
            near_mean += min(near, 30.0) / (2 * depth)
            if i >= 23:
                near_min, apart_min = min(near_min, near), min(apart_min, gap(a[0, act], a[1, act]))
    return min(near_min / 15 - 1, apart_min / 5 - 1, 1.0) + 0.3 * min(near_mean / 15 - 1, 1.0)


def objective_with_presets(p):
    built = build(p)
    if built is None:
        return 10.0
    with np.errstate(all="ignore"):
        lesson = score(margins(*built, n_perturb=4, depth=300))
        presets = min(preset_margin(built[1], preset) for preset in PRESETS.values())
    return -(min(lesson, 0.5 + presets) + 0.2 * presets) + 0.05 * meaning_penalty(built[0])


# a hand-made start: s 0.6, W_V 0.3*I, symptom key -15, recovery key 125, weak gap key at 55
START = np.array([-20, 1.2, -5, 1.1, 120, 1.2, 60, 1.9, 0.6, 0.3, 0.0, -15, 125, 0.88, np.log(60),
                  55, 0.5, np.log(0.5)])
# the second round's start: the first round's result (seed 2, searched with fewer perturbations)
ROUND_ONE = np.array([-38.9696, 1.753, -17.7196, 1.2246, 117.4684, 1.8553, 60.6821, 1.8894, 0.2725, 0.4516,
                      -1.0367, -31.1472, 112.5421, 0.7543, 4.7023, 53.7677, 0.3128, -0.7768])
ROUND_TWO = np.array([-39.8702, 1.3571, -16.4718, 1.4322, 125.8474, 1.776, 61.4231, 1.8331, 0.3263, 0.4835,
                      0.1353, -28.2377, 127.3178, 0.6263, 3.7772, 65.8015, 0.4827, 0.2982])
# Round two (seed 4, from ROUND_ONE) kept the lesson's margins wide but broke the SUPPORT preset,
# whose four-token sentences no embedding could rescue. Round three (``... 5 --presets``, from
# ROUND_TWO, DE then Nelder-Mead on objective_with_presets) ended at
#   [-29.73, 1.254, -23.58, 0.712, 132.38, 1.776, 60.51, 1.851, 0.3149, 0.431, -3.098,
#    -16.89, 124.29, 0.647, 3.675, 66.65, 0.4101, 0.917]
# (its Nelder-Mead polish scored higher but failed the no-residual collapse for a few in a
# thousand random perturbations once rounded, so the DE point was kept), which
# blockstab/lesson.py rounds to: errors (1.09, -0.62), after_deploy (0.65, -0.28), rollback
# (-1.2, 1.31), action (0.91, 1.61); s 0.315; W_V = 0.43 * a 3-degree clockwise turn; strong
# keys at -17, 124, 179, 234, 288 degrees (threshold 0.65, gain 40); disposition key at 67
# degrees (threshold 0.41, gain 2.5). Checked after rounding with 180 random draws and the
# corners at depth 1000: action >= 45 degrees from its sentence-mates at every block,
# "confirmed" >= 3.8 degrees nearer recovery from block 24 on (>= 2.2 in blocks 1-23), no
# residual: exact collapse in 1000 draws, no norm: a factor beyond 1e45 by block 24.


def main(argv):
    """``search_lesson_model.py SEED [--presets]`` runs one round; ``SEED P1,P2,...`` only polishes."""
    from scipy.optimize import differential_evolution, minimize

    seed = int(argv[0]) if argv else 1
    with_presets = "--presets" in argv
    goal = objective_with_presets if with_presets else objective
    if len(argv) > 1 and not with_presets:
        best = np.array([float(a) for a in argv[1].split(",")])
    else:
        start = ROUND_TWO if with_presets else START if seed < 4 else ROUND_ONE
        de = differential_evolution(goal, BOUNDS, maxiter=15 if with_presets else 20, popsize=8 if with_presets
                                    else 10, seed=seed, polish=False, init="sobol", x0=start, tol=1e-8)
        print("DE", -de.fun, np.round(de.x, 4).tolist(), flush=True)
        best = de.x
    nm = minimize(goal, best, args=() if with_presets else (600, 8), method="Nelder-Mead",
                  options={"maxfev": 350 if with_presets else 400, "xatol": 1e-3, "fatol": 1e-4})
    x, w = build(nm.x)
    print("NM", -nm.fun, np.round(nm.x, 4).tolist())
    print(margins(x, w, n_perturb=20, depth=1000))
    print(np.round(x, 4).tolist())


if __name__ == "__main__":
    main(sys.argv[1:])
