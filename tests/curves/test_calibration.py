"""The calibration simulation at unit-test size (the full table: benchmarks/calibrate.py)."""

from __future__ import annotations

from curves.calibration import binomial_half_width, simulate


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
