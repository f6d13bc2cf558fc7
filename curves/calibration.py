"""Calibration by simulation: submissions drawn from a curve's own uncertainty, graded by the real rule.

The true curve of each submission is the model itself, curve_pct at parameters drawn from N(theta_hat, cov):
never the band's own approximation, so a band that understates the nonlinear spread shows up as excess
false contradictions.
"""

from __future__ import annotations

import math

import numpy as np

from curves.model import curve_pct, parameter_variance
from curves.point import grade_point, single_trial_floor_pp

# Two realistic observation regimes: a single trial (legacy or n = 1, the published repeatability floor)
# and a v2 report of 10 paired blocks with a per-pair sd of 3 pp.
SCENARIOS = {
    "single-trial": {"n_trials": 1, "pair_sd_pp": None},
    "paired-10": {"n_trials": 10, "pair_sd_pp": 3.0},
}


TRUTHS = ("normal", "bounded")


def draw_theta(group: dict, rng: np.random.Generator, count: int, truth: str = "normal") -> np.ndarray:
    """(count, 3) draws of (A, S, ln N*) from N(theta_hat, cov); cov may be singular (fixed parameters).
    truth "bounded" clips each draw into the fit's bounds, the only curves the fit itself can return."""
    if truth not in TRUTHS:
        raise ValueError(f"truth must be one of {TRUTHS}, got {truth!r}")
    p = group["params"]
    mean = np.array([p["A"], p["S"], math.log(p["N_star"])])
    vals, vecs = np.linalg.eigh(np.array(group["band"]["cov"], dtype=float))
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    draws = mean + rng.standard_normal((count, 3)) @ root.T
    if truth == "bounded":
        b = group["bounds"]
        lo = [b["A"][0], b["S"][0], math.log(b["N_star"][0])]
        hi = [b["A"][1], b["S"][1], math.log(b["N_star"][1])]
        draws = np.clip(draws, lo, hi)
    return draws


def _draw_sizes(group: dict, rng: np.random.Generator, count: int, where: str) -> np.ndarray:
    lo_b, hi_b = group["size_range_b"]
    if where == "inside":
        return np.exp(rng.uniform(math.log(lo_b), math.log(hi_b), count))
    # 1 to 3 doublings beyond a randomly chosen edge of the measured range
    doublings = rng.uniform(1.0, 3.0, count)
    upper = rng.random(count) < 0.5
    return np.where(upper, hi_b * 2.0**doublings, lo_b / 2.0**doublings)


def observe(true_pct: float, regime: dict, noise: float, cv_pct: float) -> float:
    """A submission's ΔE% for a setup whose true value is `true_pct`: observation noise of the regime."""
    sigma_obs = single_trial_floor_pp(true_pct, cv_pct)
    if regime["pair_sd_pp"] is not None:
        sigma_obs = max(regime["pair_sd_pp"], sigma_obs) / math.sqrt(regime["n_trials"])
    return true_pct + noise * sigma_obs


def grade_twice(
    group: dict,
    size: float,
    obs: float,
    sign: float,
    regime: dict,
    cv_pct: float,
    shift_sigmas: float,
    variance=parameter_variance,
) -> tuple[dict, bool]:
    """(grade of the observation as drawn, whether the observation shifted by `shift_sigmas` of the
    grader's own combined sd in direction `sign` is flagged as a contradiction)."""
    n_trials, pair_sd = regime["n_trials"], regime["pair_sd_pp"]
    null = grade_point(group, size, obs, n_trials, pair_sd, cv_pct, variance)
    shifted = obs + sign * shift_sigmas * null["scale"]
    alt = grade_point(group, size, shifted, n_trials, pair_sd, cv_pct, variance)
    return null, alt["label"] == "contradiction"


def simulate(
    group: dict,
    *,
    n: int,
    seed: int,
    scenario: str,
    where: str = "inside",
    shift_sigmas: float = 3.0,
    cv_pct: float = 2.0,
    truth: str = "normal",
    variance=parameter_variance,
) -> dict:
    """Grade `n` simulated submissions twice: as drawn (null) and shifted by `shift_sigmas` of the grader's
    own combined sd in a random direction. Returns the false-contradiction rate and the power.
    `variance` is the band's parameter variance (the delta method's for comparison)."""
    rng = np.random.default_rng(seed)
    regime = SCENARIOS[scenario]
    thetas = draw_theta(group, rng, n, truth)
    sizes = _draw_sizes(group, rng, n, where)
    scatter = rng.standard_normal(n) * group["sigma_pp"]
    noise = rng.standard_normal(n)
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    false_hits = power_hits = anchors_used = 0
    sigma_ref_sum = 0.0
    for i in range(n):
        size = float(sizes[i])
        true_pct = curve_pct(size, thetas[i, 0], thetas[i, 1], math.exp(thetas[i, 2])) + scatter[i]
        obs = observe(true_pct, regime, float(noise[i]), cv_pct)
        null, flagged = grade_twice(group, size, obs, float(signs[i]), regime, cv_pct, shift_sigmas, variance)
        false_hits += null["label"] == "contradiction"
        anchors_used += null["ref_source"] == "anchors"
        sigma_ref_sum += null["sigma_ref"]
        power_hits += flagged
    return {
        "n": n,
        "false_contradiction_rate": false_hits / n,
        "power": power_hits / n,
        "anchor_reference_share": anchors_used / n,
        "mean_sigma_ref_pp": sigma_ref_sum / n,
    }


def binomial_half_width(rate: float, n: int) -> float:
    """Half-width of a normal-approximation 95 % interval for a simulated rate."""
    return 1.96 * math.sqrt(max(rate * (1.0 - rate), 1e-12) / n)
