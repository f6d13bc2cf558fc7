"""benchmarks.ci_budget on the committed Hopper runs: the projection agrees with each run's own interval, and
says which runs already meet the CI target and what the others would cost."""

import math
from pathlib import Path

import pytest

from benchmarks.ci_budget import MAX_BLOCKS, blocks_needed, collect, main
from schema.recompute import t975

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = [ROOT / "measurements" / "hopper-campaign", ROOT / "measurements" / "hopper-batch"]


@pytest.mark.parametrize("sd, target", [(1.0, 3.0), (7.0, 3.0), (40.0, 9.9), (0.2, 3.0)])
def test_blocks_needed_is_the_least_count_that_reaches_the_target(sd, target):
    n = blocks_needed(sd, target)
    assert t975(n - 1) * sd / math.sqrt(n) <= target
    assert n == 2 or t975(n - 2) * sd / math.sqrt(n - 1) > target


def test_a_hopeless_interval_says_so():
    assert blocks_needed(1e6, 3.0) == MAX_BLOCKS


def test_the_committed_runs_project_consistently():
    rows = collect(FOLDERS)
    # only whole 256-token generations: the reconstruction runs (8-token windows) are left out
    assert rows and not any(r["run"].endswith(("-r1", "-r2")) for r in rows)
    for r in rows:
        # a run that meets its target needs no more blocks than it had; one that misses needs more
        assert (r["blocks_needed"] <= r["blocks"]) == r["met"], r
    static = [r for r in rows if r["backend"] == "static"]
    eager_int8 = [r for r in rows if r["backend"] == "eager" and r["precision"] == "INT8"]
    assert static and all(r["met"] for r in static)
    # most eager INT8 runs on these hosts would need more than one device call's 600 s of blocks
    past_one_call = [r for r in eager_int8 if r["seconds_needed"] is None or r["seconds_needed"] > 600]
    assert len(past_one_call) > len(eager_int8) / 2


def test_the_command_prints_one_row_per_run(capsys):
    assert main([str(f) for f in FOLDERS]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| run |") and len(lines) == 2 + len(collect(FOLDERS))


def test_chunked_runs_say_so_in_their_condition(capsys):
    rows = collect(FOLDERS)
    chunked = [r for r in rows if r["chunk_tokens"]]
    # the campaign's chunked-pairing cells (32-token windows inside whole 256-token generations)
    names = {r["run"] for r in chunked}
    assert names >= {"hopper-campaign/qwen2-0.5b-c1-nf4", "hopper-campaign/qwen2-1.5b-c1-nf4"}
    assert all(r["chunk_tokens"] == 32 for r in chunked)
    assert main([str(FOLDERS[0])]) == 0
    out = capsys.readouterr().out.splitlines()
    line = next(x for x in out if "qwen2-0.5b-c1-nf4" in x)
    assert "NF4 eager b1 chunks of 32" in line
    assert not any("chunks of" in x for x in out if "-d3-" in x)
