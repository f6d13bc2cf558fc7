"""The CLI with CliRunner: plan/apply/process on the local forge (real git) and the github forge (fake)."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.support.webhooks import form_body, issues_event, schema_example

HOPPER = schema_example("v2-measured-nf4-hopper.json")
VOLTA = schema_example("v2-volta-no-curve-int8.json")


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def repo(checkout):
    (checkout / "replications" / ".gitkeep").write_text("")
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "base")
    return checkout


def write_event(tmp_path, name="event.json", **kw):
    path = tmp_path / name
    path.write_text(json.dumps(issues_event(**kw)))
    return str(path)


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_help_on_every_command():
    for cmd in ([], ["plan"], ["apply"], ["process"], ["demo"], ["fit"], ["grade"]):
        result = invoke(*cmd, "--help")
        assert result.exit_code == 0 and "Usage" in result.output


def test_process_local_three_times_then_edit(repo, tmp_path):
    outbox = tmp_path / "outbox"
    event = write_event(tmp_path, body=form_body(HOPPER))
    args = ["process", "--event", event, "--forge", "local", "--repo-dir", str(repo), "--outbox", str(outbox)]
    heads = []
    for _ in range(3):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        heads.append(git(repo, "rev-parse", "replication/issue-7"))
    assert "issue 7: accepted (confirmation)" in result.output
    assert len(set(heads)) == 1 and git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(repo, "status", "--porcelain") == ""  # the work tree is never touched
    record = json.loads(
        git(repo, "show", "replication/issue-7:replications/hopper/7-NF4-tinyllama-1.1b.json")
    )
    assert record["report"] == json.loads(HOPPER)
    comments = json.loads((outbox / "issues" / "7" / "comments.json").read_text())
    pulls = json.loads((outbox / "pulls.json").read_text())
    assert len(comments) == 1 and list(pulls) == ["1"] and pulls["1"]["head"] == "replication/issue-7"
    assert (outbox / "pulls" / "1.md").read_text().startswith("# Replication from issue 7")

    edited = write_event(
        tmp_path, "edited.json", action="edited", body=form_body(VOLTA), updated_at="2026-12-04T10:00:00Z"
    )
    result = invoke("process", "--event", edited, *args[3:])
    assert result.exit_code == 0 and "edited the summary comment" in result.output
    assert git(repo, "rev-parse", "replication/issue-7") != heads[0]
    files = git(repo, "diff", "--name-only", "main", "replication/issue-7").splitlines()
    assert "replications/volta/7-INT8-tinyllama-1.1b.json" in files
    assert not any(f.startswith("replications/hopper/") for f in files)
    pulls = json.loads((outbox / "pulls.json").read_text())
    assert list(pulls) == ["1"] and "ungraded" in pulls["1"]["title"]
    assert len(json.loads((outbox / "issues" / "7" / "comments.json").read_text())) == 2  # + one notice


def test_plan_then_apply_and_unsafe_plans_are_refused(repo, tmp_path):
    event = write_event(tmp_path, body=form_body(HOPPER))
    plan_path = tmp_path / "plan.json"
    result = invoke("plan", "--event", event, "--repo-dir", str(repo), "--out", str(plan_path))
    assert result.exit_code == 0 and "accepted" in result.output
    apply_args = ["--forge", "local", "--repo-dir", str(repo), "--outbox", str(tmp_path / "o")]
    assert invoke("apply", str(plan_path), *apply_args).exit_code == 0
    plan = json.loads(plan_path.read_text())
    plan["files"]["replications/../.github/workflows/evil.yml"] = {"encoding": "utf-8", "content": "x"}
    plan_path.write_text(json.dumps(plan))
    result = invoke("apply", str(plan_path), *apply_args)
    assert result.exit_code == 2 and "QJ514" in result.output and "Traceback" not in result.output


def test_bad_input_gets_a_code_and_a_hint(repo, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = invoke("plan", "--event", str(bad), "--repo-dir", str(repo))
    assert result.exit_code == 2 and "QJ513" in result.output and "hint:" in result.output
    result = invoke("plan", "--event", write_event(tmp_path, body="x"), "--curves", str(bad))
    assert result.exit_code == 2 and "QJ310" in result.output
    result = invoke("apply", str(bad), "--forge", "github")
    assert result.exit_code == 2 and "QJ514" in result.output
    plan_path = tmp_path / "plan.json"
    invoke(
        "plan",
        "--event",
        write_event(tmp_path, body=form_body(HOPPER)),
        "--repo-dir",
        str(repo),
        "--out",
        str(plan_path),
    )
    result = invoke("apply", str(plan_path), "--forge", "github", "--repo", "o/r", env={"GITHUB_TOKEN": ""})
    assert result.exit_code == 2 and "QJ516" in result.output


def test_github_forge_through_the_cli(fake_gh, checkout, tmp_path):
    number = fake_gh.state.add_issue("[replication] x", form_body(HOPPER), "octocat", ("replication",))[
        "number"
    ]
    event = write_event(tmp_path, number=number, body=form_body(HOPPER))
    common = ["--repo", fake_gh.slug, "--api-url", fake_gh.base_url, "--repo-dir", str(checkout)]
    plan_path = tmp_path / "plan.json"
    reader = {"GITHUB_TOKEN": "read-token"}
    result = invoke(
        "plan", "--event", event, "--forge", "github", *common, "--out", str(plan_path), env=reader
    )
    assert result.exit_code == 0, result.output
    writer = {"GITHUB_TOKEN": "write-token"}
    result = invoke("apply", str(plan_path), "--forge", "github", *common, env=writer)
    assert result.exit_code == 0, result.output
    assert len(fake_gh.state.open_pulls()) == 1
    result = invoke("apply", str(plan_path), "--forge", "github", *common, env=reader)
    assert result.exit_code == 3 and "Resource not accessible" in result.output
