"""The fit: known answers on synthetic data, the published anchors, determinism, bad input."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from curves.anchors import parse_anchors_csv
from curves.codes import CurvesError
from curves.fit import DEFAULT_SETTINGS, dumps, fit, version_hash
from curves.model import curve_pct, gradient, predict_group
from curves.table import group_table
from tests.curves.helpers import ANCHORS, CURVES

FAST = copy.deepcopy(DEFAULT_SETTINGS)
FAST["multistart"] = {"A": 2, "S": 2, "ln_N_star": 3}


def synthetic_rows(a, s, n_star, sizes, noise=None, precision="NF4", arch="testarch"):
    rows = []
    for i, n in enumerate(sizes):
        de = curve_pct(n, a, s, n_star) + (0.0 if noise is None else noise[i])
        rows.append(
            {
                "gpu": "G",
                "arch": arch,
                "model": f"m{i}",
                "params_b": str(n),
                "precision": precision,
                "energy_fp16_j1k": "1000",
                "energy_quant_j1k": repr(float(1000.0 * (1 + de / 100))),
                "n_trials": "2",
                "note": "",
            }
        )
    return rows


def test_recovers_parameters_from_noiseless_data():
    sizes = [0.5, 1, 2, 4, 8, 16]
    group = fit(synthetic_rows(30.0, 80.0, 3.0, sizes))["groups"]["testarch/NF4/eager"]
    p = group["params"]
    assert p["A"] == pytest.approx(30.0, rel=1e-4)
    assert p["S"] == pytest.approx(80.0, rel=1e-4)
    assert p["N_star"] == pytest.approx(3.0, rel=1e-4)
    assert group["rms_pp"] < 1e-3
    assert group["crossover_b"] == pytest.approx(3.0 * 30.0 / 50.0, rel=1e-4)
    assert group["on_bound"] == {"A": None, "S": None, "N_star": None}
    assert group["dof"] == 3


def test_noisy_fits_keep_the_true_curve_inside_their_band():
    rng = np.random.default_rng(7)
    sizes = [0.5, 1.1, 1.5, 3.0, 7.0, 14.0]
    truth = (20.0, 70.0, 4.0)
    probes = [0.7, 2.0, 5.0, 10.0]
    inside = total = 0
    for _ in range(25):
        noise = rng.normal(0.0, 2.0, len(sizes))
        group = fit(synthetic_rows(*truth, sizes, noise), FAST)["groups"]["testarch/NF4/eager"]
        cov = np.array(group["band"]["cov"])
        p = group["params"]
        for n in probes:
            g = np.array(gradient(n, p["A"], p["S"], p["N_star"]))
            conf_sd = math.sqrt(max(g @ cov @ g, 0.0))
            mean, pred_sd = predict_group(group, n)
            assert abs(mean - curve_pct(n, *truth)) <= 2.0 * pred_sd  # prediction band always holds it
            inside += abs(mean - curve_pct(n, *truth)) <= 2.0 * conf_sd
            total += 1
    assert inside / total >= 0.85  # the parameter-only band covers the true mean about 95 % of the time


def test_fewer_than_three_points_fix_n_star_at_the_median_and_never_divide_by_zero():
    curves = fit(synthetic_rows(10.0, 40.0, 2.0, [1.0, 4.0]), FAST)
    group = curves["groups"]["testarch/NF4/eager"]
    assert group["params"]["N_star"] == pytest.approx(2.5)
    assert group["free"]["N_star"] is False
    assert group["dof"] == 0 and group["residual_sd_pp"] is None
    assert group["sigma_pp"] > 0 and group["sigma_source"] == "repeatability-floor"
    assert all(math.isfinite(v) for row in group["band"]["cov"] for v in row)


def test_a_single_point_gives_no_curve_with_a_reason():
    curves = fit(synthetic_rows(10.0, 40.0, 2.0, [1.0]), FAST)
    assert curves["groups"] == {}
    assert "1 anchor point" in curves["unfitted"]["testarch/NF4/eager"]


def test_ada_nf4_crossover_lands_near_the_published_3_7_b(fitted):
    group = fitted["groups"]["ada/NF4/eager"]
    assert group["crossover_b"] == pytest.approx(3.7, abs=0.1)
    assert group["on_bound"]["S"] == "upper"


def test_refit_equals_the_committed_file_byte_for_byte(fitted_text):
    assert fitted_text == CURVES.read_text(encoding="utf-8")


def test_without_its_own_anchors_hopper_borrows_ampere_and_says_so(published_only):
    for precision in ("NF4", "INT8"):
        hopper = published_only["groups"][f"hopper/{precision}/eager"]
        ampere = published_only["groups"][f"ampere/{precision}/eager"]
        assert hopper["borrowed_from"] == "ampere" and ampere["borrowed_from"] is None
        assert hopper["params"] == ampere["params"] and hopper["band"] == ampere["band"]


def test_every_group_reports_its_fit_quality(fitted):
    for key, group in fitted["groups"].items():
        assert group["rms_pp"] >= 0 and group["sigma_pp"] > 0, key
        assert group["size_range_b"][0] <= group["size_range_b"][1]
        # every published group has at least 3 points; a weighted group of one size has no LOO error
        assert group["loo_rmse_pp"] is not None or group["n_points"] == 1, key
        assert group["n_points"] == len(group["anchors"])
        if group["crossover_b"] is not None:
            lo, hi = group["size_range_b"]
            assert lo <= group["crossover_b"] <= hi


def test_the_data_quirks_stay_visible(fitted):
    ada_int8 = fitted["groups"]["ada/INT8/eager"]["anchors"]
    assert any("back-derived" in a["note"] for a in ada_int8)
    assert sum(a["model"] == "TinyLlama-1.1B" for a in ada_int8) == 2
    ada_nf4_gpus = {a["gpu"] for a in fitted["groups"]["ada/NF4/eager"]["anchors"]}
    assert ada_nf4_gpus == {"RTX 4090", "RTX 4090D"}
    assert any("CV 13.4%" in a["note"] for a in fitted["groups"]["ada/NF4/eager"]["anchors"])


def test_same_input_same_bytes_and_a_changed_anchor_changes_the_version():
    rows = synthetic_rows(30.0, 80.0, 3.0, [0.5, 1, 2, 4])
    first = fit(rows, FAST)
    assert dumps(first) == dumps(fit(copy.deepcopy(rows), FAST))
    # the version is the hash of the rows and settings, so the hash alone shows what moves it
    assert first["version"] == version_hash(rows, FAST)
    changed = copy.deepcopy(rows)
    changed[0]["energy_quant_j1k"] = "1300"
    assert version_hash(changed, FAST) != version_hash(rows, FAST)
    other = copy.deepcopy(FAST)
    other["k_per_doubling"] = 0.25
    assert version_hash(rows, other) != version_hash(rows, FAST)


@pytest.mark.parametrize(
    "text, code",
    [
        ("gpu,arch\nA,ada\n", "QJ312"),
        (ANCHORS.read_text().replace("1474.16", "-1", 1), "QJ313"),
        (ANCHORS.read_text().replace(",0.5,NF4", ",half,NF4", 1), "QJ313"),
    ],
)
def test_bad_anchors_are_coded_errors(text, code):
    with pytest.raises(CurvesError) as err:
        fit(parse_anchors_csv(text))
    assert err.value.code == code and err.value.hint


def test_the_readme_table_of_curves_is_current(fitted):
    readme = (CURVES.parent.parent / "curves" / "README.md").read_text(encoding="utf-8")
    table = group_table(fitted)
    assert table in readme
    assert "| ampere/INT8/eager | 3 |" in table and table.count("\n") == 2 + len(fitted["groups"])
