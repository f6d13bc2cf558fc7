"""Report labelling and size: only a complete NVML run is `measured`; long runs still fit an issue."""

import pytest

from measure.core.analysis import analyse, subset
from measure.core.outcome import Outcome
from measure.core.report import build_report, dumps
from measure.power.fake import FakeClock, FakePowerSource
from measure.run.protocol import Protocol
from schema import validate
from schema.parse import MAX_REPORT_BYTES
from tests.support.measure_fakes import ClockedSampler, FakeArm, measured, quick_config


def _outcome(trials):
    clock = FakeClock(10.0)
    src = FakePowerSource([(0.0, 125.0), (0.4, 140.0), (0.8, 125.0)], clock=clock)
    sampler = ClockedSampler(src, clock)
    sampler.start()
    cfg = quick_config(trials=trials)
    arms = {a: FakeArm(clock, s, 1.5 * s) for a, s in {"FP16": 0.02, "NF4": 0.026, "INT8": 0.05}.items()}
    out = Outcome(config=cfg, arms=list(arms))
    out = measured(Protocol(cfg, src, sampler, clock, clock.sleep), arms, out)
    return out


def _ctx(source):
    return {
        "timestamp_utc": "2026-12-02T13:00:00Z",
        "system_under_test": {
            "gpu": "NVIDIA H200",
            "gpu_arch": "hopper",
            "accelerator_count": 1,
            "memory_total_gb": 150.0,
            "power_limit_w": 700.0,
            "gpu_uuid_sha256": "0" * 64,
            "datasheet_bandwidth_gb_s": 4800.0,
        },
        "workload": {
            "model_name": "TinyLlama-1.1B",
            "model_id": "synthetic:tinyllama-1.1b",
            "model_revision": None,
            "params_b": 1.1,
            "batch_size": 1,
            "weights": "random-init",
            "backend": "eager",
            "prompt_tokens": 16,
            "decoding": "greedy",
        },
        "method": "test",
        "measurement_source": source,
        "sample_rate_hz": 100.0,
        "sample_rate_achieved_hz": 100.0,
        "dropped_samples": 0,
        "sampler": "process",
        "power_field": "NVML_FI_DEV_POWER_INSTANT",
        "weight_bytes": {"FP16": 2_200_000_000, "NF4": 800_000_000, "INT8": 1_300_000_000},
        "quality": {},
        "notes": {"NF4": "n", "INT8": "n", "FP16": "n"},
        "software": {"python": "3.12"},
        "provenance": {"tool_version": "0.1.0"},
    }


@pytest.fixture(scope="module")
def outcome():
    return _outcome(8)


def test_complete_nvml_run_is_measured_and_valid(outcome):
    rep = build_report(_ctx("nvml-energy-counter"), outcome, analyse(outcome), "NF4")
    assert rep["results"]["basis"] == "measured"
    assert [p for p in validate(rep) if p.severity == "error"] == []


@pytest.mark.parametrize("source", ["simulated", "reference-dataset"])
def test_non_nvml_sources_are_never_measured(outcome, source):
    rep = build_report(_ctx(source), outcome, analyse(outcome), "NF4")
    assert rep["results"]["basis"] == "unavailable"


def test_interrupted_or_failed_runs_are_never_measured():
    out = _outcome(3)
    out.interrupted = True
    assert (
        build_report(_ctx("nvml-energy-counter"), out, analyse(out), "INT8")["results"]["basis"]
        == "unavailable"
    )
    out = _outcome(3)
    out.failed["INT8"] = "RuntimeError: CUDA out of memory"
    rep = build_report(_ctx("nvml-energy-counter"), out, analyse(out), "INT8")
    assert rep["results"]["basis"] == "unavailable"
    assert (
        build_report(_ctx("nvml-energy-counter"), out, analyse(out), "NF4")["results"]["basis"] == "measured"
    )


def test_a_long_run_still_fits_an_issue_body():
    out = subset(_outcome(120), "INT8")  # each report stands on its own blocks, as the runner writes it
    text = dumps(build_report(_ctx("nvml-energy-counter"), out, analyse(out), "INT8"))
    assert len(text.encode()) < MAX_REPORT_BYTES


def test_fp16_only_report_has_no_baseline_fields(outcome):
    rep = build_report(_ctx("nvml-energy-counter"), outcome, analyse(outcome), "FP16")
    assert rep["results"]["fp16_energy_per_token_mj"] is None and rep["statistics"] is None
    assert [p for p in validate(rep) if p.severity == "error"] == []
