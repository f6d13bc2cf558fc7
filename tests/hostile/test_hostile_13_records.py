"""#13 classes 1 and 2 on the real bot path: text that is not UTF-8 once written never becomes a record, one
bad file under replications/ never stops planning for others, and numbers no float holds are refused with a
code everywhere (validate, plan, `measure check`, `bot plan`, `bot refresh-plan`) instead of raising."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli import main as bot_main
from bot.forge_local import LocalForge
from bot.pipeline import process
from measure.cli.check import check as measure_check
from schema import check_report, validate
from schema.records import read_record, read_records
from tests.support.hostile.corpus import raw
from tests.support.hostile.corpus_13 import HOPPER
from tests.support.hostile.harness import git, make_repo
from tests.support.webhooks import form_body, issues_event

GOOD_ISSUE = 40


def _event(number: int, body: str, at: str = "2026-12-02T14:00:00Z") -> dict:
    payload = issues_event(number=number, body=body, updated_at=at)
    payload["repository"]["full_name"] = "octo-org/quantjoule"
    return payload


@pytest.fixture
def base_with_bad_records(tmp_path, base_gallery, curves_data):
    """A main branch holding one good record (filed and merged) and five files that are not records."""
    repo = make_repo(tmp_path / "repo", base_gallery)
    forge = LocalForge(repo, tmp_path / "outbox")
    plan, result = process(_event(GOOD_ISSUE, form_body(HOPPER)), "issues", repo, curves_data, forge)
    assert result["ok"] and plan["status"] == "accepted"
    git(repo, "merge", "-q", "--ff-only", f"replication/issue-{GOOD_ISSUE}")
    folder = repo / "replications" / "hopper"
    (folder / "90-NF4-broken-utf8.json").write_bytes(b'{"report": {"x": "caf\xe9"}}')
    (folder / "91-NF4-lone-surrogate.json").write_text('{"issue": 91, "report": {"x": "\\ud800"}}')
    (folder / "92-NF4-not-json.json").write_text("{not json")
    (folder / "93-NF4-no-report.json").write_text('{"issue": 93}')
    os.symlink("/etc/hostname", folder / "94-NF4-a-link.json")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "bad files")
    return repo, forge


BAD = {
    f"replications/hopper/{n}.json"
    for n in (
        "90-NF4-broken-utf8",
        "91-NF4-lone-surrogate",
        "92-NF4-not-json",
        "93-NF4-no-report",
        "94-NF4-a-link",
    )
}


def test_one_reader_skips_every_bad_file_and_keeps_the_good_one(base_with_bad_records):
    repo, _forge = base_with_bad_records
    records, skipped = read_records(repo)
    assert {p.path for p in skipped} == BAD
    assert {(p.code, p.severity) for p in skipped} == {("QJ013", "warning")}
    assert [r["issue"] for r in records.values()] == [GOOD_ISSUE]
    why = {p.path: p.message for p in skipped}
    assert why["replications/hopper/91-NF4-lone-surrogate.json"].startswith(
        "replications/hopper/91-NF4-lone-surrogate.json is skipped: QJ003")
    assert "link" in why["replications/hopper/94-NF4-a-link.json"]


def test_planning_goes_on_with_a_note_for_maintainers(base_with_bad_records, curves_data, tmp_path):
    repo, forge = base_with_bad_records
    plan, result = process(_event(41, form_body(HOPPER)), "issues", repo, curves_data, forge)
    assert result["ok"]
    # the good record is still on file: the same report again is its duplicate
    assert plan["status"] == "refused" and plan["points"][0]["problems"][0]["code"] == "QJ505"
    notes = plan["maintainer_notes"]
    assert {n["path"] for n in notes} == BAD and {n["code"] for n in notes} == {"QJ013"}
    assert all(n["severity"] == "warning" for n in notes)
    (sticky,) = [c["body"] for c in forge.comments(41) if c["body"].startswith("<!-- quantjoule-bot -->")]
    assert "**For maintainers**" in sticky and sticky.count("QJ013") == len(BAD)
    # and through the CLI, as the workflow runs it: exit 0, a plan, no traceback
    event = tmp_path / "event.json"
    event.write_text(json.dumps(_event(42, form_body(HOPPER.replace('"seed": 0', '"seed": 7')))))
    out = CliRunner().invoke(bot_main, ["plan", "--event", str(event), "--repo-dir", str(repo)])
    assert out.exit_code == 0 and "Traceback" not in out.output
    assert len(json.loads(out.output)["maintainer_notes"]) == len(BAD)


def test_the_gallery_and_merged_issues_skip_the_bad_files_too(base_with_bad_records, curves_data):
    import gallery
    from gallery.cli import main as gallery_main

    repo, _forge = base_with_bad_records
    (repo / "reference").mkdir()
    (repo / "reference" / "curves.json").write_text(json.dumps(curves_data), encoding="utf-8")
    built = gallery.build(repo)
    assert {p.path for p in built.unreadable} == BAD and built.n_rows == 1
    out = CliRunner().invoke(
        gallery_main, ["merged-issues", "--root", str(repo), "--before", git(repo, "rev-parse", "HEAD~2")]
    )
    assert out.exit_code == 0
    assert out.stdout.split() == [f"{GOOD_ISSUE}:r/hopper/{GOOD_ISSUE}-NF4-tinyllama-1.1b.html"]
    assert out.stderr.count("QJ013") == len(BAD)


def test_a_lone_surrogate_never_reaches_a_record_and_accepted_records_read_back(
    tmp_path, base_gallery, curves_data
):
    repo = make_repo(tmp_path / "repo", base_gallery)
    forge = LocalForge(repo, tmp_path / "outbox")
    bad = HOPPER.replace('"fixture-host"', '"fixture-\\ud800-host"')
    plan, _ = process(_event(1, form_body(bad)), "issues", repo, curves_data, forge)
    assert plan["status"] == "refused" and plan["points"][0]["problems"][0]["code"] == "QJ003"
    assert plan["files"] == {} and not git(repo, "branch", "--list", "replication/issue-1")
    paired = HOPPER.replace('"fixture-host"', '"fixture-\\ud83d\\ude00-host"')
    plan, _ = process(_event(2, form_body(paired)), "issues", repo, curves_data, forge)
    path = plan["points"][0]["path"]
    blob = git(repo, "show", f"replication/issue-2:{path}").encode()
    blob.decode("utf-8")  # strict
    target = tmp_path / "record.json"
    target.write_bytes(blob)
    record, _digest, bad_file = read_record(target, path)
    assert bad_file is None and record["report"]["system_under_test"]["host"] == "fixture-\U0001f600-host"


# ---- class 2: numbers ---------------------------------------------------------------------------------
def _numeric_paths(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numeric_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numeric_paths(value, (*prefix, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield prefix


REPORT = json.loads(HOPPER)
PATHS = list(_numeric_paths(REPORT))
BIG = st.one_of(
    st.integers(min_value=2**53, max_value=10**400), st.integers(min_value=-(10**400), max_value=-(2**53))
)
SUBNORMAL = st.floats(min_value=5e-324, max_value=2.2e-308, allow_subnormal=True).filter(
    lambda x: x < 2.2250738585072014e-308
)


def _with(path, value) -> dict:
    report = json.loads(HOPPER)
    node = report
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return report


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(PATHS), value=st.one_of(BIG, SUBNORMAL, SUBNORMAL.map(lambda x: -x)))
def test_any_number_no_reader_agrees_on_is_qj012_as_object_and_as_text(path, value):
    report = _with(path, value)
    found = validate(report)  # never raises
    assert [p.code for p in found] == ["QJ012"] and found[0].path == "/" + "/".join(map(str, path))
    text = json.dumps(report)
    parsed, problems = check_report(text)
    assert parsed is None and [p.code for p in problems] == ["QJ012"]


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(PATHS), value=BIG)
def test_the_bot_answers_a_big_integer_with_a_coded_comment(
    path, value, curves_data, base_gallery, tmp_path_factory
):
    from bot.intake import read_event
    from bot.plan import PlanContext, build_plan

    body = form_body(json.dumps(_with(path, value), indent=1))
    plan = build_plan(
        read_event(_event(5, body), "issues"),
        PlanContext(curves=curves_data, records={}, gallery_base=dict(base_gallery)),
    )
    assert plan["status"] == "refused" and "QJ012" in plan["comment"]["body"]
    assert plan["comment"]["body"].count("*Hint:*") >= 1


def test_measure_check_prints_qj012_not_a_traceback(tmp_path):
    path = tmp_path / "energy.json"
    path.write_text(raw(HOPPER, "results.tokens_generated", "1" + "0" * 399))
    out = CliRunner().invoke(measure_check, [str(path)])
    assert out.exit_code == 1 and "QJ012" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(measure_check, ["--json", str(path)])
    assert json.loads(out.output)[0]["problems"][0]["code"] == "QJ012"


def test_measure_check_refuses_a_report_from_the_future_as_the_bot_does(tmp_path):
    path = tmp_path / "energy.json"
    path.write_text(HOPPER.replace('"2026-12-02T13:00:00Z"', '"2099-01-01T00:00:00Z"'))
    out = CliRunner().invoke(measure_check, ["--json", str(path)])
    assert out.exit_code == 1 and [p["code"] for p in json.loads(out.output)[0]["problems"]] == ["QJ221"]
