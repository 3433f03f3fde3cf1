"""Readouts of a stack run: sizes, directions and token collapse, per block.

All functions take arrays whose last two axes are ``(tokens, d_model)`` (or ``d_model`` alone
for per-vector readouts) and broadcast over any leading axes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .block import NORM_PAIRS, Trace


def _rescaled(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``v / s`` and ``s = max |v|`` per vector, so squares neither overflow nor underflow."""
    scale = np.abs(v).max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.where(scale > 0, scale, 1.0), scale[..., 0]


def vector_norm(v: np.ndarray) -> np.ndarray:
    """Euclidean length over the last axis, safe for any finite magnitude (the one scale-safe norm:
    readouts and gradient norms alike); infinite when an entry is, nan when one is nan."""
    unit, scale = _rescaled(v)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isinf(scale), scale, scale * np.sqrt((unit * unit).sum(axis=-1)))


def rms(v: np.ndarray) -> np.ndarray:
    """Root mean square over the last axis (= norm / sqrt(d))."""
    return vector_norm(v) / np.sqrt(v.shape[-1])


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of the angle between vectors on the last axis (nan for a zero vector)."""
    a, _ = _rescaled(a)
    b, _ = _rescaled(b)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return (a * b).sum(axis=-1) / (vector_norm(a) * vector_norm(b))


def angle_degrees(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle between vectors, accurate near 0 and 180 degrees (Kahan: 2 atan2(|u - w|, |u + w|))."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        u = a / vector_norm(a)[..., None]
        w = b / vector_norm(b)[..., None]
        return np.degrees(2.0 * np.arctan2(vector_norm(u - w), vector_norm(u + w)))


def composite_norm(m: np.ndarray) -> np.ndarray:
    """Dong et al. 2021's ||M||_{1,inf} = sqrt(||M||_1 ||M||_inf) of ``(tokens, d)`` matrices.

    ||M||_1 is the largest column sum of |M|, ||M||_inf the largest row sum.
    """
    absolute = np.abs(m)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.sqrt(absolute.sum(axis=-2).max(axis=-1)) * np.sqrt(absolute.sum(axis=-1).max(axis=-1))


def relative_residual(x: np.ndarray) -> np.ndarray:
    """Token collapse: ||X - 1 mean(X)|| / ||X|| in the composite norm (0 = all tokens equal)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return composite_norm(x - x.mean(axis=-2, keepdims=True)) / composite_norm(x)


def pairwise_cosines(x: np.ndarray) -> np.ndarray:
    """The cosine of every pair of tokens, ``(..., tokens, tokens)`` (1 on the diagonal)."""
    scaled, _ = _rescaled(x)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        unit = scaled / vector_norm(scaled)[..., None]
        return unit @ np.swapaxes(unit, -1, -2)


def mean_pairwise_cosine(x: np.ndarray) -> np.ndarray:
    """Mean cosine over distinct token pairs (1 = all tokens point the same way). A spread figure:
    it cannot tell some tokens merged from all of them close (:func:`pairwise_cosines` can)."""
    gram = pairwise_cosines(x)
    tokens = x.shape[-2]
    with np.errstate(invalid="ignore", over="ignore"):
        off_diagonal = gram.sum(axis=(-1, -2)) - np.trace(gram, axis1=-2, axis2=-1)
        return off_diagonal / (tokens * (tokens - 1))


DISTINCT_DEGREES = 1.0  # two tokens whose directions differ by less than this count as one


def pairwise_angles(x: np.ndarray) -> np.ndarray:
    """Angle in degrees between every two tokens: ``(..., tokens, tokens)`` (nan beside a zero vector)."""
    return angle_degrees(x[..., :, None, :], x[..., None, :, :])


def token_groups(x: np.ndarray, tolerance: float = DISTINCT_DEGREES) -> np.ndarray:
    """Which group each token falls in, ``(..., tokens)``: tokens less than ``tolerance`` degrees
    apart, or equal (zero vectors included), share a group, and so does any chain of them.
    A group's label is the index of its first token; a sentence holding a non-finite vector gets -1."""
    tokens = x.shape[-2]
    with np.errstate(invalid="ignore"):
        close = (pairwise_angles(x) < tolerance) | np.all(x[..., :, None, :] == x[..., None, :, :], axis=-1)
    linked = close | np.eye(tokens, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(tokens))))):  # transitive closure by squaring
        linked = linked | ((linked.astype(np.int64) @ linked.astype(np.int64)) > 0)
    labels = np.argmax(linked, axis=-1)
    finite = np.all(np.isfinite(x), axis=(-1, -2))
    return np.where(finite[..., None], labels, -1)


def distinct_tokens(x: np.ndarray, tolerance: float = DISTINCT_DEGREES) -> np.ndarray:
    """How many distinct tokens a sentence holds (see :func:`token_groups`); nan when a vector is
    not finite (its direction is unknown)."""
    labels = token_groups(x, tolerance)
    count = (labels == np.arange(x.shape[-2])).sum(axis=-1).astype(float)
    return np.where(labels[..., 0] >= 0, count, np.nan)


def smallest_pairwise_angle(x: np.ndarray) -> np.ndarray:
    """The smallest angle in degrees between two tokens of a sentence (nan when no pair has one)."""
    angles = pairwise_angles(x)
    pairs = np.triu(np.ones(angles.shape[-2:], dtype=bool), k=1) & ~np.isnan(angles)
    smallest = np.where(pairs, angles, np.inf).min(axis=(-1, -2))
    return np.where(np.isfinite(smallest), smallest, np.nan)


def nearest_token(x: np.ndarray, token: int) -> tuple[np.ndarray, np.ndarray]:
    """For the token at index ``token``: the angle in degrees to the nearest other token of its
    sentence, and that token's index (-1 where no angle is defined)."""
    angles = np.delete(angle_degrees(x[..., token:token + 1, :], x), token, axis=-1)
    angles = np.where(np.isnan(angles), np.inf, angles)
    index = np.argmin(angles, axis=-1)
    nearest = np.take_along_axis(angles, index[..., None], axis=-1)[..., 0]
    defined = np.isfinite(nearest)
    others = np.delete(np.arange(x.shape[-2]), token)
    return np.where(defined, nearest, np.nan), np.where(defined, others[index], -1)


def settled_block(stream: np.ndarray, tolerance: float = 0.1) -> int:
    """The first block after which no token of ``stream`` ``(depth + 1, ..., tokens, d)`` moves
    from one block to the next: none turns by ``tolerance`` degrees or more, and none changes its
    size by as much as such a turn moves it (a vector that stays equal counts as still). From there
    on the picture repeats. ``depth`` when the stream never settles (a stream that keeps growing in
    one direction has not settled)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        turn = angle_degrees(stream[1:], stream[:-1])
        size = np.linalg.norm(stream, axis=-1)
        resized = np.abs(size[1:] - size[:-1]) / size[:-1]
    chord = 2 * np.sin(np.radians(tolerance) / 2)  # how far a turn of ``tolerance`` moves a unit vector
    still = np.all(stream[1:] == stream[:-1], axis=-1) | ((turn < tolerance) & (resized < chord))
    moving = np.nonzero(~np.all(still, axis=tuple(range(1, still.ndim))))[0]
    return int(moving[-1]) + 1 if moving.size else 0


def feature_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance over features of every vector."""
    return x.mean(axis=-1), x.var(axis=-1)


@dataclass(frozen=True)
class Readouts:
    """Per-block readouts; index 0 is the input, index i the output of block i.

    Shapes: ``token_norm (depth+1, batch, tokens)``; per-sequence series ``(depth+1, batch)``;
    ``scenario_angle (depth+1,)`` between batch rows 0 and 1 (nan for one sequence);
    ``norm_moments``: for each normalization of a block, (before, after) stage names and the
    feature mean and variance before and after, each ``(depth, batch, tokens)``.
    ``distinct_tokens``, ``smallest_pairwise_angle`` (degrees) and the action token's angle to
    its nearest other token (``action_nearest_angle``, degrees; ``action_nearest_token``, its
    index) are ``(depth+1, batch)``: they show a merge that a spread figure would hide.
    """

    token_norm: np.ndarray
    token_rms: np.ndarray
    action_norm: np.ndarray
    action_cosine_to_input: np.ndarray
    scenario_angle: np.ndarray
    relative_residual: np.ndarray
    mean_pairwise_cosine: np.ndarray
    distinct_tokens: np.ndarray
    smallest_pairwise_angle: np.ndarray
    action_nearest_angle: np.ndarray
    action_nearest_token: np.ndarray
    norm_moments: tuple


def readouts(trace: Trace, action_token: int) -> Readouts:
    """Compute every readout of ``trace`` for the token at index ``action_token``."""
    stream = trace.stream
    action = stream[:, :, action_token]
    two = stream.shape[1] >= 2
    angle = angle_degrees(action[:, 0], action[:, 1]) if two else np.full(stream.shape[0], np.nan)
    nearest_angle, nearest_index = nearest_token(stream, action_token)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging stack's moments are inf, honestly
        moments = tuple(
            (before, after, feature_moments(trace.stage(before)), feature_moments(trace.stage(after)))
            for before, after in NORM_PAIRS[trace.config.placement]
        )
    return Readouts(
        token_norm=vector_norm(stream),
        token_rms=rms(stream),
        action_norm=vector_norm(action),
        action_cosine_to_input=cosine(action, action[:1]),
        scenario_angle=angle,
        relative_residual=relative_residual(stream),
        mean_pairwise_cosine=mean_pairwise_cosine(stream),
        distinct_tokens=distinct_tokens(stream),
        smallest_pairwise_angle=smallest_pairwise_angle(stream),
        action_nearest_angle=nearest_angle,
        action_nearest_token=nearest_index,
        norm_moments=moments,
    )


def first_readouts(r: Readouts, n: int) -> Readouts:
    """``r`` for the first ``n`` blocks only: what :func:`readouts` returns for the run cut there
    (every readout of a block reads that block alone, and the input)."""
    moments = tuple((before, after, tuple(m[:n] for m in ahead), tuple(m[:n] for m in behind))
                    for before, after, ahead, behind in r.norm_moments)
    blocks = {f.name: getattr(r, f.name)[:n + 1] for f in fields(Readouts) if f.name != "norm_moments"}
    return Readouts(**blocks, norm_moments=moments)
