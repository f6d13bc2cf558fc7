"""`python -m measure check` through click's CliRunner: output, --json, exit statuses."""

from __future__ import annotations

import json

from click.testing import CliRunner

from curves import load_curves
from measure.cli import main
from measure.cli.check import FileCheck, check_data, exit_status
from schema.problem import problem
from tests.schema.schema_helpers import INVALID, VALID

GOOD = str(VALID / "v2-measured-nf4-hopper.json")
BAD = str(INVALID / "QJ203-delta-disagrees.json")
WARN = str(INVALID / "QJ210-counter-trace-disagree.json")

CURVES = load_curves()


def run(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(main, ["check", *args], input=stdin)


def test_help_documents_exit_statuses():
    result = run("--help")
    assert result.exit_code == 0
    assert "Exit status: 0" in result.output and "--json" in result.output


def test_valid_file_exits_0():
    result = run(GOOD)
    assert result.exit_code == 0, result.output
    assert "valid quantjoule-energy/2.0, basis measured from nvml-energy-counter" in result.output
    assert "the bot would accept it" in result.output


def test_problem_is_printed_with_code_path_message_and_hint():
    result = run(BAD)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].endswith(": 1 error; the bot would refuse it")
    assert lines[1].split() == ["QJ203", "error", "/results/vs_fp16_energy_pct"]
    assert "gives 0.75 %" in lines[2]
    assert lines[3].strip().startswith("hint: vs_fp16_energy_pct must equal")


def test_warnings_alone_exit_0():
    result = run(WARN)
    assert result.exit_code == 0
    assert "1 warning" in result.output and "QJ210 warning" in result.output


def test_missing_file_and_directory_exit_2(tmp_path):
    for path in (tmp_path / "absent.json", tmp_path):
        result = run(str(path))
        assert result.exit_code == 2
        assert "QJ011" in result.output and "Traceback" not in result.output


def test_unreadable_file_exits_2(tmp_path):
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0)
    try:
        result = run(str(locked))
        # root may read any file; either way there is no traceback
        assert result.exit_code in (1, 2) and "Traceback" not in result.output
    finally:
        locked.chmod(0o600)


def test_binary_junk_is_a_problem_not_a_crash():
    result = run(str(INVALID / "QJ003-binary-junk.bin"))
    assert result.exit_code == 1
    assert "QJ003" in result.output and "Traceback" not in result.output


def test_large_file_is_refused_without_reading_it_all(tmp_path):
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * 5_000_000)
    result = run("--json", str(huge))
    assert result.exit_code == 1
    assert json.loads(result.output)[0]["problems"][0]["code"] == "QJ002"


def test_json_output_is_machine_readable():
    result = run("--json", GOOD, BAD, WARN)
    assert result.exit_code == 1
    rows = json.loads(result.output)
    assert [r["status"] for r in rows] == ["valid", "problems", "valid"]
    assert [r["is_measurement"] for r in rows] == [True, False, True]
    assert rows[1]["problems"] == [
        {
            "code": "QJ203",
            "severity": "error",
            "path": "/results/vs_fp16_energy_pct",
            "message": rows[1]["problems"][0]["message"],
            "hint": rows[1]["problems"][0]["hint"],
        }
    ]
    assert rows[2]["warnings"] == 1 and rows[2]["errors"] == 0


def test_mixed_files_exit_with_the_worst_status(tmp_path):
    result = run(GOOD, BAD, str(tmp_path / "absent.json"))
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == "3 files: 1 valid, 1 with errors, 1 unreadable"


def test_standard_input():
    result = run("-", stdin=(VALID / "legacy-1.0-interpolated.json").read_bytes())
    assert result.exit_code == 1 and "QJ506" in result.output
    assert "not a measurement (basis interpolated" in result.output


def test_a_report_the_bot_refuses_exits_1_with_the_bots_reason():
    # valid against its schema but not a measurement: the bot refuses it (QJ506), so check does too
    result = run(str(VALID / "legacy-1.0-interpolated.json"))
    assert result.exit_code == 1, result.output
    assert "QJ506" in result.output and "the bot would refuse it" in result.output
    assert "reference value read off the curves" in result.output


def test_no_file_is_a_usage_error():
    result = run()
    assert result.exit_code == 2 and "Missing argument" in result.output


def test_user_text_is_printed_verbatim_not_as_markup(tmp_path):
    report = json.loads((VALID / "legacy-1.1-measured-direct-nvml.json").read_text())
    report["measurement_source"] = "[bold red]synthetic[/] example"
    path = tmp_path / "markup.json"
    path.write_text(json.dumps(report))
    result = run(str(path))
    assert result.exit_code == 1 and "[bold red]synthetic[/] example" in result.output


def test_exit_status_is_a_pure_function():
    valid = FileCheck("a", {}, ())
    warned = FileCheck("b", {}, (problem("QJ209", "w"),))
    failed = FileCheck("c", None, (problem("QJ005", "e"),))
    unreadable = FileCheck("d", None, (problem("QJ011", "x"),))
    assert exit_status([]) == 0 and exit_status([valid, warned]) == 0
    assert exit_status([valid, failed]) == 1 and exit_status([failed, unreadable]) == 2


def test_check_data_is_the_same_verdict_as_the_validator():
    from schema import check_report

    data = (INVALID / "QJ211-params-disagree.json").read_bytes()
    assert check_data("x", data, [], CURVES).problems == tuple(check_report(data)[1])


def test_check_prints_the_same_verdict_as_bot_grade():
    from click.testing import CliRunner

    from bot.cli import main as bot_main
    from measure.cli import main as measure_main

    path = str(VALID / "legacy-1.1-measured-direct-nvml.json")
    checked = json.loads(CliRunner().invoke(measure_main, ["check", "--json", path]).output)[0]
    graded = json.loads(CliRunner().invoke(bot_main, ["grade", "--json", path]).output)
    graded = graded[0] if isinstance(graded, list) else graded
    assert checked["verdict"]["label"] == "confirmation"
    assert checked["verdict"] == graded["verdict"]
