"""Calibration by simulation: submissions drawn from a curve's own uncertainty, graded by the real rule."""

from __future__ import annotations

import math

import numpy as np

from curves.grade import grade_point, single_trial_floor_pp
from curves.model import curve_pct

# Two realistic observation regimes: a single trial (legacy or n = 1, the published repeatability floor)
# and a v2 report of 10 paired blocks with a per-pair sd of 3 pp.
SCENARIOS = {
    "single-trial": {"n_trials": 1, "pair_sd_pp": None},
    "paired-10": {"n_trials": 10, "pair_sd_pp": 3.0},
}


def _draw_theta(group: dict, rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 3) draws of (A, S, ln N*) from N(theta_hat, cov); cov may be singular (fixed parameters)."""
    p = group["params"]
    mean = np.array([p["A"], p["S"], math.log(p["N_star"])])
    vals, vecs = np.linalg.eigh(np.array(group["band"]["cov"], dtype=float))
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    return mean + rng.standard_normal((count, 3)) @ root.T


def _draw_sizes(group: dict, rng: np.random.Generator, count: int, where: str) -> np.ndarray:
    lo_b, hi_b = group["size_range_b"]
    if where == "inside":
        return np.exp(rng.uniform(math.log(lo_b), math.log(hi_b), count))
    # 1 to 3 doublings beyond a randomly chosen edge of the measured range
    doublings = rng.uniform(1.0, 3.0, count)
    upper = rng.random(count) < 0.5
    return np.where(upper, hi_b * 2.0**doublings, lo_b / 2.0**doublings)


def simulate(
    group: dict,
    *,
    n: int,
    seed: int,
    scenario: str,
    where: str = "inside",
    shift_sigmas: float = 3.0,
    cv_pct: float = 2.0,
) -> dict:
    """Grade `n` simulated submissions twice: as drawn (null) and shifted by `shift_sigmas` of the grader's
    own combined sd in a random direction. Returns the false-contradiction rate and the power."""
    rng = np.random.default_rng(seed)
    regime = SCENARIOS[scenario]
    thetas = _draw_theta(group, rng, n)
    sizes = _draw_sizes(group, rng, n, where)
    scatter = rng.standard_normal(n) * group["sigma_pp"]
    noise = rng.standard_normal(n)
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    false_hits = power_hits = anchors_used = 0
    sigma_ref_sum = 0.0
    for i in range(n):
        size = float(sizes[i])
        truth = curve_pct(size, thetas[i, 0], thetas[i, 1], math.exp(thetas[i, 2])) + scatter[i]
        sigma_true = single_trial_floor_pp(truth, cv_pct)
        if regime["pair_sd_pp"] is not None:
            sigma_true = max(regime["pair_sd_pp"], sigma_true) / math.sqrt(regime["n_trials"])
        obs = truth + noise[i] * sigma_true
        null = grade_point(group, size, obs, regime["n_trials"], regime["pair_sd_pp"], cv_pct)
        false_hits += null["label"] == "contradiction"
        anchors_used += null["ref_source"] == "anchors"
        sigma_ref_sum += null["sigma_ref"]
        shifted = obs + signs[i] * shift_sigmas * null["scale"]
        alt = grade_point(group, size, shifted, regime["n_trials"], regime["pair_sd_pp"], cv_pct)
        power_hits += alt["label"] == "contradiction"
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
