"""The calibration simulation at unit-test size (the full table: benchmarks/calibrate.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curves.calibration import binomial_half_width, draw_theta, simulate
from curves.model import delta_method_variance


def test_false_contradictions_near_nominal_and_power_high(fitted):
    res = simulate(fitted["groups"]["ada/NF4/eager"], n=3000, seed=11, scenario="single-trial")
    assert 0.025 <= res["false_contradiction_rate"] <= 0.075
    assert res["power"] >= 0.78
    assert 0 < res["anchor_reference_share"] < 1


def test_outside_the_range_the_inflated_band_is_conservative(fitted):
    res = simulate(
        fitted["groups"]["turing/NF4/eager"], n=2000, seed=3, scenario="paired-10", where="outside"
    )
    assert res["false_contradiction_rate"] < 0.02


def test_seeded_runs_repeat_exactly(fitted):
    group = fitted["groups"]["blackwell/NF4/eager"]
    assert simulate(group, n=300, seed=5, scenario="paired-10") == simulate(
        group, n=300, seed=5, scenario="paired-10"
    )


def test_binomial_half_width():
    assert binomial_half_width(0.05, 10_000) == 1.96 * (0.05 * 0.95 / 10_000) ** 0.5


def test_the_simulation_catches_a_band_that_understates_the_nonlinear_spread(fitted):
    """Same draws, two bands: the delta method's narrower band for Ampere INT8 (S and ln N* 0.99 correlated)
    gives clearly more false contradictions; the sigma-point band is near nominal."""
    group = fitted["groups"]["ampere/INT8/eager"]
    common = {"n": 4000, "seed": 21, "scenario": "paired-10"}
    sigma_pts = simulate(group, **common)["false_contradiction_rate"]
    delta = simulate(group, variance=delta_method_variance, **common)["false_contradiction_rate"]
    assert 0.035 <= sigma_pts <= 0.065
    assert delta - sigma_pts >= 0.012


def test_bounded_truth_draws_stay_inside_the_fit_bounds(fitted):
    group = fitted["groups"]["ada/INT8/eager"]  # S sits near its upper bound: many normal draws pass it
    rng = np.random.default_rng(0)
    free = draw_theta(group, rng, 5000)
    clipped = draw_theta(group, np.random.default_rng(0), 5000, "bounded")
    s_lo, s_hi = group["bounds"]["S"]
    assert (free[:, 1] > s_hi).mean() > 0.1
    assert clipped[:, 1].min() >= s_lo and clipped[:, 1].max() <= s_hi
    inside = (free[:, 1] <= s_hi) & (free[:, 1] >= s_lo) & (free[:, 2] >= math.log(0.1))
    assert np.array_equal(free[inside, 1], clipped[inside, 1])
    with pytest.raises(ValueError, match="truth must be one of"):
        draw_theta(group, rng, 1, "uniform")
