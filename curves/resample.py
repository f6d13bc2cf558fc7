"""Stricter calibration: anchors resimulated from the fitted curve, refitted, fresh submissions graded.

The parameter-draw calibration (curves.calibration) assumes the band's own parameter distribution. This one
assumes nothing about it: the fitted curve plays the truth, each anchor is redrawn around it with the group's
own scatter (sigma_fit), the whole fit runs again (bounds, multi-start grid, free-parameter rule, pooled sd,
band), and fresh submissions from the true curve plus a new setup's scatter (sigma_new) are graded against
that refit. A band that is too narrow for what three to nine anchors can pin down shows up here.
"""

from __future__ import annotations

import math

import numpy as np

from curves.anchors import DEFAULT_SOURCE
from curves.calibration import SCENARIOS, grade_twice, observe
from curves.entry import ANCHOR_PROVENANCE, group_entry, pooled_residual_sds
from curves.fit import fit_group
from curves.model import curve_pct


def _pooled(curves: dict, group: dict) -> bool:
    """Whether the fit counts this group in the pooled residual sd (only the pooled sources are)."""
    pool = curves["settings"].get("pooled_sources")
    return pool is None or set(str(group.get("source", DEFAULT_SOURCE)).split(" + ")) <= set(pool)


def other_rss_dof(curves: dict, key: str) -> dict[str, list[tuple[float, int]]]:
    """(RSS, dof) of every pooled fitted group except `key`, by precision, from the committed residual sds."""
    out: dict[str, list[tuple[float, int]]] = {}
    for other, g in sorted(curves["groups"].items()):
        if other == key or g["borrowed_from"] or g["residual_sd_pp"] is None or not _pooled(curves, g):
            continue
        out.setdefault(g["precision"], []).append((g["residual_sd_pp"] ** 2 * g["dof"], g["dof"]))
    return out


def refit(curves: dict, key: str, delta_e_pct: list[float]) -> dict:
    """The curves.json group `key` refitted with its anchors' ΔE% replaced by `delta_e_pct` (no LOO)."""
    group = curves["groups"][key]
    settings = curves["settings"]
    points = [
        {
            **{k: a[k] for k in ("gpu", "model", "params_b", "n_trials", "note")},
            **{k: a.get(k) for k in ANCHOR_PROVENANCE},
            "source": group.get("source", DEFAULT_SOURCE),
            "delta_e_pct": float(y),
        }
        for a, y in zip(group["anchors"], delta_e_pct, strict=True)
    ]
    fitted = fit_group(points, group["precision"], settings, loo=False)
    rss_dof = other_rss_dof(curves, key)
    if _pooled(curves, group):
        rss_dof.setdefault(group["precision"], []).append((fitted["rss"], fitted["dof"]))
    return group_entry(key, fitted, pooled_residual_sds(rss_dof), settings)


def resample_once(
    curves: dict, key: str, seed: list[int], submissions: int, shift_sigmas: float = 3.0
) -> dict[str, tuple[int, int, float, float]]:
    """One refit and `submissions` fresh submissions graded against it in every regime:
    {scenario: (false contradictions, shifted ones flagged, sum of sigma_ref, the refit's sigma_new)}."""
    rng = np.random.default_rng(seed)
    group = curves["groups"][key]
    cv_pct = curves["settings"]["repeatability_cv_pct"]
    p = group["params"]
    truth = lambda n_b: curve_pct(n_b, p["A"], p["S"], p["N_star"])  # noqa: E731
    anchors_y = [
        truth(a["params_b"]) + group["sigma_fit_pp"] * rng.standard_normal() for a in group["anchors"]
    ]
    refitted = refit(curves, key, anchors_y)
    lo_b, hi_b = group["size_range_b"]
    out = {}
    for scenario, regime in SCENARIOS.items():
        sizes = np.exp(rng.uniform(math.log(lo_b), math.log(hi_b), submissions))
        scatter = rng.standard_normal(submissions) * group["sigma_pp"]
        noise = rng.standard_normal(submissions)
        signs = np.where(rng.random(submissions) < 0.5, -1.0, 1.0)
        false_hits = power_hits = 0
        sigma_ref_sum = 0.0
        for i in range(submissions):
            size = float(sizes[i])
            obs = observe(truth(size) + scatter[i], regime, float(noise[i]), cv_pct)
            null, flagged = grade_twice(refitted, size, obs, float(signs[i]), regime, cv_pct, shift_sigmas)
            false_hits += null["label"] == "contradiction"
            power_hits += flagged
            sigma_ref_sum += null["sigma_ref"]
        out[scenario] = (false_hits, power_hits, sigma_ref_sum, refitted["sigma_pp"])
    return out


def summarise(per_refit: list[dict[str, tuple[int, int, float, float]]], submissions: int) -> dict[str, dict]:
    """Rates per scenario over all refits, with a 95 % half-width from the spread between refits (the
    submissions graded against one refit share its errors, so they are not independent draws), and the
    correlation between a refit's sigma_new and its false-contradiction rate (an sd estimated from few
    degrees of freedom but used as if known shows up as a strong negative one)."""
    out = {}
    for scenario in SCENARIOS:
        rates = np.array([r[scenario][0] / submissions for r in per_refit])
        powers = np.array([r[scenario][1] / submissions for r in per_refit])
        refits = len(per_refit)
        sigmas = np.array([r[scenario][3] for r in per_refit])
        half = 1.96 * float(np.std(rates, ddof=1)) / math.sqrt(refits) if refits > 1 else float("nan")
        spread = refits > 1 and float(np.std(rates)) > 0 and float(np.std(sigmas)) > 0
        corr = float(np.corrcoef(sigmas, rates)[0, 1]) if spread else float("nan")
        out[scenario] = {
            "refits": refits,
            "n": refits * submissions,
            "false_contradiction_rate": float(np.mean(rates)),
            "half_width_95": half,
            "power": float(np.mean(powers)),
            "mean_sigma_ref_pp": sum(r[scenario][2] for r in per_refit) / (refits * submissions),
            "sigma_new_rate_corr": corr,
        }
    return out
