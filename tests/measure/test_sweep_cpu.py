"""A real `measure sweep` of a tiny grid on CPU: each cell a real `python -m measure run` process (tiny
random-init Llama through torch + bitsandbytes, the simulated power source), one progress bar, and a
second call that resumes where the budget stopped the first."""

import json

import pytest
from click.testing import CliRunner

from measure.cli import main
from schema import check_report, is_measurement

pytestmark = pytest.mark.slow

GRID = ["--synthetic", "tiny-llama", "--precisions", "nf4", "--backends", "eager,static",
        "--batch-sizes", "2", "--trials", "1", "--cell-need-s", "60", "--budget", "61"]
RUN = ["--", "--tokens", "8", "--block-tokens", "8", "--warmup", "1", "--gpu-arch", "hopper"]


def test_a_tiny_grid_runs_resumes_and_keeps_one_record_per_cell(tmp_path, monkeypatch, tmp_path_factory):
    monkeypatch.setenv("QUANTJOULE_SIMULATE_POWER", "1")  # the runs' power source is the labelled fake
    monkeypatch.setenv("QUANTJOULE_CACHE", str(tmp_path_factory.mktemp("cache")))
    root = tmp_path / "grid"
    first = CliRunner().invoke(main, ["sweep", *GRID, "--root", str(root), *RUN])
    # one 60 s cell fits the 61 s budget; the other is left for the next call
    assert first.exit_code == 4, first.output
    assert "grid" in first.output and "1/2" in first.output and "QJ420" in first.output
    assert sorted(p.name for p in root.iterdir()) == ["tiny-llama-nf4-eager-b2"]
    second = CliRunner().invoke(main, ["sweep", *GRID, "--root", str(root), *RUN])
    assert second.exit_code == 0, second.output
    assert "2/2" in second.output
    assert sorted(p.name for p in root.iterdir()) == ["tiny-llama-nf4-eager-b2", "tiny-llama-nf4-static-b2"]
    for backend in ("eager", "static"):
        cell = root / f"tiny-llama-nf4-{backend}-b2"
        assert (cell / "energy-raw.json.gz").exists()
        assert json.loads((cell / "cell.json").read_text())["rc"] == 0
        report, problems = check_report((cell / "energy.json").read_bytes())
        assert [p for p in problems if p.severity == "error"] == []
        assert not is_measurement(report) and report["measurement_source"] == "simulated"
        assert report["workload"]["backend"] == backend and report["workload"]["batch_size"] == 2
        assert {t["tokens"] for t in report["trials"]} == {2 * 8 * report["protocol"]["iterations_per_trial"]}
    third = CliRunner().invoke(main, ["sweep", *GRID, "--root", str(root), "--dry-run", *RUN])
    assert "sweep plan: 2 of 2 cells done, 0 to run" in third.output
