"""Summary statistics and the t interval."""

import pytest

from measure.core.stats import delta_pct, summarise, target_half_width_pp


def test_t_interval_matches_textbook_value():
    s = summarise([10.0, 12.0, 14.0])  # mean 12, sd 2, t(0.975, 2) = 4.302653
    assert s["mean"] == 12.0 and s["sd"] == pytest.approx(2.0)
    assert s["ci95_half_width_pp"] == pytest.approx(4.302653 * 2 / 3**0.5, rel=1e-6)
    assert s["ci95_low"] == pytest.approx(12 - s["ci95_half_width_pp"])


def test_single_value_has_no_interval_and_nonfinite_are_dropped():
    s = summarise([5.0, float("nan")])
    assert s["n"] == 1 and s["sd"] is None and s["ci95_half_width_pp"] is None
    assert summarise([])["mean"] is None


def test_delta_and_target():
    assert delta_pct(120.0, 100.0) == pytest.approx(20.0)
    assert target_half_width_pp(20.0) == 3.0
    assert target_half_width_pp(-180.0) == pytest.approx(9.0)


def test_trimmed_summary_matches_yuen_and_ignores_a_few_wild_values():
    from measure.core.stats import trimmed_summary

    calm = [0.5, -0.5, 0.2, -0.2, 0.1, -0.1, 0.3, -0.3, 0.4, -0.4] * 3
    wild = calm[:-2] + [40.0, -35.0]
    a, b = trimmed_summary(calm), trimmed_summary(wild)
    assert abs(a["mean"]) < 1e-12 and b["ci95_half_width_pp"] < 1.0  # the two outliers are trimmed away
    # by hand for 1..10, trim 0.1: kept 2..9 (mean 5.5), winsorised 2,2,3,...,9,9 (sd 2.718251), h = 8
    hand = trimmed_summary([float(v) for v in range(1, 11)])
    assert hand["mean"] == 5.5
    assert abs(hand["ci95_half_width_pp"] - 2.364624 * 2.718251 / (0.8 * 10**0.5)) < 1e-5
