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


def test_the_ci_trajectory_ends_at_the_reports_interval():
    import json
    import sys

    sys.path.insert(0, str(RESULTS.parent))
    from ci_trajectory import trajectory

    from measure.record import read

    record = next(r for r in RECORDS if r.parent.name == "eager-paired-8tok")
    traj = trajectory(read(record))
    for prec in ("NF4", "INT8"):
        stats = json.loads((record.parent / f"energy-{prec.lower()}.json").read_text())["statistics"]
        assert traj[prec]["blocks"] == stats["n_pairs"]
        assert traj[prec]["final_half_width_pp"] == round(stats["delta_e_pct"]["ci95_half_width_pp"], 2)
        assert traj[prec]["points"][-1][1] == stats["n_pairs"]


def test_the_h200_allocation_followed_its_rule_block_by_block():
    """Replaying the target allocation over the record: after every arm had its first blocks, each
    block on the H200 went to the arm `allocation.choose` picks from the blocks before it."""
    from measure.allocation import MIN_BLOCKS, block_delta_pct, choose
    from measure.record import decode_outcome, read, recorded_trace

    record = next(r for r in RECORDS if r.parent.name == "eager-8tok-rounds2-315s")
    raw = read(record)
    out = decode_outcome(raw["outcome"])
    assert out.config.allocation == "target"
    t, p, _ = recorded_trace(raw)
    running: dict[str, list[float]] = {}
    decided = 0
    for blk in out.blocks:
        arm = next(a for a in blk["order"] if a != "FP16")
        pick = choose(running, [arm, *(a for a in ("NF4", "INT8") if a != arm)])
        if pick is not None:
            assert pick == arm, blk["block"]
            decided += 1
        est = block_delta_pct(blk["windows"], t, p)
        running.setdefault(est[0], []).append(est[1])
    assert decided >= len(out.blocks) - 3 * MIN_BLOCKS
    n = {a: len(v) for a, v in running.items()}
    assert n["NF4"] > 2 * n["INT8"] >= 2 * MIN_BLOCKS  # the noisy arm got the blocks
