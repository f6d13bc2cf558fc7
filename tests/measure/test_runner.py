"""runner.run end to end over fakes: reports, exit statuses, fault paths, the no-GPU reference report."""

import json
from datetime import datetime, timezone

import pytest

from measure.codes import MeasureError
from measure.power.fake import FakeClock, FakePowerSource
from measure.run.env import Env
from measure.run.options import EXIT_NO_GPU, EXIT_OK, EXIT_PARTIAL, RunOptions
from measure.run.runner import run
from schema import check_report, is_measurement, validate
from schema.parse import MAX_REPORT_BYTES
from tests.support.measure_fakes import ClockedSampler, FakeArm, FakeWorkload, quick_config

STEPS = {"FP16": 0.020, "NF4": 0.026, "INT8": 0.050}


def _env(clock, workload, name="NVIDIA H200"):
    src = FakePowerSource([(0.0, 128.0), (0.3, 134.0), (0.6, 128.0)], clock=clock, name=name)
    return Env(
        src,
        ClockedSampler(src, clock),
        lambda *a, **k: workload,
        clock=clock,
        sleep=clock.sleep,
        now_utc=lambda: datetime(2026, 12, 2, 13, 0, tzinfo=timezone.utc),
        device="cpu",
    )


def _arms(clock, **kw):
    return {a: FakeArm(clock, s, 1.5 * s, **kw.get(a, {})) for a, s in STEPS.items()}


def _opts(tmp_path, trials=5, pairing="paired", **kw):
    cfg = quick_config(trials=trials, pairing=pairing)
    return RunOptions(synthetic="tinyllama-1.1b", out_dir=tmp_path, protocol=cfg, argv=["run"], **kw)


def test_full_run_writes_schema_valid_simulated_reports(tmp_path):
    clock = FakeClock(50.0)
    res = run(_opts(tmp_path), _env(clock, FakeWorkload(_arms(clock))))
    assert res.exit_code == EXIT_OK and [p.name for p in res.paths] == ["energy-nf4.json", "energy-int8.json"]
    for path, true_pct in zip(res.paths, (30.0, 150.0), strict=True):
        text = path.read_text()
        assert len(text.encode()) < MAX_REPORT_BYTES
        report, problems = check_report(text.encode())
        assert [p for p in problems if p.severity == "error"] == []
        assert report["measurement_source"] == "simulated" and report["results"]["basis"] == "unavailable"
        assert not is_measurement(report)
        assert report["system_under_test"]["gpu_arch"] == "hopper"
        assert report["statistics"]["n_pairs"] == 5
        # constant-ish power: dE% follows the time ratio of the fake arms
        assert report["statistics"]["delta_e_pct"]["mean"] == pytest.approx(true_pct, abs=1.0)
        assert report["arms"]["FP16"]["roofline_bound_tokens_per_s"] == pytest.approx(
            4800e9 / 2.2e9, rel=1e-4
        )
        assert report["protocol"]["cooldown"]["rule"] == "loaded-idle"


def test_a_target_allocated_run_says_so_and_stays_valid(tmp_path):
    clock = FakeClock(50.0)
    opts = _opts(tmp_path)
    opts.protocol = quick_config(trials=None, duration_s=30.0, allocation="target")
    res = run(opts, _env(clock, FakeWorkload(_arms(clock))))
    assert res.exit_code == EXIT_OK
    for path in res.paths:
        report, problems = check_report(path.read_bytes())
        assert [p for p in problems if p.severity == "error"] == []
        assert report["protocol"]["allocation"] == "target"
    # an even run (every run before the option existed) leaves the field out: replays stay byte-identical
    even = run(_opts(tmp_path / "even"), _env(FakeClock(50.0), FakeWorkload(_arms(FakeClock(50.0)))))
    assert "allocation" not in json.loads(even.paths[0].read_text())["protocol"]


def test_same_inputs_give_byte_identical_reports(tmp_path):
    texts = []
    for sub in ("a", "b"):
        clock = FakeClock(50.0)
        res = run(_opts(tmp_path / sub), _env(clock, FakeWorkload(_arms(clock))))
        texts.append([p.read_bytes() for p in res.paths])
    assert texts[0] == texts[1]


def test_one_precision_writes_energy_json(tmp_path):
    clock = FakeClock(50.0)
    res = run(_opts(tmp_path, precisions=("NF4",)), _env(clock, FakeWorkload(_arms(clock))))
    assert [p.name for p in res.paths] == ["energy.json"]


def test_failed_load_keeps_the_other_arm_and_exits_4(tmp_path):
    clock = FakeClock(50.0)
    wl = FakeWorkload(_arms(clock), fail_load={"INT8": RuntimeError("CUDA out of memory")})
    res = run(_opts(tmp_path), _env(clock, wl))
    assert res.exit_code == EXIT_PARTIAL and any(w.code == "QJ403" for w in res.warnings)
    nf4 = json.loads((tmp_path / "energy-nf4.json").read_text())
    int8 = json.loads((tmp_path / "energy-int8.json").read_text())
    assert nf4["statistics"]["n_pairs"] == 5
    assert (
        int8["arms"]["INT8"]["status"] == "unavailable" and "out of memory" in int8["arms"]["INT8"]["reason"]
    )
    assert int8["results"]["basis"] == "unavailable"
    assert [p for p in validate(int8) if p.severity == "error"] == []


def test_interrupt_writes_partial_unmeasured_reports(tmp_path):
    clock = FakeClock(50.0)
    wl = FakeWorkload(_arms(clock, NF4={"interrupt_after": 8}))
    res = run(_opts(tmp_path, trials=10), _env(clock, wl))
    assert res.exit_code == EXIT_PARTIAL and any(w.code == "QJ404" for w in res.warnings)
    rep = json.loads((tmp_path / "energy-nf4.json").read_text())
    assert rep["results"]["basis"] == "unavailable" and "interrupted" in rep["results"]["note"]


def test_unknown_gpu_is_refused_without_override(tmp_path):
    from measure.codes import MeasureError

    clock = FakeClock(50.0)
    with pytest.raises(MeasureError) as err:
        run(_opts(tmp_path), _env(clock, FakeWorkload(_arms(clock)), name="Tesla P100-PCIE-16GB"))
    assert err.value.code == "QJ408"
    res = run(
        _opts(tmp_path, gpu_arch="volta"),
        _env(clock, FakeWorkload(_arms(clock)), name="Tesla P100-PCIE-16GB"),
    )
    assert json.loads(res.paths[0].read_text())["system_under_test"]["gpu_arch"] == "volta"


def test_no_gpu_writes_a_reference_report_and_exits_3(tmp_path):
    env = Env(
        None,
        None,
        None,
        reason="no CUDA GPU is visible to torch",
        now_utc=lambda: datetime(2026, 12, 2, tzinfo=timezone.utc),
    )
    res = run(_opts(tmp_path, gpu_arch="ada"), env)
    assert res.exit_code == EXIT_NO_GPU
    rep = json.loads(res.paths[0].read_text())
    assert rep["measurement_source"] == "reference-dataset"
    assert rep["results"]["basis"] in ("interpolated", "extrapolated")
    assert isinstance(rep["results"]["vs_fp16_energy_pct"], float)
    assert "no CUDA GPU" in rep["results"]["note"] and rep["system_under_test"]["gpu"].startswith("none")
    assert [p for p in validate(rep) if p.severity == "error"] == []
    assert not is_measurement(rep)


def test_no_gpu_and_no_arch_is_a_usage_error_that_says_why(tmp_path):
    env = Env(None, None, None, reason="NVML unavailable")
    with pytest.raises(MeasureError) as err:
        run(_opts(tmp_path), env)
    assert err.value.code == "QJ409" and list(tmp_path.iterdir()) == []
    assert "NVML unavailable" in err.value.message and "--gpu-arch" in err.value.message


_NO_GPU = dict(
    reason="no CUDA GPU is visible to torch", now_utc=lambda: datetime(2026, 12, 2, tzinfo=timezone.utc)
)


@pytest.mark.parametrize("arch", ["hopper", "ada", "ampere", "blackwell", "turing", "volta"])
@pytest.mark.parametrize(
    "model", [{"synthetic": "qwen2-0.5b"}, {"synthetic": "qwen2.5-3b"}, {"model": "Qwen/Qwen2-7B"}]
)
def test_every_no_gpu_variant_writes_a_schema_valid_honest_reference_report(tmp_path, arch, model):
    opts = RunOptions(precisions=("NF4", "INT8"), gpu_arch=arch, out_dir=tmp_path, **model)
    res = run(opts, Env(None, None, None, **_NO_GPU))
    assert res.exit_code == EXIT_NO_GPU and len(res.paths) == 2
    for path in res.paths:
        rep = json.loads(path.read_text())
        assert [p.code for p in validate(rep) if p.severity == "error"] == []
        assert not is_measurement(rep) and rep["measurement_source"] == "reference-dataset"
        results = rep["results"]
        if results["basis"] == "unavailable":  # no curve for this arch/precision: no number is invented
            assert results["vs_fp16_energy_pct"] is None and results["energy_per_token_mj"] is None
            assert "no reference curve" in results["note"]
        else:  # the FP16 energy from the arch's anchors is kept, and the quantized one follows from dE%
            fp16, quant = results["fp16_energy_per_token_mj"], results["energy_per_token_mj"]
            assert fp16 > 0 and quant > 0
            assert quant / fp16 - 1 == pytest.approx(results["vs_fp16_energy_pct"] / 100, abs=1e-4)


def test_hopper_reference_energies_come_from_the_h200_anchors(tmp_path):
    opts = RunOptions(synthetic="tinyllama-1.1b", precisions=("NF4",), gpu_arch="hopper", out_dir=tmp_path)
    rep = json.loads(run(opts, Env(None, None, None, **_NO_GPU)).paths[0].read_text())
    # the FP16 energy of the project's own H200 anchor rows of TinyLlama's size (1.1 B), averaged
    import csv

    from curves.store import DEFAULT_ANCHOR_PATHS

    rows = [r for path in DEFAULT_ANCHOR_PATHS for r in csv.DictReader(path.open(encoding="utf-8"))]
    at_size = [r for r in rows if r["arch"] == "hopper" and float(r["params_b"]) == 1.1]
    fp16 = {float(r["energy_fp16_j1k"]) for r in at_size}
    assert fp16, "the Hopper anchors include TinyLlama's size"
    assert rep["results"]["fp16_energy_per_token_mj"] == pytest.approx(sum(fp16) / len(fp16), rel=1e-5)
    assert "hopper" in rep["results"]["note"] and "no hopper anchors" not in rep["results"]["note"]


def test_a_model_id_without_a_gpu_is_sized_from_the_known_table_or_refused(tmp_path):
    known = RunOptions(model="Qwen/Qwen2-7B", precisions=("NF4",), gpu_arch="ada", out_dir=tmp_path / "k")
    rep = json.loads(run(known, Env(None, None, None, **_NO_GPU)).paths[0].read_text())
    assert rep["workload"]["params_b"] == pytest.approx(7.616)
    assert "known-model table" in rep["results"]["note"]
    unknown = RunOptions(model="someone/unknown-3b", gpu_arch="ada", out_dir=tmp_path / "u")
    with pytest.raises(MeasureError) as err:
        run(unknown, Env(None, None, None, **_NO_GPU))
    assert err.value.code == "QJ409" and "--synthetic" in err.value.message
    assert not (tmp_path / "u").exists()


def test_interrupt_while_loading_writes_valid_unmeasured_reports(tmp_path):
    clock = FakeClock(50.0)
    wl = FakeWorkload(_arms(clock), fail_load={"INT8": KeyboardInterrupt()})
    res = run(_opts(tmp_path), _env(clock, wl))
    assert res.exit_code == EXIT_PARTIAL
    for path in res.paths:
        rep = json.loads(path.read_text())
        assert rep["results"]["basis"] == "unavailable" and rep["protocol"]["cooldown"] == {"rule": "none"}
        assert [p for p in validate(rep) if p.severity == "error"] == []


def test_an_unwritable_raw_record_still_gives_the_reports(tmp_path):
    clock = FakeClock(50.0)
    (tmp_path / "energy-raw.json.gz").mkdir()  # a directory where the record should go: write fails
    res = run(_opts(tmp_path), _env(clock, FakeWorkload(_arms(clock))))
    assert res.exit_code == EXIT_OK and res.record is None
    assert any(w.code == "QJ417" and w.severity == "warning" for w in res.warnings)
    assert [p.name for p in res.paths] == ["energy-nf4.json", "energy-int8.json"]


def test_a_duration_bounded_nf4_only_run_fills_its_budget_and_stops_inside_it(tmp_path):
    """The campaign's direct256-420s-nf4 shape: one quantized arm, no block count, target allocation."""
    clock = FakeClock(50.0)
    opts = _opts(tmp_path, precisions=("NF4",))
    opts.protocol = quick_config(trials=None, duration_s=30.0, allocation="target")
    res = run(opts, _env(clock, FakeWorkload(_arms(clock))))
    assert res.exit_code == EXIT_OK
    report, problems = check_report(res.paths[0].read_bytes())
    assert [p for p in problems if p.severity == "error"] == []
    blocks = report["statistics"]["n_pairs"]
    shorter = quick_config(trials=None, duration_s=15.0, allocation="target")
    opts_short = _opts(tmp_path / "short", precisions=("NF4",))
    opts_short.protocol = shorter
    clock2 = FakeClock(50.0)
    half = json.loads(run(opts_short, _env(clock2, FakeWorkload(_arms(clock2)))).paths[0].read_text())
    # twice the budget holds more blocks, and a run's block phase never passes its budget
    assert blocks > half["statistics"]["n_pairs"] >= 2
    assert report["phases"]["time_split_s"]["decode"] <= 30.0
