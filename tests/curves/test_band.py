"""The sigma-point band: its construction, its linear limit, and the nonlinear spread it has to carry."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from curves.band import covariance, sigma_points
from curves.model import (
    admissible_half_width,
    curve_pct,
    delta_method_variance,
    parameter_variance,
    predict_group,
)


def _theta(group: dict) -> np.ndarray:
    p = group["params"]
    return np.array([p["A"], p["S"], math.log(p["N_star"])])


def _with_points(group: dict, cov: np.ndarray) -> dict:
    out = copy.deepcopy(group)
    out["band"]["cov"] = cov.tolist()
    out["band"]["sigma_points"] = [
        {"A": float(t[0]), "S": float(t[1]), "N_star": math.exp(t[2])}
        for t in sigma_points(_theta(group), cov)
    ]
    return out


def test_six_points_reproduce_the_mean_and_covariance_exactly():
    rng = np.random.default_rng(3)
    root = rng.normal(size=(3, 3))
    cov = root @ root.T
    theta = np.array([20.0, 60.0, math.log(4.0)])
    points = np.array(sigma_points(theta, cov))
    assert points.shape == (6, 3)
    assert points.mean(axis=0) == pytest.approx(theta, abs=1e-12)
    dev = points - theta
    assert dev.T @ dev / 6.0 == pytest.approx(cov, rel=1e-9, abs=1e-12)


def test_axes_are_ordered_signed_and_leave_fixed_parameters_alone():
    cov = np.array([[4.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.25]])
    theta = np.array([1.0, 2.0, 0.5])
    points = sigma_points(theta, cov)
    assert all(p[1] == 2.0 for p in points)  # S has no variance: never moved
    first = points[0] - theta
    assert first == pytest.approx([math.sqrt(3.0) * 2.0, 0.0, 0.0])  # largest variance first, positive sign
    assert points[1] - theta == pytest.approx(-first)
    assert points[4] == pytest.approx(theta) and points[5] == pytest.approx(theta)  # the zero axis


def test_covariance_has_exact_zeros_for_parameters_that_are_not_free():
    n_b = np.array([1.0, 2.0, 4.0, 8.0])
    cov = covariance(n_b, np.array([10.0, 40.0, math.log(3.0)]), [True, False, True], 2.0)
    assert cov[1].tolist() == [0.0, 0.0, 0.0] and cov[:, 1].tolist() == [0.0, 0.0, 0.0]
    assert cov[0, 0] > 0 and cov[2, 2] > 0 and cov[0, 2] == cov[2, 0]
    assert not covariance(n_b, np.array([10.0, 40.0, 1.0]), [False] * 3, 2.0).any()


def test_in_the_linear_limit_the_sigma_points_equal_the_delta_method(fitted):
    for key in ("ada/NF4/eager", "ampere/INT8/eager", "turing/NF4/eager"):
        group = fitted["groups"][key]
        tiny = _with_points(group, np.array(group["band"]["cov"]) * 1e-8)
        for n_b in (0.5, 3.0, 9.0, 14.0):
            assert parameter_variance(tiny, n_b) == pytest.approx(delta_method_variance(tiny, n_b), rel=1e-3)


def _monte_carlo_ms(group: dict, n_b: float, draws: int = 200_000) -> float:
    """E[(curve(N; theta) - curve(N; theta_hat))^2], theta ~ N(theta_hat, cov), through the model itself."""
    p = group["params"]
    vals, vecs = np.linalg.eigh(np.array(group["band"]["cov"]))
    theta = (
        _theta(group)
        + np.random.default_rng(0).standard_normal((draws, 3)) @ (vecs * np.sqrt(np.clip(vals, 0, None))).T
    )
    x = n_b / np.exp(theta[:, 2])
    curves = theta[:, 0] - theta[:, 1] * x / (1.0 + x)
    return float(np.mean((curves - curve_pct(n_b, p["A"], p["S"], p["N_star"])) ** 2))


def test_ampere_int8_band_carries_the_spread_the_delta_method_misses(fitted):
    group = fitted["groups"]["ampere/INT8/eager"]
    for n_b in (7.0, 9.9, 14.0):
        mc = _monte_carlo_ms(group, n_b)
        assert math.sqrt(parameter_variance(group, n_b)) == pytest.approx(math.sqrt(mc), rel=0.15)
        assert delta_method_variance(group, n_b) < 0.35 * mc  # the linearised band understates it


def test_stored_points_are_what_predict_reads(fitted):
    group = fitted["groups"]["ampere/INT8/eager"]
    assert group["band"]["method"] == "sigma-points" and len(group["band"]["sigma_points"]) == 6
    narrowed = copy.deepcopy(group)
    narrowed["band"]["sigma_points"][0] = dict(group["params"])  # one point collapsed onto the fit
    assert predict_group(narrowed, 9.0)[1] < predict_group(group, 9.0)[1]
    assert predict_group(narrowed, 9.0)[0] == predict_group(group, 9.0)[0]


def test_far_outside_the_sizes_the_bound_cap_holds(fitted):
    group = fitted["groups"]["ampere/INT8/eager"]
    band = group["band"]
    for n_b in (0.01, 2000.0):
        assert parameter_variance(group, n_b) <= admissible_half_width(n_b, band) ** 2
