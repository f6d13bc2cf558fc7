"""The project's own Hopper anchors: direct 256-token runs from the campaign, one row per run, fitted
weighted with a between-run term and a size-trend test; self-anchored verdicts are flagged."""

from __future__ import annotations

import copy
import csv
import io
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from curves import grade
from curves.anchors import read_anchor_files, read_anchors
from curves.fit import DEFAULT_SETTINGS, fit, version_hash
from curves.measured import build_csv, main, report_id
from curves.repeats import between_run, standard_error_pp
from tests.curves.helpers import ANCHORS, CURVES, MEASURED_HOPPER, ROOT

CAMPAIGN = ROOT / "measurements" / "hopper-campaign"
DIRECT = CAMPAIGN / "tinyllama-1.1b-direct"


def test_the_committed_hopper_anchors_are_what_the_campaign_reports_give():
    text, skipped = build_csv(CAMPAIGN, "quantjoule-hopper")
    assert text == MEASURED_HOPPER.read_text(encoding="utf-8")
    why = dict(skipped)
    eight = why["measurements/hopper-campaign/qwen2-0.5b-r1/energy-nf4.json"]
    assert eight.startswith("8-token generations") and "256-token" in eight


def test_each_row_is_one_direct_run_and_matches_its_report():
    rows = list(csv.DictReader(io.StringIO(MEASURED_HOPPER.read_text(encoding="utf-8"))))
    assert rows and {r["precision"] for r in rows} == {"NF4", "INT8"}
    for row in rows:
        report = json.loads((ROOT / row["report"]).read_text(encoding="utf-8"))
        assert report["measurement"]["tokens_per_run"] == report["workload"]["new_tokens"] == 256
        assert row["weights"] == "random-init" and row["arch"] == "hopper"
        assert row["backend"] == report["workload"].get("backend", "eager") in ("eager", "static")
        assert int(row["trials"]) == report["statistics"]["n_pairs"]
        assert row["report_id"] == report_id(report) and row["report_id"].count("|") == 2
        fp16, quant = float(row["energy_fp16_j1k"]), float(row["energy_quant_j1k"])
        assert (quant - fp16) / fp16 * 100 == pytest.approx(report["results"]["vs_fp16_energy_pct"], abs=5e-3)


def test_check_flag_and_a_missing_folder(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["--check", "--out", str(MEASURED_HOPPER)])
    assert ok.exit_code == 0 and "is current" in ok.output
    stale = tmp_path / "a.csv"
    stale.write_text("gpu\n")
    bad = runner.invoke(main, ["--check", "--out", str(stale)])
    assert bad.exit_code == 1 and "QJ311" in bad.output
    gone = runner.invoke(main, ["--reports", str(tmp_path / "nope")])
    assert gone.exit_code == 2 and "QJ312" in gone.output and "hint" in gone.output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.MonkeyPatch.context() as mp:  # reports outside the folder it runs in
        mp.chdir(elsewhere)
        away = runner.invoke(main, ["--reports", str(CAMPAIGN), "--check"])
    assert away.exit_code == 2 and "QJ312" in away.output and "checkout's root" in away.output
    assert away.exception is None or isinstance(away.exception, SystemExit)


def test_hopper_curves_are_its_own_flat_where_no_trend_shows_and_weighed_by_the_between_run_term(fitted):
    # INT8 eager: two direct runs at every size. The repeats differ beyond their own intervals (INT8's
    # speed moves between hosts), so they give a between-run term; against intervals that carry it the
    # fall at 7.6 B (+141 / +159 % against +177 ... +218 % below it) is a supported trend, drawn as a
    # curve that costs energy at every measured size; never Ampere's curve.
    g = fitted["groups"]["hopper/INT8/eager"]
    assert g["borrowed_from"] is None and g["n_points"] >= 10 and g["params"]["S"] > 0
    assert g["trend"]["model"] == "curve" and g["trend"]["supported"] is True
    assert g["trend"]["test"].startswith("chi-square") and g["trend"]["p_value"] < 0.05
    assert g["between_run"]["tau_pp"] > 0 and g["between_run"]["df"] >= 4
    assert g["sigma_source"] == "between-run" and g["sigma_pp"] >= g["between_run"]["tau_pp"]
    assert g["crossover_b"] is None and g["params"]["A"] > 100
    assert g["loo_rmse_pp"] is not None
    # NF4 eager has two direct runs at four sizes: tau comes from the repeats, the trend is tested against
    # intervals that carry it, and sigma is the between-run term (with the lack of fit) or the floor
    e = fitted["groups"]["hopper/NF4/eager"]
    assert e["borrowed_from"] is None and e["between_run"]["tau_pp"] is not None
    assert e["between_run"]["df"] >= 3 and e["trend"]["test"].startswith("chi-square")
    assert e["sigma_source"] in ("between-run", "repeatability-floor")
    # static NF4 has two runs at 0.5, 1.1 and 1.5 B: a between-run term from the repeats, and against
    # intervals that carry it the savings growing with size are a supported trend, drawn as a curve
    st = fitted["groups"]["hopper/NF4/static"]
    assert st["between_run"]["tau_pp"] is not None and st["between_run"]["df"] >= 3
    assert st["trend"]["model"] == "curve" and st["trend"]["supported"] is True
    assert st["trend"]["test"].startswith("chi-square") and st["trend"]["p_value"] < 0.05
    assert st["params"]["S"] > 0 and st["crossover_b"] is None  # saves at every measured size
    # eager and static are graded apart: the backend decides the sign at these sizes
    eager_a = fitted["groups"]["hopper/NF4/eager"]["params"]["A"]
    assert eager_a > 10 > 0 > fitted["groups"]["hopper/NF4/static"]["params"]["A"]
    report = json.loads((DIRECT / "energy-nf4.json").read_text(encoding="utf-8"))
    v = grade(report, fitted)
    assert v.curve_key == "hopper/NF4/eager" and "self-anchored" in v.qualifiers
    # with fewer than min_points_weighted runs the group is unfitted and grading says why
    settings = copy.deepcopy(DEFAULT_SETTINGS)
    settings["min_points_weighted"] = 99
    none_yet = fit(read_anchor_files((ANCHORS, MEASURED_HOPPER)), settings)
    assert "hopper/NF4/eager" in none_yet["unfitted"] and "hopper/NF4/eager" not in none_yet["groups"]
    u = grade(report, none_yet)
    assert u.label == "ungraded" and u.reason_code == "QJ301" and "hopper/NF4/eager curve yet" in u.reason


def test_without_repeats_a_trend_is_judged_against_the_residuals():
    # Three single runs, each with a tight interval, that scatter far beyond it (as the static runs do):
    # known-variance chi^2 would call a trend; against the residuals it is not supported.
    jumpy = _run_rows([(0.5, -7.5, 0.4), (1.1, -11.3, 1.0), (1.5, -7.9, 0.4)])
    g = fit(jumpy)["groups"]["hopper/NF4/eager"]
    assert g["between_run"]["tau_pp"] is None and g["trend"]["test"].startswith("F test")
    assert g["trend"]["supported"] is False and g["params"]["S"] == 0
    # a clean saturating trend over five single runs still stands out from its residuals
    steep = _run_rows([(n, 40 - 55 * (n / 2) / (1 + n / 2) + d, 1.0)
                       for n, d in ((0.5, 0.3), (1.1, -0.2), (1.5, 0.4), (3.0, -0.3), (7.0, 0.2))])
    s = fit(steep)["groups"]["hopper/NF4/eager"]
    assert s["trend"]["test"].startswith("F test") and s["trend"]["supported"] is True
    assert s["params"]["S"] > 10


def test_the_published_curves_do_not_move(fitted, published_only):
    for key, group in published_only["groups"].items():
        if not group["borrowed_from"]:
            assert fitted["groups"][key] == group, key
    assert fitted["pooled_residual_sd_pp"] == published_only["pooled_residual_sd_pp"]
    assert fitted["groups"]["ada/NF4/eager"]["crossover_b"] == pytest.approx(3.73, abs=0.01)


def test_the_version_covers_the_measured_rows():
    rows = read_anchor_files((ANCHORS, MEASURED_HOPPER))
    changed = copy.deepcopy(rows)
    changed[-1]["energy_quant_j1k"] = "3800"
    assert version_hash(changed, DEFAULT_SETTINGS) != version_hash(rows, DEFAULT_SETTINGS)
    assert version_hash(copy.deepcopy(rows), DEFAULT_SETTINGS) == version_hash(rows, DEFAULT_SETTINGS)


def _run_rows(values: list[tuple[float, float, float]], precision: str = "NF4") -> list[dict]:
    """Anchor rows of runs (size B, ΔE%, CI95 half-width pp), 5 paired blocks each, FP16 at 1000 mJ."""
    return [
        {"gpu": "H", "arch": "hopper", "model": f"m{n}", "params_b": str(n), "precision": precision,
         "energy_fp16_j1k": "1000", "energy_quant_j1k": repr(1000 * (1 + de / 100)), "n_trials": "5",
         "ci95_half_width_pp": repr(ci), "source": "quantjoule-test", "weights": "random-init",
         "backend": "eager", "report_id": f"t{i}|{precision}|u"}
        for i, (n, de, ci) in enumerate(values)
    ]


def test_between_run_scatter_is_recovered_from_repeats():
    # 400 sizes x 2 runs, each run's se 1 pp, runs scattered with a true tau of 3 pp: the estimate is near 3.
    rng = np.random.default_rng(7)
    sizes = np.repeat(np.geomspace(0.5, 7, 400), 2)
    truth = rng.normal(0, 3.0, sizes.size) + rng.normal(0, 1.0, sizes.size)
    est = between_run(truth + 30, np.ones(sizes.size), sizes, 1e-9)
    assert est["df"] == 400 and est["tau_pp"] == pytest.approx(3.0, abs=0.35) and est["p_value"] < 1e-6
    quiet = between_run(rng.normal(30, 1.0, sizes.size), np.ones(sizes.size), sizes, 1e-9)
    assert quiet["tau_pp"] < 0.3
    assert between_run(np.array([1.0, 2.0]), np.ones(2), np.array([1.0, 2.0]), 0.1)["tau_pp"] is None


def test_a_weighted_group_uses_the_between_run_term_and_the_trend_test():
    se = standard_error_pp({"ci95_half_width_pp": 2.776, "n_trials": 5})
    assert se == pytest.approx(1.0, abs=1e-3)
    se_run = 1.2 / 2.7764451  # t(0.975, 4)
    # Flat truth at +30 %: runs 0.5-7 B, two per size 3 pp apart; no size trend may be drawn.
    flat = _run_rows([(n, 30 + d, 1.2) for n in (0.5, 1.1, 1.5, 3.0, 7.0) for d in (-1.5, 1.5)])
    g = fit(flat)["groups"]["hopper/NF4/eager"]
    assert g["trend"]["supported"] is False and g["trend"]["model"] == "flat"
    assert g["params"]["S"] == 0 and g["params"]["A"] == pytest.approx(30.0, abs=1e-6)
    assert g["between_run"]["df"] == 5
    assert g["between_run"]["tau_pp"] == pytest.approx(math.sqrt(4.5 - se_run**2), abs=1e-3)
    assert g["sigma_source"] in ("between-run", "repeatability-floor") and g["sigma_pp"] >= 2.07
    assert g["borrowed_from"] is None and g["crossover_b"] is None and "weighting" in g
    # A strong saturating trend (+40 % at 0.5 B to -10 % at 7 B) is supported and drawn.
    steep = _run_rows([(n, 40 - 55 * (n / 2) / (1 + n / 2) + d, 1.0)
                       for n in (0.5, 1.1, 1.5, 3.0, 7.0) for d in (-0.5, 0.5)])
    s = fit(steep)["groups"]["hopper/NF4/eager"]
    assert s["trend"]["supported"] is True and s["trend"]["p_value"] < 0.05 and s["params"]["S"] > 10


def test_self_anchored_verdicts_are_flagged_and_condition_mismatch_is_ungraded():
    report = json.loads((DIRECT / "energy-nf4.json").read_text(encoding="utf-8"))
    own = [r for r in read_anchors(MEASURED_HOPPER) if r["precision"] == "NF4"]
    curves = fit(own + _run_rows([(3.0, 22.0, 1.5), (3.0, 24.0, 1.5)]))
    v = grade(report, curves)
    assert v.curve_key == "hopper/NF4/eager" and "self-anchored" in v.qualifiers
    assert "compared with itself" in v.sentence and v.min_detectable_pp > 0
    assert v.condition == "eager, batch 1, 256-token generations"
    other = copy.deepcopy(report)
    other["timestamp_utc"] = "2026-12-04T00:00:00Z"  # another run: not an anchor any more
    assert "self-anchored" not in grade(other, curves).qualifiers
    eight = json.loads((CAMPAIGN / "qwen2-0.5b-r2" / "energy-nf4.json").read_text(encoding="utf-8"))
    v8 = grade(eight, curves)
    assert v8.label == "ungraded" and v8.reason_code == "QJ309" and "8-token generations" in v8.reason
    assert v8.condition == "eager, batch 1, 8-token generations"


def test_a_planted_report_is_never_an_anchor():
    report = json.loads((DIRECT / "energy-int8.json").read_text(encoding="utf-8"))
    from curves.measured import candidate

    assert candidate(report, "r.json", "eager")[0] is not None
    report["workload"]["outlier_plant"] = {"dims": 4, "scale": 20.0}
    row, why = candidate(report, "r.json", "eager")
    assert row is None and why.startswith("planted outlier features")


def test_an_int8_report_without_the_outlier_decomposition_is_never_an_anchor():
    report = json.loads((DIRECT / "energy-int8.json").read_text(encoding="utf-8"))
    from curves.measured import candidate

    assert report["workload"].get("int8_outlier_threshold") in (None, 6)  # absent: LLM.int8()'s 6
    report["workload"]["int8_outlier_threshold"] = 0.0
    row, why = candidate(report, "r.json", "eager")
    assert row is None and why.startswith("llm_int8_threshold 0.0")


def test_the_outlier_sensitivity_cells_are_not_anchors_and_their_probe_rises_with_k():
    from curves.measured import candidate

    folder = DIRECT.parent.parent / "int8-outliers"
    fractions = []
    for k in (0, 4, 64):
        report = json.loads((folder / f"tinyllama-1.1b-k{k}" / "energy.json").read_text(encoding="utf-8"))
        row, why = candidate(report, "r.json", "eager")
        assert row is None and why, k
        assert (report["workload"].get("outlier_plant") or {}).get("dims", 0) == k
        fractions.append(report["workload"]["int8_outlier_columns_fraction"])
    assert fractions == sorted(fractions) and fractions[0] < 1e-4 < fractions[1]


def test_a_chunked_report_is_not_an_anchor_yet():
    report = json.loads((DIRECT / "energy-nf4.json").read_text(encoding="utf-8"))
    from curves.measured import candidate

    assert candidate(report, "r.json", "eager")[0] is not None
    report["protocol"]["chunk_tokens"] = 32
    row, why = candidate(report, "r.json", "eager")
    assert row is None and why.startswith("generations made in 32-token chunks")


def test_the_committed_chunked_cells_are_graded_but_left_out_of_the_fit():
    _, skipped = build_csv(CAMPAIGN, "quantjoule-hopper")
    why = dict(skipped)
    curves = json.loads(CURVES.read_text(encoding="utf-8"))
    cells = sorted(p.parent.name for p in CAMPAIGN.glob("*-c1-*/energy.json"))
    assert cells == ["qwen2-0.5b-c1-nf4", "qwen2-1.5b-c1-int8", "qwen2-1.5b-c1-nf4"]
    for name in cells:
        reason = why[f"measurements/hopper-campaign/{name}/energy.json"]
        assert reason.startswith("generations made in 32-token chunks: not an anchor"), reason
        report = json.loads((CAMPAIGN / name / "energy.json").read_text(encoding="utf-8"))
        verdict = grade(report, curves)
        # each is still graded like with like: the 256-token quantity against its model's own runs
        assert verdict.label == "confirmation" and abs(verdict.z) <= 2, (name, verdict)
        assert verdict.condition and "256" in verdict.condition and verdict.ref_source == "runs"
