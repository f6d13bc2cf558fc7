"""--batch-size over the fake GPU seam: energy per generated token over batch x tokens, the roofline
bound per batch, the condition in the report, and replay of a batched record byte for byte."""

import json

import pytest
from click.testing import CliRunner

from measure.cli import main
from measure.core.record import decode_outcome
from measure.power.fake import FakeClock
from measure.run.options import EXIT_OK
from measure.run.runner import run
from schema import check_report
from tests.measure.test_runner import STEPS, _env, _opts
from tests.support.measure_fakes import FakeArm, FakeWorkload, quick_config


def _batched_run(tmp_path, batch: int):
    """Same fake clock timeline for every batch (a batched step costs what a single one does here), so
    the window energies are identical and only the token count changes."""
    clock = FakeClock(50.0)
    arms = {a: FakeArm(clock, s, 1.5 * s, batch=batch) for a, s in STEPS.items()}
    opts = _opts(tmp_path / f"b{batch}")
    opts.protocol = quick_config(trials=4, batch_size=batch)
    return run(opts, _env(clock, FakeWorkload(arms)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch")
    return {b: _batched_run(root, b) for b in (1, 4)}


def _report(res, prec="NF4"):
    return json.loads(next(p for p in res.paths if prec.lower() in p.name).read_text())


def test_a_batched_report_is_valid_and_states_its_condition(runs):
    res = runs[4]
    assert res.exit_code == EXIT_OK
    for path in res.paths:
        rep, problems = check_report(path.read_bytes())
        assert [p for p in problems if p.severity == "error"] == []
        assert rep["workload"]["batch_size"] == 4 and rep["scenario"] == "Offline"
        assert rep["workload"]["backend"] == "eager" and rep["measurement"]["tokens_per_run"] == 32
    assert _report(runs[1])["scenario"] == "SingleStream" and _report(runs[1])["workload"]["batch_size"] == 1
    assert [r["condition"] for r in res.rows] == [
        "hopper NF4, eager backend, batch 4, 32-token generations",
        "hopper INT8, eager backend, batch 4, 32-token generations",
    ]


def test_energy_per_generated_token_divides_by_batch_times_tokens(runs):
    one, four = _report(runs[1]), _report(runs[4])
    for trial in four["trials"]:  # every prompt's tokens are counted: 4 prompts x 32 tokens x 2 windows
        assert trial["tokens"] == 4 * 32 * four["protocol"]["iterations_per_trial"]
    for t1, t4 in zip(one["trials"], four["trials"], strict=True):
        assert t4["counter_energy_j"] == pytest.approx(t1["counter_energy_j"], rel=1e-4)
    r1, r4 = one["results"], four["results"]
    assert r4["tokens_generated"] == 4 * r1["tokens_generated"]
    assert r4["energy_per_token_mj"] == pytest.approx(r1["energy_per_token_mj"] / 4, rel=1e-4)
    assert r4["energy_per_token_mj"] == pytest.approx(
        r4["total_energy_joules"] / r4["tokens_generated"] * 1000, rel=1e-5
    )
    # a ratio of two arms at the same batch: unchanged by the batch
    assert four["statistics"]["delta_e_pct"]["mean"] == pytest.approx(
        one["statistics"]["delta_e_pct"]["mean"], abs=1e-3
    )
    for arm in ("FP16", "NF4"):  # the reconstruction to --tokens divides by the batch as well
        e1 = one["phases"]["reconstructed_energy_per_token_mj"][arm]
        assert four["phases"]["reconstructed_energy_per_token_mj"][arm] == pytest.approx(e1 / 4, rel=1e-4)
        d1 = one["arms"][arm]["decode_energy_per_token_mj"]
        assert four["arms"][arm]["decode_energy_per_token_mj"] == pytest.approx(d1 / 4, rel=1e-4)
    assert "E / (4 x 256)" in four["phases"]["method"] and "x 256" not in one["phases"]["method"]


def test_the_roofline_bound_scales_with_the_batch(runs):
    one, four = _report(runs[1])["arms"]["FP16"], _report(runs[4])["arms"]["FP16"]
    # one decode step reads the weights once for every prompt in the batch
    assert four["roofline_bound_tokens_per_s"] == pytest.approx(4 * 4800e9 / 2.2e9, rel=1e-5)
    assert four["throughput_tokens_per_s"] == pytest.approx(4 * one["throughput_tokens_per_s"], rel=1e-4)
    assert four["roofline_achieved_fraction"] == pytest.approx(one["roofline_achieved_fraction"], rel=1e-4)


def test_a_batched_record_replays_byte_for_byte(runs, tmp_path):
    res = runs[4]
    result = CliRunner().invoke(main, ["replay", str(res.record), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for path in res.paths:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_a_record_from_before_batches_means_batch_1(runs):
    import gzip

    record = json.loads(gzip.decompress(runs[4].record.read_bytes()))
    config = dict(record["outcome"]["config"])
    assert config.pop("batch_size") == 4
    assert decode_outcome({**record["outcome"], "config": config}).config.batch_size == 1


def test_batch_size_must_be_positive():
    result = CliRunner().invoke(main, ["run", "--synthetic", "tiny-llama", "--batch-size", "0"])
    assert result.exit_code == 2 and "--batch-size" in result.output
