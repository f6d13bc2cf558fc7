"""The demo end to end in a throwaway clone: with measured reports on file, and with none yet."""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.support.webhooks import schema_example

ROOT = Path(__file__).resolve().parents[2]


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)


@pytest.fixture
def source(tmp_path):
    """A clone of this repository whose measurements/ holds one report (a constructed test fixture)."""
    src = tmp_path / "src"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(src)], check=True)
    for old in (src / "measurements").rglob("*.json") if (src / "measurements").exists() else []:
        old.unlink()
    target = src / "measurements" / "h200" / "fixture-nf4.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(schema_example("v2-measured-nf4-hopper.json"))
    git(src, "add", "-A")
    git(
        src, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "fixture measurement"
    )
    return src


@pytest.mark.slow
def test_demo_files_accepts_refuses_merges_and_builds_the_gallery(source, tmp_path):
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--out", str(out), "--source", str(source)])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "issue #1 [replication] measurements/h200/fixture-nf4.json: accepted" in text
    assert "CONFIRMATION" in text and "merged replication/issue-1" in text
    assert "QJ506" in text and "QJ005" in text and "QJ505" in text
    assert "Gallery built in the clone: 1 replication(s)" in text
    clone = out / "repo"
    record = json.loads((clone / "replications" / "hopper" / "1-NF4-tinyllama-1.1b.json").read_text())
    assert record["submitter_login"] == "demo-contributor"
    assert (clone / "gallery" / "site" / "index.html").is_file()
    pulls = json.loads((out / "forge" / "pulls.json").read_text())
    assert list(pulls) == ["1"]
    again = CliRunner().invoke(main, ["demo", "--out", str(out), "--source", str(source)])
    assert again.exit_code == 2 and "QJ517" in again.output


@pytest.mark.slow
def test_demo_without_measurements_still_shows_the_refusals(source, tmp_path):
    git(source, "rm", "-q", "-r", "measurements")
    git(source, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "no measurements")
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path / "d"), "--source", str(source)])
    assert result.exit_code == 0, result.output
    assert "no measured reports yet" in result.output
    assert "QJ506" in result.output and "QJ005" in result.output and "0 replication(s)" in result.output
