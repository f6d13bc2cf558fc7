"""`bot fit` and `bot grade` through click's CliRunner, and the assessment `bot grade` prints."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from assess import assess
from bot.cli import main
from curves import load_curves
from tests.curves.helpers import ANCHORS, CURVES, DATA


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_help_on_both_commands():
    for cmd in ("fit", "grade"):
        result = run(cmd, "--help")
        assert result.exit_code == 0 and "Usage" in result.output


def small_anchors(tmp_path):
    """Four Turing rows of the real file: a full fit in well under a second."""
    lines = ANCHORS.read_text().splitlines()
    path = tmp_path / "anchors.csv"
    path.write_text("\n".join([lines[0], *[ln for ln in lines if ",turing," in ln]]) + "\n")
    return path


def test_fit_writes_and_check_catches_a_stale_file(tmp_path):
    anchors, out = small_anchors(tmp_path), tmp_path / "curves.json"
    wrote = run("fit", "--anchors", str(anchors), "--out", str(out))
    assert wrote.exit_code == 0 and "wrote" in wrote.output
    assert set(json.loads(out.read_text())["groups"]) == {"turing/NF4/eager"}
    current = run("fit", "--anchors", str(anchors), "--out", str(out), "--check")
    assert current.exit_code == 0 and "is current" in current.output
    out.write_text(out.read_text().replace('"rms_pp": ', '"rms_pp": 1', 1))
    stale = run("fit", "--anchors", str(anchors), "--out", str(out), "--check")
    assert stale.exit_code == 1 and "QJ311" in stale.output and "hint" in stale.output


def test_committed_curves_match_the_cli_output(fitted_text):
    # the CLI writes exactly dumps(fit(read_anchors(...))), which the fixture computed once
    assert CURVES.read_text(encoding="utf-8") == fitted_text


def test_fit_bad_anchors_is_a_coded_error_not_a_traceback(tmp_path):
    bad = tmp_path / "a.csv"
    bad.write_text("gpu,arch\n")
    result = run("fit", "--anchors", str(bad), "--out", str(tmp_path / "c.json"))
    assert result.exit_code == 2 and "QJ312" in result.output and "Traceback" not in result.output
    missing = run("fit", "--anchors", str(tmp_path / "none.csv"), "--out", str(tmp_path / "c.json"))
    assert missing.exit_code == 2 and "QJ312" in missing.output


def test_grade_prints_the_verdict_and_json(tmp_path):
    path = shutil.copy(DATA / "legacy-single-trial.json", tmp_path / "energy.json")
    text = run("grade", str(path))
    assert text.exit_code == 0
    assert "legacy-schema, single-trial, software-differs" in text.output and "Verdict:" in text.output
    out = run("grade", "--json", str(path))
    doc = json.loads(out.output)
    assert doc["ok"] is True and doc["verdict"]["label"] in ("confirmation", "contradiction")
    assert doc["verdict"]["curves_version"] == load_curves()["version"]
    md = run("grade", "--markdown", str(path))
    assert "| Verdict |" in md.output


def test_grade_exit_statuses(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "quantjoule-energy/2.0"}')
    result = run("grade", str(bad))
    assert result.exit_code == 1 and "QJ307" in result.output and "QJ101" in result.output
    missing = run("grade", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "QJ011" in missing.output
    no_curves = run("grade", "--curves", str(tmp_path / "nope.json"), str(bad))
    assert no_curves.exit_code == 2 and "QJ310" in no_curves.output


def test_grade_prints_the_assessment():
    curves = load_curves()
    result = assess((DATA / "v2-hopper-nf4.json").read_bytes(), curves)
    assert result.valid and result.verdict.curve_key == "hopper/NF4/eager"
    assert result.graded_dict()["verdict"] == result.verdict.to_dict()
    broken = assess(b"{not json", curves)
    assert broken.report is None and broken.verdict is None and not broken.valid
    assert broken.problems[0].code.startswith("QJ0") and broken.graded_dict()["ok"] is False
