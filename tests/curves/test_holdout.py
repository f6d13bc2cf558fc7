"""Leave one run out on runs with a known truth: the held-out run confirms, a shifted one contradicts."""

from __future__ import annotations

import math

from scipy.stats import t

from curves.holdout import at_half_width, leave_one_run_out, shifted, summarise
from measure.core.stats import target_half_width_pp
from tests.curves.helpers import v2_report


def _runs(values):
    rows, reports = [], {}
    for i, (size, de) in enumerate(values):
        path = f"runs/{i}.json"
        rows.append({"gpu": "H", "arch": "hopper", "model": f"m{size}", "params_b": str(size),
                     "precision": "NF4", "energy_fp16_j1k": "1000", "energy_quant_j1k": repr(1000 + 10 * de),
                     "n_trials": "5", "ci95_half_width_pp": "1.5", "source": "quantjoule-test",
                     "weights": "random-init", "backend": "eager", "report": path,
                     "report_id": f"2026-12-0{i}T00:00:00Z|NF4|u"})
        reports[path] = v2_report(arch="hopper", params_b=size, obs=de, n_pairs=5, sd=1.2,
                                  timestamp_utc=f"2026-12-0{i}T00:00:00Z", measurement__tokens_per_run=256)
    return rows, reports


def test_runs_from_one_flat_truth_confirm_and_a_goal_shift_is_detected():
    rows, reports = _runs([(0.5, 30.0), (0.5, 31.0), (1.5, 29.5), (1.5, 30.5), (3.0, 30.2), (3.0, 29.8)])
    results = leave_one_run_out([], rows, reports)
    assert [r["label"] for r in results] == ["confirmation"] * 6
    s = summarise(results)["NF4"]
    assert s["graded"] == 6 and s["false_contradiction_rate"] == 0.0 and s["power"] == 1.0
    assert s["max_mdd_pp"] < 12.0


def test_a_run_far_from_the_others_is_a_contradiction_when_held_out():
    rows, reports = _runs([(0.5, 30.0), (0.5, 31.0), (1.5, 29.5), (1.5, 30.5), (3.0, 55.0)])
    far = leave_one_run_out([], rows, reports)[-1]
    assert far["label"] == "contradiction" and abs(far["z"]) > 2


def test_shifted_moves_only_the_summary():
    r = v2_report(obs=10.0)
    assert shifted(r, 5)["results"]["vs_fp16_energy_pct"] == 15.0
    assert r["results"]["vs_fp16_energy_pct"] == 10.0


def test_at_half_width_implies_the_interval_it_names():
    r = v2_report(obs=30.0, n_pairs=6, sd=12.0)
    tight = at_half_width(r, 3.0)
    sd = tight["statistics"]["delta_e_pct"]["sd"]
    assert math.isclose(float(t.ppf(0.975, 5)) * sd / math.sqrt(6), 3.0)
    assert r["statistics"]["delta_e_pct"]["sd"] == 12.0
    assert at_half_width(v2_report(obs=30.0, n_pairs=1, sd=None), 3.0) is None


def test_a_wide_run_would_detect_less_than_the_same_run_at_the_target():
    rows, reports = _runs([(0.5, 30.0), (0.5, 31.0), (1.5, 29.5), (1.5, 30.5), (3.0, 30.2), (3.0, 29.8)])
    wide = rows[0]["report"]
    reports[wide]["statistics"]["delta_e_pct"]["sd"] = 40.0
    results = leave_one_run_out([], rows, reports, target=target_half_width_pp)
    held = results[0]
    assert held["mdd_at_target_pp"] < held["mdd_pp"] - 10
    assert summarise(results)["NF4"]["max_mdd_at_target_pp"] < summarise(results)["NF4"]["max_mdd_pp"]
    assert all(r["mdd_at_target_pp"] is None for r in leave_one_run_out([], rows, reports))


def test_a_fit_without_its_leave_one_out_refits_grades_the_same():
    from curves.fit import fit
    from curves.grade import grade

    rows, reports = _runs([(0.5, 30.0), (0.5, 33.0), (1.5, 27.5), (3.0, 31.2), (3.0, 28.8)])
    full, quick = fit(rows), fit(rows, loo=False)
    (key,) = full["groups"]
    assert full["groups"][key]["loo_rmse_pp"] is not None and quick["groups"][key]["loo_rmse_pp"] is None
    quick["groups"][key]["loo_rmse_pp"] = full["groups"][key]["loo_rmse_pp"]
    assert quick == full
    for report in reports.values():
        assert grade(report, quick) == grade(report, full)
