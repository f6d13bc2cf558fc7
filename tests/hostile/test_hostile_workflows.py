"""Every workflow file under .github/workflows, hardened: `permissions: {}` at the top, each job exactly the
permissions of the table below (each line commented with why), every action pinned by a commit SHA, no
expression inside any `run:`, no privileged triggers, no persisted checkout credentials; zizmor and
actionlint clean. A new workflow or job fails here until its permissions are added to the table."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted(
    [*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / ".github" / "workflows").glob("*.yaml")]
)

# Least privilege, reviewed: workflow file -> job -> the only permissions it may hold.
PERMISSIONS = {
    "ci.yml": {"test": {"contents": "read"}},
    "replication-bot.yml": {
        "plan": {"contents": "read", "issues": "read", "pull-requests": "read"},
        "apply": {"contents": "write", "issues": "write", "pull-requests": "write"},
    },
    "refresh-prs.yml": {
        "plan": {"contents": "read", "issues": "read", "pull-requests": "read"},
        "apply": {"contents": "write", "issues": "write", "pull-requests": "write"},
    },
    "gallery.yml": {
        "build": {"contents": "read"},
        "deploy": {"pages": "write", "id-token": "write"},
        "close-issues": {"issues": "write"},
    },
}
PRIVILEGED_TRIGGERS = {"pull_request_target", "workflow_run"}
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_workflow_file_is_covered():
    assert {p.name for p in WORKFLOWS} == set(PERMISSIONS)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_top_level_permissions_are_empty_and_triggers_unprivileged(path):
    flow = load(path)
    assert flow["permissions"] == {}, "permissions: {} at the top"
    assert re.search(r"^permissions: \{\}\s*$", path.read_text(), re.M)
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    names = set(triggers) if isinstance(triggers, dict) else set(re.findall(r"[\w-]+", str(triggers)))
    assert not names & PRIVILEGED_TRIGGERS


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_each_job_holds_exactly_its_reviewed_permissions_each_commented(path):
    flow, text = load(path), path.read_text(encoding="utf-8")
    assert set(flow["jobs"]) == set(PERMISSIONS[path.name])
    for name, job in flow["jobs"].items():
        assert job.get("permissions") == PERMISSIONS[path.name][name], name
    for scope, level in ((s, lv) for job in PERMISSIONS[path.name].values() for s, lv in job.items()):
        lines = re.findall(rf"^\s+{re.escape(scope)}: {level}\b(.*)$", text, re.M)
        assert lines and all(line.strip().startswith("#") and len(line.strip()) > 3 for line in lines), scope


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_action_is_pinned_by_a_commit_sha(path):
    flow = load(path)
    uses = [job["uses"] for job in flow["jobs"].values() if "uses" in job]
    uses += [s["uses"] for job in flow["jobs"].values() for s in job.get("steps", []) if "uses" in s]
    assert uses == [u for u in uses if PINNED.fullmatch(u)], uses
    assert len(re.findall(r"^\s*(?:-\s*)?uses:", path.read_text(), re.M)) == len(uses)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_expression_reaches_a_shell_and_no_credentials_persist(path):
    flow = load(path)
    for name, job in flow["jobs"].items():
        for step in job.get("steps", []):
            # Untrusted text (github.event.*, head_ref, outputs built from it) goes through env: only.
            assert "${{" not in step.get("run", ""), f"{name}: expression inside run:"
            script = (step.get("with") or {}).get("script", "")
            assert "github.event" not in script and "${{" not in script, f"{name}: expression in a script"
            if "actions/checkout" in step.get("uses", ""):
                assert step["with"]["persist-credentials"] is False, name


@pytest.mark.parametrize("tool", ["zizmor", "actionlint"])
def test_zizmor_and_actionlint_are_clean_on_every_workflow(tool):
    exe = shutil.which(tool)
    assert exe, f"{tool} is a dev dependency"
    args = [exe, "--offline"] if tool == "zizmor" else [exe]
    proc = subprocess.run([*args, *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
