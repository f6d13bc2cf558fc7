"""The stricter calibration: anchors resimulated, the real fit rerun, fresh submissions graded."""

from __future__ import annotations

import math

import pytest

from curves.calibration import SCENARIOS
from curves.model import curve_pct
from curves.resample import other_rss_dof, refit, resample_once, summarise


def test_refitting_the_anchors_as_they_are_gives_the_committed_group_back(fitted):
    key = "ampere/INT8/eager"
    group = fitted["groups"][key]
    again = refit(fitted, key, [a["delta_e_pct"] for a in group["anchors"]])
    for name in ("A", "S", "N_star"):
        assert again["params"][name] == pytest.approx(group["params"][name], rel=1e-4)
    assert again["on_bound"] == group["on_bound"] and again["dof"] == group["dof"]
    assert again["sigma_pp"] == pytest.approx(group["sigma_pp"], rel=1e-4)
    assert again["sigma_fit_pp"] == pytest.approx(group["sigma_fit_pp"], rel=1e-3)
    for got, want in zip(again["band"]["sigma_points"], group["band"]["sigma_points"], strict=True):
        assert got == pytest.approx(want, rel=1e-3)
    assert again["loo_rmse_pp"] is None  # skipped in the resampling: it does not enter the band


def test_a_refit_follows_its_new_anchors_and_the_pooled_sd_follows_the_refit(fitted):
    key = "turing/NF4/eager"
    group = fitted["groups"][key]
    shifted = refit(fitted, key, [a["delta_e_pct"] + 10.0 for a in group["anchors"]])
    assert shifted["free"]["A"]  # a free intercept: the fitted values move with the anchors' mean
    sizes = [a["params_b"] for a in group["anchors"]]

    def mean_fit(g: dict) -> float:
        p = g["params"]
        return sum(curve_pct(n, p["A"], p["S"], p["N_star"]) for n in sizes) / len(sizes)

    assert mean_fit(shifted) == pytest.approx(mean_fit(group) + 10.0, abs=1e-3)
    noisy = refit(
        fitted, key, [a["delta_e_pct"] + (15.0 if i % 2 else -15.0) for i, a in enumerate(group["anchors"])]
    )
    assert noisy["residual_sd_pp"] > group["residual_sd_pp"]
    others = other_rss_dof(fitted, key)
    pooled = math.sqrt(
        (sum(r for r, _ in others["NF4"]) + noisy["residual_sd_pp"] ** 2 * noisy["dof"])
        / (sum(d for _, d in others["NF4"]) + noisy["dof"])
    )
    assert noisy["sigma_pp"] == pytest.approx(max(pooled, noisy["residual_sd_pp"]), rel=1e-4)
    assert all(
        k != key and not k.startswith("hopper")
        for k in [*others["NF4"], *others["INT8"]]
        if isinstance(k, str)
    )


def test_resampling_is_seeded_and_counts_stay_in_range(fitted):
    once = resample_once(fitted, "blackwell/NF4/eager", [1, 2, 3], 40)
    assert once == resample_once(fitted, "blackwell/NF4/eager", [1, 2, 3], 40)
    assert set(once) == set(SCENARIOS)
    for false_hits, power_hits, sigma_sum, sigma_new in once.values():
        assert 0 <= false_hits <= 40 and 0 <= power_hits <= 40 and sigma_sum > 0 and sigma_new > 0
    assert sum(v[1] for v in once.values()) > sum(v[0] for v in once.values())  # 3 sd shifts are flagged more


def test_summary_rates_and_the_between_refit_interval():
    per_refit = [
        {s: (2, 40, 500.0, 9.0) for s in SCENARIOS},
        {s: (4, 44, 700.0, 5.0) for s in SCENARIOS},
        {s: (3, 42, 600.0, 7.0) for s in SCENARIOS},
    ]
    out = summarise(per_refit, 50)["paired-10"]
    assert out["refits"] == 3 and out["n"] == 150
    assert out["false_contradiction_rate"] == pytest.approx(0.06)
    assert out["power"] == pytest.approx(0.84)
    assert out["mean_sigma_ref_pp"] == pytest.approx(12.0)
    assert out["half_width_95"] == pytest.approx(
        1.96 * 0.02 / math.sqrt(3)
    )  # rates 0.04, 0.08, 0.06: sd 0.02
    assert out["sigma_new_rate_corr"] == pytest.approx(-1.0)  # the lower a refit's sigma_new, the more flags
