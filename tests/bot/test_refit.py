"""`python -m bot refit` on a copy of the checkout's measured reports and reference files: current
on the committed state, and each stale file is named (and, without --check, rewritten)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.refit import TABLE_HEAD, refit, rows_step, table_step

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def copy(tmp_path):
    campaign = ROOT / "measurements" / "hopper-campaign"
    for report in campaign.glob("*/energy*.json"):
        dest = tmp_path / report.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(report, dest)
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    (tmp_path / "curves").mkdir()
    shutil.copy(ROOT / "curves" / "README.md", tmp_path / "curves" / "README.md")
    return tmp_path


def _said(results: list) -> list:
    return [(name, ok) for name, ok, _ in results]


def test_the_committed_files_are_current(copy):
    done = subprocess.run([sys.executable, "-m", "bot", "refit", "--check", "--root", str(copy)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and done.stdout.count("ok ") == 3, done.stdout + done.stderr


def test_a_stale_table_is_named_then_rewritten(copy):
    readme = copy / "curves" / "README.md"
    text = readme.read_text(encoding="utf-8")
    row = next(line for line in text.split("\n") if line.startswith("| hopper/NF4/eager"))
    readme.write_text(text.replace(row, row.replace("| hopper/NF4/eager", "| hopper/NF4/eager (old)")),
                      encoding="utf-8")
    assert table_step(copy, check_only=True) == (False, "curves/README.md table is stale")
    assert table_step(copy, check_only=False) == (True, "curves/README.md table rewritten")
    assert readme.read_text(encoding="utf-8") == text
    assert TABLE_HEAD in text


def test_a_new_run_makes_the_rows_stale_and_the_refit_rewrites_them(copy):
    # one run fewer: what the rows and the fit look like before that run landed
    run = copy / "measurements" / "hopper-campaign" / "qwen2-7b-d2-nf4"
    shutil.rmtree(run)
    results = refit(copy, check_only=True)
    assert _said(results) == [("anchor rows", False)]  # a failing step stops the ones after it
    results = refit(copy, check_only=False, gallery=False)
    assert [ok for _, ok, _ in results] == [True, True, True]
    assert "rewritten" in results[-1][2]  # the 7.6 B NF4 eager row now counts one run fewer
    fresh = (copy / "reference" / "curves.json").read_bytes()
    assert fresh != (ROOT / "reference" / "curves.json").read_bytes()
    assert rows_step(copy, check_only=True)[0] and table_step(copy, check_only=True)[0]
