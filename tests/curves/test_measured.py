"""The project's own H200 anchors: generated from the committed reports, fitted as Hopper's own curves."""

from __future__ import annotations

import copy
import csv
import io
import json

import pytest
from click.testing import CliRunner

from curves import grade
from curves.anchors import read_anchor_files
from curves.fit import fit
from curves.measured import build_csv, main, select_rows
from tests.curves.helpers import ANCHORS, MEASURED_H200, ROOT

H200 = ROOT / "measurements" / "h200"


def test_the_committed_h200_anchors_are_what_the_reports_give():
    text, skipped = build_csv(H200, "quantjoule-h200")
    assert text == MEASURED_H200.read_text(encoding="utf-8")
    why = dict(skipped)
    assert "fewer paired blocks" in why["measurements/h200/2026-12-02-tinyllama-1.1b-eager-trials3-nf4.json"]
    assert "static" in why["measurements/h200/2026-12-02-tinyllama-1.1b-static-nf4.json"]
    assert "not a measurement" in why["measurements/h200/2026-12-02-tinyllama-1.1b-static-int8.json"]


def test_each_row_matches_its_report():
    rows = list(csv.DictReader(io.StringIO(MEASURED_H200.read_text(encoding="utf-8"))))
    assert len(rows) == 10 and {r["precision"] for r in rows} == {"NF4", "INT8"}
    for row in rows:
        report = json.loads((ROOT / row["report"]).read_text(encoding="utf-8"))
        assert row["weights"] == report["workload"]["weights"] == "random-init"
        assert row["backend"] == "eager" and row["source"] == "quantjoule-h200" and row["arch"] == "hopper"
        assert int(row["trials"]) == report["statistics"]["n_pairs"]
        fp16, quant = float(row["energy_fp16_j1k"]), float(row["energy_quant_j1k"])
        assert (quant - fp16) / fp16 * 100 == pytest.approx(report["results"]["vs_fp16_energy_pct"], abs=1e-3)
    tiny = [r for r in rows if r["model"] == "TinyLlama-1.1B"]
    assert {r["trials"] for r in tiny} == {"18"}  # the 18-block run, not the 3-block acceptance run


def test_selection_prefers_more_blocks_then_the_later_date():
    base = {"gpu": "G", "model": "m", "precision": "NF4", "backend": "eager", "params_b": 1.0}
    rows = [
        {**base, "trials": 3, "date": "2026-12-03", "report": "a.json"},
        {**base, "trials": 18, "date": "2026-12-01", "report": "b.json"},
        {**base, "trials": 18, "date": "2026-12-02", "report": "c.json"},
    ]
    chosen, passed = select_rows(rows)
    assert [r["report"] for r in chosen] == ["c.json"] and [p[0] for p in passed] == ["a.json", "b.json"]


def test_check_flag_and_a_missing_folder(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["--check", "--reports", str(H200), "--out", str(MEASURED_H200)])
    assert ok.exit_code == 0 and "is current (10 rows)" in ok.output
    stale = tmp_path / "a.csv"
    stale.write_text("gpu\n")
    bad = runner.invoke(main, ["--check", "--reports", str(H200), "--out", str(stale)])
    assert bad.exit_code == 1 and "QJ311" in bad.output
    gone = runner.invoke(main, ["--reports", str(tmp_path / "nope")])
    assert gone.exit_code == 2 and "QJ312" in gone.output and "hint" in gone.output


def test_hopper_has_its_own_random_init_curves(fitted):
    for precision in ("NF4", "INT8"):
        group = fitted["groups"][f"hopper/{precision}/eager"]
        assert group["borrowed_from"] is None and group["n_points"] == 5
        assert group["source"] == "quantjoule-h200" and group["weights"] == "random-init"
        assert all(a["weights"] == "random-init" and a["report"].startswith("measurements/h200/")
                   for a in group["anchors"])
        assert group["n_star_rule"] == "fitted"  # 3 points: N* is free under the published rule


def test_the_published_curves_do_not_move(fitted, published_only):
    for key, group in published_only["groups"].items():
        if not group["borrowed_from"]:
            assert fitted["groups"][key] == group, key
    assert fitted["pooled_residual_sd_pp"] == published_only["pooled_residual_sd_pp"]
    assert fitted["groups"]["ada/NF4/eager"]["crossover_b"] == pytest.approx(3.73, abs=0.01)
    assert fitted["groups"]["ada/NF4/eager"]["source"] == "ecocompute"


def test_the_version_covers_the_measured_rows():
    rows = read_anchor_files((ANCHORS, MEASURED_H200))
    changed = copy.deepcopy(rows)
    changed[-1]["energy_quant_j1k"] = "3800"
    assert fit(changed)["version"] != fit(rows)["version"]


def test_grading_an_anchor_report_against_its_own_curve_is_circular(fitted):
    # Documented limit: the H200 files are anchors of the Hopper curve, so graded against it they meet
    # themselves as the same-size reference; z = 0 here says nothing independent.
    report = json.loads((H200 / "2026-12-02-tinyllama-1.1b-eager-nf4.json").read_text(encoding="utf-8"))
    v = grade(report, fitted)
    assert v.curve_key == "hopper/NF4/eager" and "borrowed-curve" not in v.qualifiers
    assert v.ref_source == "anchors" and v.z == 0.0 and "random-init-weights" in v.qualifiers
