"""benchmarks/campaign_call.sh, the one command a device call runs: it plans from both manifests, keeps its
log where campaign_unpack looks for it, and stops with a message when the wheels it was given are broken."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "campaign_call.sh"


def _call(tmp_path, wheels, *args, **env):
    out = tmp_path / "out"
    return out, subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=tmp_path,  # the script finds the checkout itself
        env={**os.environ, "OUT": str(out), "CALL": "7", "WHEELS": str(wheels),
             "SITE": str(tmp_path / "site"), **env},
        capture_output=True, text=True, timeout=300,
    )


def _plan(budget_s: int) -> str:
    """What the campaign itself plans for both manifests within the budget."""
    manifests = [str(ROOT / "measurements" / m / "campaign.json")
                 for m in ("hopper-campaign", "hopper-batch")]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.campaign", *manifests, "--budget-s", str(budget_s), "--dry-run"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_a_dry_run_plans_both_manifests_and_keeps_its_log_for_unpack(tmp_path):
    out, done = _call(tmp_path, tmp_path / "no-wheels", "--dry-run")
    assert done.returncode == 0, done.stderr
    log = (out / "log-call7.txt").read_text()
    first, rest = log.split("\n", 1)
    assert "no wheels" in first and "would run" in rest
    assert rest == _plan(560)  # the manifests' own plan, word for word
    assert sorted(p.name for p in out.iterdir()) == ["log-call7.txt"]  # a dry run packs nothing


def test_a_larger_budget_plans_more_cells(tmp_path):
    out, done = _call(tmp_path, tmp_path / "no-wheels", "--dry-run", BUDGET_S="1200")
    assert done.returncode == 0, done.stderr
    planned, at_560 = (out / "log-call7.txt").read_text().count("would run"), _plan(560).count("would run")
    assert planned > at_560 or planned == at_560 == 0  # (0 once every cell is measured)


def test_a_broken_wheel_stops_the_call_before_anything_runs(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "broken-1.0-py3-none-any.whl").write_text("not a zip")
    out, done = _call(tmp_path, wheels, "--dry-run")
    assert done.returncode == 1
    log = (out / "log-call7.txt").read_text()
    assert "installing" in log and "failed" in log and "would run" not in log


def test_without_out_it_says_what_to_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    done = subprocess.run(["bash", str(SCRIPT)], env={**env, "CALL": "1"}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0 and "set OUT" in done.stderr


def test_a_call_before_the_last_one_was_unpacked_refuses_to_measure_its_cells_again(tmp_path):
    # no log-call999.txt is committed, so call 1000 would re-measure whatever call 999 brought back
    out, done = _call(tmp_path, tmp_path / "no-wheels", "--dry-run", CALL="1000")
    assert done.returncode == 2
    log = (out / "log-call1000.txt").read_text()
    assert "log-call999.txt is missing" in log and "campaign_unpack" in log and "would run" not in log
    # and no setting in the environment lets it run anyway
    out, done = _call(tmp_path, tmp_path / "no-wheels", "--dry-run", CALL="1000", PREV_OK="1")
    assert done.returncode == 2 and "would run" not in (out / "log-call1000.txt").read_text()
    out, done = _call(tmp_path, tmp_path / "no-wheels", "--dry-run", CALL="x")
    assert done.returncode == 2 and "must be a number" in done.stdout
