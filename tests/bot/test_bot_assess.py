"""`measure check` gives exactly the bot's acceptance and verdict: both call assess, checked over a corpus
of every kind of report (schema examples, the real H200 reports, refused and partial ones)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assess import assess
from bot.intake import read_event
from bot.plan import PlanContext, build_plan
from measure.cli import main as measure_main
from tests.support.webhooks import form_body, issues_event

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(
    [
        *(ROOT / "tests" / "schema" / "examples" / "valid").glob("*.json"),
        *(ROOT / "tests" / "schema" / "examples" / "invalid").glob("QJ2*.json"),
        *(ROOT / "measurements" / "h200").glob("*.json"),
    ]
)


def _plan_point(text: str, curves: dict, gallery_base: dict) -> dict:
    # Planned against the base branch's gallery, as the bot plans: only the plots the report changes are
    # rendered (an empty base would render all of them for every report).
    ctx = PlanContext(curves=curves, records={}, gallery_base=dict(gallery_base))
    body = form_body(text, gpu=None)  # the form's GPU field is issue state (QJ511), not the report's
    return build_plan(read_event(issues_event(body=body), "issues"), ctx)["points"][0]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_check_accepts_and_grades_exactly_as_the_bot_plans(path, curves_data, base_gallery):
    text = path.read_text(encoding="utf-8")
    point = _plan_point(text, curves_data, base_gallery)
    result = CliRunner().invoke(measure_main, ["check", "--json", str(path)])
    checked = json.loads(result.output)[0]
    bot_accepts = point["status"] == "accepted"
    assert checked["accepted"] is bot_accepts
    assert result.exit_code == (0 if bot_accepts else 1), result.output
    assert sorted(p["code"] for p in checked["problems"]) == sorted(p["code"] for p in point["problems"])
    assert checked["verdict"] == point["verdict"]


def test_the_corpus_has_both_outcomes(curves_data):
    found = {assess(p.read_bytes(), curves_data).accepted for p in CORPUS}
    assert found == {True, False}


def test_a_partial_run_is_told_it_did_not_complete_not_to_use_a_gpu(curves_data):
    report = json.loads((ROOT / "tests/schema/examples/valid/v2-one-trial-failed.json").read_text())
    report["results"]["basis"] = "unavailable"
    report["results"]["note"] = "NF4 arm failed: load failed: OutOfMemoryError"
    found = assess(json.dumps(report), curves_data)
    (refusal,) = [p for p in found.problems if p.code == "QJ506"]
    assert "did not complete" in refusal.message and "NF4 arm failed" in refusal.message
    assert not found.accepted and found.verdict.label == "ungraded" and found.verdict.reason_code == "QJ303"
