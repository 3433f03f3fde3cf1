"""Tests of blockstab.geometry: where LayerNorm and RMSNorm put low-dimensional vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal

from blockstab.geometry import (
    layernorm_plane_coordinates,
    layernorm_points_2d,
    mean_free_basis,
    rmsnorm_circle,
)
from blockstab.readouts import cosine
from blockstab.sublayers import NormParams, layer_norm, rms_norm

PROPERTY = settings(max_examples=80, deadline=None)
TINY_EPS = 1e-12
coordinate = st.floats(-1e3, 1e3, allow_nan=False)
vec2 = hnp.arrays(np.float64, 2, elements=coordinate)
vec3 = hnp.arrays(np.float64, 3, elements=coordinate)
gain_or_bias = hnp.arrays(np.float64, 2, elements=st.floats(-3, 3))


def test_layernorm_points_2d_default():
    assert_array_equal(layernorm_points_2d(), [[1.0, -1.0], [-1.0, 1.0]])


def test_layernorm_points_2d_with_gain_and_bias():
    points = layernorm_points_2d(gain=[2.0, 3.0], bias=[0.5, -1.0])
    assert_allclose(points, [[2.5, -4.0], [-1.5, 2.0]], rtol=1e-15)


@PROPERTY
@given(v=vec2)
def test_layernorm_of_2d_vector_lands_on_one_of_two_points(v):
    a, b = v
    assume(abs(a - b) > 1e-2)  # equal components are the one excluded case (output 0)
    out = layer_norm(v[None, None, :], NormParams.identity(2), TINY_EPS)[0, 0]
    points = layernorm_points_2d()
    distances = np.linalg.norm(points - out, axis=1)
    assert distances.min() < 1e-6
    # The larger component decides which point: a > b -> (1, -1).
    assert_allclose(out, points[0] if a > b else points[1], atol=1e-6)


@PROPERTY
@given(v=vec2, gain=gain_or_bias, bias=gain_or_bias)
def test_layernorm_2d_with_gain_and_bias_lands_on_the_shifted_points(v, gain, bias):
    assume(abs(v[0] - v[1]) > 1e-2)
    out = layer_norm(v[None, None, :], NormParams(gain, bias), TINY_EPS)[0, 0]
    points = layernorm_points_2d(gain, bias)
    assert np.linalg.norm(points - out, axis=1).min() < 1e-5


def test_rmsnorm_circle_radius_and_shape():
    circle = rmsnorm_circle()
    assert circle.shape == (181, 2)
    assert_allclose(np.linalg.norm(circle, axis=1), math.sqrt(2.0), rtol=1e-14)
    assert_allclose(circle[0], [math.sqrt(2.0), 0.0], atol=1e-15)
    assert_allclose(circle[-1], circle[0], atol=1e-14)  # closed curve
    angles = np.degrees(np.arctan2(circle[:, 1], circle[:, 0])) % 360.0
    assert_allclose(np.sort(angles[:-1]), np.arange(0.0, 360.0, 2.0), atol=1e-9)  # covers the whole circle


@pytest.mark.parametrize("d_model, points", [(3, 10), (5, 37)])
def test_rmsnorm_circle_other_sizes(d_model, points):
    circle = rmsnorm_circle(d_model, points)
    assert circle.shape == (points, 2)
    assert_allclose(np.linalg.norm(circle, axis=1), math.sqrt(d_model), rtol=1e-14)


@PROPERTY
@given(v=vec2)
def test_rmsnorm_2d_keeps_direction_and_has_norm_sqrt2(v):
    assume(np.linalg.norm(v) > 1e-2)
    out = rms_norm(v[None, None, :], NormParams.identity(2), TINY_EPS)[0, 0]
    assert_allclose(cosine(out, v), 1.0, rtol=1e-12)
    ms = float(v @ v) / 2.0
    assert_allclose(np.linalg.norm(out), math.sqrt(2.0 * ms / (ms + TINY_EPS)), rtol=1e-12)
    assert abs(np.linalg.norm(out) - math.sqrt(2.0)) <= math.sqrt(2.0) * TINY_EPS / ms + 1e-14
    # ... so it lies on the drawn circle: its angle matches a point of a fine circle.
    angle = math.atan2(out[1], out[0])
    assert_allclose(out, math.sqrt(2.0) * np.array([math.cos(angle), math.sin(angle)]), atol=1e-9)


@pytest.mark.parametrize("d", range(2, 9))
def test_mean_free_basis_is_orthonormal_and_mean_free(d):
    basis = mean_free_basis(d)
    assert basis.shape == (d - 1, d)
    assert_allclose(basis @ basis.T, np.eye(d - 1), atol=1e-12)
    assert_allclose(basis @ np.ones(d), 0.0, atol=1e-12)
    # Together with ones/sqrt(d) it spans everything: B^T B is the centring projection.
    assert_allclose(basis.T @ basis, np.eye(d) - np.ones((d, d)) / d, atol=1e-12)


@PROPERTY
@given(v=vec3)
def test_layernorm_3d_outputs_lie_on_circle_of_radius_sqrt3(v):
    assume(v.var() > 1e-3)
    out = layer_norm(v[None, None, :], NormParams.identity(3), TINY_EPS)[0, 0]
    coords = layernorm_plane_coordinates(out)
    assert coords.shape == (2,)
    var = v.var()
    assert_allclose(np.linalg.norm(coords), math.sqrt(3.0 * var / (var + TINY_EPS)), rtol=1e-10)
    assert abs(np.linalg.norm(coords) - math.sqrt(3.0)) <= math.sqrt(3.0) * TINY_EPS / var + 1e-14
    # The output lies in the plane, so the coordinates lose nothing.
    assert_allclose(coords @ mean_free_basis(3), out, atol=1e-9)


def test_layernorm_plane_coordinates_batched_and_drop_the_mean():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 6, 3))
    coords = layernorm_plane_coordinates(x)
    assert coords.shape == (4, 6, 2)
    shifted = layernorm_plane_coordinates(x + 5.0)  # adding c*(1, 1, 1) does not move the point
    assert_allclose(shifted, coords, atol=1e-12)
    assert_allclose(layernorm_plane_coordinates([2.0, 2.0, 2.0]), [0.0, 0.0], atol=1e-12)
    ln = layer_norm(x, NormParams.identity(3), TINY_EPS)
    assert_allclose(np.linalg.norm(layernorm_plane_coordinates(ln), axis=-1), math.sqrt(3.0), rtol=1e-9)
