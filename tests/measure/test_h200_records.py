"""The H200 runs kept under benchmarks/results: each raw record rebuilds its reports byte for byte,
so every published number can be recomputed from the samples the card gave."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from measure.cli import main

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
RECORDS = sorted(RESULTS.glob("*/*/energy-raw.json.gz"))


def test_there_are_h200_records():
    assert len(RECORDS) >= 4


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.parent.name)
def test_replay_rebuilds_the_committed_reports(record, tmp_path):
    result = CliRunner().invoke(main, ["replay", str(record), "--out", str(tmp_path)])
    assert result.exit_code in (0, 4), result.output  # 4: the static run's INT8 arm cannot be captured
    built = sorted(p.name for p in tmp_path.glob("energy-*.json"))
    assert built and built == sorted(p.name for p in record.parent.glob("energy-*.json"))
    for name in built:
        assert (tmp_path / name).read_bytes() == (record.parent / name).read_bytes(), name
