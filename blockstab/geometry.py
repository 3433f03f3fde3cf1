"""Where normalization puts vectors, for drawing the 2-D (and 3-D) pictures honestly.

LayerNorm subtracts the mean of the features, which projects x onto the hyperplane orthogonal
to (1, ..., 1), then rescales the result to length sqrt(d) (Brody et al. 2023). In d = 2 that
hyperplane is the line through (1, -1), so every output is +-(1, -1) * gain + bias: two points.
RMSNorm only rescales, so the direction survives and outputs lie on the circle of radius sqrt(d).
"""

from __future__ import annotations

import numpy as np


def rmsnorm_circle(d_model: int = 2, points: int = 181) -> np.ndarray:
    """``(points, 2)`` points of the circle of radius sqrt(d) that RMSNorm maps 2-D vectors onto."""
    angle = np.linspace(0.0, 2.0 * np.pi, points)
    return np.sqrt(d_model) * np.stack([np.cos(angle), np.sin(angle)], axis=-1)


def layernorm_points_2d(gain: np.ndarray | None = None, bias: np.ndarray | None = None) -> np.ndarray:
    """The only two outputs LayerNorm can give in 2-D (eps -> 0): ``+-(1, -1) * gain + bias``."""
    gain = np.ones(2) if gain is None else np.asarray(gain, dtype=float)
    bias = np.zeros(2) if bias is None else np.asarray(bias, dtype=float)
    return np.array([[1.0, -1.0], [-1.0, 1.0]]) * gain + bias


def mean_free_basis(d_model: int) -> np.ndarray:
    """Orthonormal basis ``(d_model - 1, d_model)`` of the hyperplane orthogonal to (1, ..., 1)."""
    ones = np.ones((d_model, 1)) / np.sqrt(d_model)
    q, _ = np.linalg.qr(np.hstack([ones, np.eye(d_model)[:, : d_model - 1]]))
    basis = q[:, 1:].T
    return basis * np.sign(basis.sum(axis=1, keepdims=True) + (basis[:, :1] >= 0) - 0.5)


def layernorm_plane_coordinates(x: np.ndarray) -> np.ndarray:
    """Coordinates of 3-D vectors ``(..., 3)`` in the plane orthogonal to (1, 1, 1).

    LayerNorm outputs (unit gain, zero bias) land on the circle of radius sqrt(3) there.
    """
    return np.asarray(x, dtype=float) @ mean_free_basis(3).T
