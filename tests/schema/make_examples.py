"""Builds the example reports under tests/schema/examples/ (test fixtures with constructed numbers).

Run `python -m tests.schema.make_examples` to rewrite them; a test checks the committed files equal its
output. The v2 reports come from the one report factory (tests/support/reports.py), so their arithmetic is
measure's own; the legacy ones are written out. None is a measurement.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from tests.support.reports import Trial, v2_report

EXAMPLES = Path(__file__).resolve().parent / "examples"
FIXTURE_NOTE = (
    "TEST FIXTURE: constructed numbers for the validator's tests, not a measurement; never show it as one."
)
TOKENS = 256
IDLE_W = 122.0


def v2_measured(
    precision: str = "NF4",
    gpu: str = "NVIDIA H200",
    arch: str = "hopper",
    power_limit_w: float = 700.0,
    bandwidth_gb_s: float = 4800.0,
    memory_gb: float = 140.4,
    failed: tuple[int, str] | None = None,
) -> dict:
    """Four paired blocks of FP16 and `precision` (or FP16 alone), written by measure's own report code (the
    one factory, tests/support/reports.py). `failed` = (block, arm): that trial failed (a CUDA error)."""
    fp16_speed = (5.60, 5.95, 5.72, 5.81)  # seconds per 256-token generation: drifts, as on the H200
    slow = {"NF4": 1.19, "INT8": 2.6, "FP16": 1.0}[precision]
    orders = [["FP16", precision], [precision, "FP16"], [precision, "FP16"], ["FP16", precision]]
    if precision == "FP16":
        orders = [["FP16"] for _ in fp16_speed]
    blocks = []
    for block, (seconds, order) in enumerate(zip(fp16_speed, orders, strict=True)):
        trials = []
        for arm in order:  # a trial is two mirrored generations (F Q Q F)
            if arm == "FP16":
                watts, duration_s, ratio, temp_c = 132.0 + block * 0.4, 2 * seconds, 1.0021, 34.0 + block
            else:
                watts, ratio, temp_c = 128.5 - block * 0.3, 0.9987, 34.5 + block
                duration_s = 2 * seconds * slow * (1 + 0.004 * block)
            why = "CUDA error: fixture of a failed trial" if failed == (block, arm) else None
            trials.append(Trial(arm, watts * duration_s, duration_s, ratio, temp_c, why))
        blocks.append(trials)
    return v2_report(
        blocks, precision, gpu=gpu, arch=arch, power_limit_w=power_limit_w, bandwidth_gb_s=bandwidth_gb_s,
        memory_gb=memory_gb, gpu_uuid_sha256="0" * 63 + "1", host="fixture-host", tokens=TOKENS,
        method="NVML total-energy counter + instant-power trace, interleaved paired blocks",
        timestamp_utc="2026-12-02T13:00:00Z", note=FIXTURE_NOTE, warmup_runs=2, idle_w=IDLE_W,
        idle_bare_w=78.0,
        waits_s=[0.0, 1.2, 0.8, 0.0], sample_rate_achieved_hz=99.2,
        weight_bytes={"FP16": 2_200_096_768, "NF4": 770_000_000, "INT8": 1_240_000_000},
        quality={"metric": "perplexity", "basis": "unavailable", "note": "random-init weights"},
        software={
            "python": "3.12.3",
            "packages": {
                "torch": "2.11.0",
                "transformers": "5.17.0",
                "bitsandbytes": "0.50.2",
                "accelerate": "1.15.0",
                "nvidia-ml-py": "13.5",
            },
            "torch_cuda": "13.0",
            "nvidia_driver": "580.159.04",
        },
        provenance={
            "tool_version": "0.1.0",
            "command": "python -m measure run --synthetic tinyllama-1.1b",
            "host_os": "Linux",
            "fixture": FIXTURE_NOTE,
        },
    )


def v2_reference() -> dict:
    """No GPU: the published RTX 4090 TinyLlama NF4 anchor (zenodo.22037483), basis interpolated."""
    report = v2_measured()
    for key in ("protocol", "trials", "statistics", "agreement", "arms", "phases"):
        del report[key]
    report["system_under_test"] = {
        "gpu": "RTX 4090",
        "gpu_arch": "ada",
        "accelerator_count": 1,
        "power_limit_w": None,
        "host": "fixture-host without a GPU",
    }
    report["workload"].update(model_id="TinyLlama/TinyLlama-1.1B-Chat-v1.0", weights="pretrained")
    report["measurement"] = {
        "method": "reference value from the published dataset (no GPU measured)",
        "sample_rate_hz": 0,
    }
    report["measurement_source"] = "reference-dataset"
    report["results"] = {
        "energy_per_token_mj": 1883.91,
        "fp16_energy_per_token_mj": 1619.68,
        "vs_fp16_energy_pct": 16.31,
        "avg_power_watts": None,
        "throughput_tokens_per_s": None,
        "total_energy_joules": None,
        "tokens_generated": None,
        "basis": "interpolated",
        "note": FIXTURE_NOTE + " No NVIDIA GPU: values from the reference dataset.",
    }
    return report


def legacy_10_interpolated() -> dict:
    return {
        "schema_version": "ecocompute-energy/1.0",
        "benchmark": "ecocompute-energy-methodology",
        "follows_mlcommons_energy_reporting_conventions": True,
        "certified_benchmark_result": False,
        "scenario": "SingleStream",
        "timestamp_utc": "2026-07-16T00:11:58.474237Z",
        "system_under_test": {"gpu": "RTX 5090", "gpu_arch": "blackwell", "accelerator_count": 1},
        "workload": {
            "model_name": "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
            "params_b": 1.1,
            "precision": "NF4",
            "batch_size": 1,
            "context_length": 2048,
        },
        "measurement": {
            "method": "reference estimate from published dataset (no on-device measurement)",
            "sample_rate_hz": 10,
            "tokens_per_run": 256,
            "iterations": 10,
        },
        "measurement_source": "ecocompute-dataset (no local GPU)",
        "results": {
            "energy_per_token_mj": 2098.44,
            "fp16_energy_per_token_mj": 1659.0,
            "vs_fp16_energy_pct": 26.5,
            "basis": "interpolated",
            "note": FIXTURE_NOTE,
        },
    }


def legacy_11_measured(source: str = "direct-nvml") -> dict:
    """A legacy 1.1 measured report: Qwen2.5-3B NF4 on an RTX 4090, 10 iterations of 256 tokens."""
    return {
        "schema_version": "ecocompute-energy/1.1",
        "benchmark": "ecocompute-energy-methodology",
        "follows_mlcommons_energy_reporting_conventions": True,
        "certified_benchmark_result": False,
        "scenario": "SingleStream",
        "timestamp_utc": "2026-08-19T10:00:00.000000Z",
        "system_under_test": {"gpu": "NVIDIA GeForce RTX 4090", "gpu_arch": "ada", "accelerator_count": 1},
        "workload": {
            "model_name": "Qwen/Qwen2.5-3B",
            "params_b": 3.0,
            "precision": "NF4",
            "batch_size": 1,
            "context_length": 2048,
        },
        "measurement": {
            "method": "NVML on-device power sampling",
            "sample_rate_hz": 10,
            "tokens_per_run": 256,
            "iterations": 10,
            "warmup": 2,
            "iterations_note": "Decode iterations within one run, not independent trials.",
        },
        "software": {
            "python": "3.10.12",
            "packages": {"torch": "2.4.1", "bitsandbytes": "0.43.3"},
            "torch_cuda": "12.1",
            "nvidia_driver": "550.00.00",
        },
        "measurement_source": source,
        "results": {
            "total_energy_joules": 9176.8,
            "tokens_generated": 2560,
            "energy_per_token_mj": 3584.69,
            "fp16_energy_per_token_mj": 3557.99,
            "vs_fp16_energy_pct": 0.75,
            "avg_power_watts": 96.8,
            "throughput_tokens_per_s": 27.0,
            "basis": "measured",
            "note": FIXTURE_NOTE,
        },
        "quality": {"metric": "perplexity", "basis": "unavailable", "note": "not scored"},
    }


def valid_examples() -> dict[str, dict]:
    return {
        "v2-measured-nf4-hopper.json": v2_measured(),
        "v2-reference-interpolated.json": v2_reference(),
        "legacy-1.0-interpolated.json": legacy_10_interpolated(),
        "legacy-1.1-measured-direct-nvml.json": legacy_11_measured(),
        "v2-fp16-only-baseline.json": v2_measured("FP16"),
        "v2-volta-no-curve-int8.json": v2_measured(
            "INT8", "Tesla V100-SXM2-32GB", "volta", 300.0, 900.0, 32.0
        ),
        "v2-one-trial-failed.json": v2_measured(failed=(2, "FP16")),  # block 2 leaves the pairs
    }


def _set(report: dict, path: str, value) -> dict:
    """A deep copy of `report` with the JSON pointer `path` set to `value` (removed for _DROP)."""
    changed = copy.deepcopy(report)
    *parents, last = path.strip("/").split("/")
    node = changed
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is _DROP:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return changed


_DROP = object()


def _edits(report: dict, *changes) -> dict:
    for path, value in changes:
        report = _set(report, path, value)
    return report


def _text(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def invalid_examples() -> dict[str, bytes | dict]:
    """File name (starting with the code it must produce) -> a report or raw bytes."""
    v2, legacy = v2_measured(), legacy_11_measured()
    tokens = v2["results"]["tokens_generated"]
    good = _text(v2)
    big = _set(v2, "/provenance/padding", "x" * 61_000)
    deep = '{"schema_version": "quantjoule-energy/2.0", "provenance": ' + "[" * 40 + "]" * 40 + "}\n"
    latin1 = _text(_set(legacy, "/system_under_test/host", "Caf\u00e9-Rechner")).encode("latin-1")
    junk = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bytes(range(256)) * 4
    fp16 = v2_measured("FP16")
    return {
        "QJ001-empty.json": b"",
        "QJ001-only-whitespace.json": b"  \n\t\n",
        "QJ002-too-large.json": _text(big).encode(),
        "QJ003-latin1-encoded.json": latin1,
        "QJ003-binary-junk.bin": junk,
        "QJ004-nan-literal.json": good.replace(
            '"vs_fp16_energy_pct": ', '"vs_fp16_energy_pct": NaN, "x": ', 1
        ).encode(),
        "QJ004-infinity-literal.json": good.replace(
            '"avg_power_watts": ', '"avg_power_watts": -Infinity, "y": ', 1
        ).encode(),
        "QJ005-trailing-comma.json": good.replace(
            '"tool_version": "0.1.0",', '"tool_version": "0.1.0",,'
        ).encode(),
        "QJ005-truncated.json": good[:1000].encode(),
        "QJ005-markdown-not-json.txt": b"### Energy report\n\nI ran it and it used less energy with NF4!\n",
        "QJ006-duplicate-key.json": good.replace(
            '"basis": "measured",', '"basis": "measured", "basis": "unavailable",'
        ).encode(),
        "QJ007-nested-too-deep.json": deep.encode(),
        "QJ008-top-level-array.json": ("[" + good + "]\n").encode(),
        "QJ009-no-schema-version.json": _set(v2, "/schema_version", _DROP),
        "QJ010-unknown-schema-version.json": _set(v2, "/schema_version", "quantjoule-energy/3.0"),
        "QJ003-lone-surrogate-escape.json": good.replace('"fixture-host"', '"\\ud800fixture-host"').encode(),
        "QJ012-integer-beyond-2-53.json": _set(v2, "/protocol/seed", 2**64 + 1),
        "QJ012-subnormal-number.json": good.replace(
            '"dropped_samples": 0', '"dropped_samples": 5e-324'
        ).encode(),
        "QJ101-missing-results.json": _set(v2, "/results", _DROP),
        "QJ101-measured-without-trials.json": _set(v2, "/trials", _DROP),
        "QJ102-tokens-as-string.json": _set(v2, "/results/tokens_generated", str(tokens)),
        "QJ103-lower-case-precision.json": _set(v2, "/workload/precision", "nf4"),
        "QJ104-certified-true.json": _set(v2, "/certified_benchmark_result", True),
        "QJ105-negative-trial-energy.json": _set(v2, "/trials/0/counter_energy_j", -739.2),
        "QJ106-misspelled-field.json": _set(v2, "/results/energy_per_token_mJ", 3426.0),
        "QJ107-timestamp-not-utc.json": _set(v2, "/timestamp_utc", "02/12/2026 13:00"),
        "QJ108-arm-twice-in-a-block.json": _set(v2, "/protocol/arm_order/0", ["FP16", "FP16"]),
        "QJ109-cooldown-shape.json": _set(v2, "/protocol/cooldown", {"rule": "loaded-idle", "wait_s": 30}),
        "QJ201-legacy-measured-unknown-source.json": _set(
            legacy, "/measurement_source", "nvidia-smi at 1 Hz"
        ),
        "QJ201-v2-interpolated-from-nvml.json": _set(
            v2_reference(), "/measurement_source", "nvml-energy-counter"
        ),
        "QJ202-legacy-illustrative-claims-measured.json": _set(
            legacy,
            "/measurement_source",
            "ILLUSTRATIVE (synthetic) \u2014 shows the shape of the on-GPU measured output; "
            "NOT a real measurement",
        ),
        "QJ202-v2-simulated-claims-measured.json": _set(v2, "/measurement_source", "simulated"),
        "QJ202-legacy-note-disowns.json": _set(
            legacy, "/results/note", "ILLUSTRATIVE values, not from a real run."
        ),
        "QJ203-delta-disagrees.json": _set(legacy, "/results/vs_fp16_energy_pct", -0.75),
        "QJ204-per-token-disagrees.json": _set(legacy, "/results/total_energy_joules", 9635.64),
        "QJ205-trial-power-times-duration.json": _set(v2, "/trials/2/mean_power_w", 171.33),
        "QJ206-number-overflows.json": good.replace(
            '"idle_window_s": 5.0', '"idle_window_s": 1e999'
        ).encode(),
        "QJ207-legacy-zero-tokens.json": _set(legacy, "/results/tokens_generated", 0),
        "QJ208-legacy-power-implausible.json": _edits(
            legacy, ("/results/avg_power_watts", 2420.0), ("/results/throughput_tokens_per_s", 675.0)
        ),
        "QJ208-v2-power-over-limit.json": _set(
            _set(v2, "/system_under_test/power_limit_w", 100.0), "/protocol/cooldown/target_w", 60.0
        ),
        "QJ209-power-throughput-disagree.json": _set(v2, "/results/throughput_tokens_per_s", 30.0),
        "QJ210-counter-trace-disagree.json": _edits(
            v2,
            ("/agreement/threshold_pct", 2.0),
            ("/trials/3/trace_energy_j", round(v2["trials"][3]["counter_energy_j"] * 1.03, 3)),
        ),
        "QJ211-params-disagree.json": _set(legacy, "/workload/params_b", 7.0),
        "QJ212-legacy-arch-not-known.json": _set(legacy, "/system_under_test/gpu_arch", "Ada Lovelace"),
        "QJ212-v2-arch-not-known.json": _set(v2, "/system_under_test/gpu_arch", "kepler"),
        "QJ213-n-pairs-disagree.json": _set(v2, "/statistics/n_pairs", 3),
        "QJ213-mean-not-from-trials.json": _edits(
            v2,
            ("/statistics/delta_e_pct/mean", 2.0),
            ("/statistics/delta_e_pct/ci95_low", 1.0),
            ("/statistics/delta_e_pct/ci95_high", 3.0),
            ("/statistics/delta_e_pct/ci95_half_width_pp", 1.0),
        ),
        "QJ214-fp16-report-with-baseline.json": _edits(
            fp16,
            ("/results/fp16_energy_per_token_mj", fp16["results"]["energy_per_token_mj"]),
            ("/results/vs_fp16_energy_pct", 0.0),
        ),
        "QJ214-quantized-without-baseline.json": _edits(
            v2_reference(), ("/results/fp16_energy_per_token_mj", None), ("/results/vs_fp16_energy_pct", None)
        ),
        "QJ215-tokens-not-the-trial-sum.json": _set(v2, "/results/tokens_generated", tokens - 1),
        "QJ216-arms-disagree.json": _set(v2, "/arms/FP16/energy_per_token_mj", 1619.68),
        "QJ217-measured-without-energy.json": _set(legacy, "/results/total_energy_joules", None),
        "QJ213-sd-not-from-trials.json": _set(v2, "/statistics/delta_e_pct/sd", 50.0),
        "QJ218-arch-disagrees-with-gpu.json": _set(v2, "/system_under_test/gpu_arch", "ada"),
        "QJ219-energies-too-coarse.json": _edits(
            legacy_10_interpolated(),
            ("/results/energy_per_token_mj", 3),
            ("/results/fp16_energy_per_token_mj", 2),
            ("/results/vs_fp16_energy_pct", 50.0),
        ),
        "QJ220-legacy-measured-without-software.json": _set(legacy, "/software", _DROP),
        "QJ221-timestamp-not-a-date.json": _set(v2, "/timestamp_utc", "2026-02-30T13:00:00Z"),
        "QJ222-counter-trace-beyond-5-pct.json": _set(
            v2, "/trials/3/trace_energy_j", round(v2["trials"][3]["counter_energy_j"] * 1.08, 3)
        ),
    }


def outputs() -> dict[str, bytes]:
    """Relative path under examples/ -> exact file content."""
    files = {f"valid/{name}": _text(report).encode() for name, report in valid_examples().items()}
    for name, content in invalid_examples().items():
        files[f"invalid/{name}"] = content if isinstance(content, bytes) else _text(content).encode()
    files["invalid/QJ011-a-directory.json/README.md"] = (
        b"This directory stands where a report file is expected: `measure check` must answer QJ011\n"
        b"(file cannot be read), not a traceback.\n"
    )
    return files


def main() -> int:
    for relative, content in sorted(outputs().items()):
        target = EXAMPLES / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    print(f"wrote {len(outputs())} files under {EXAMPLES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
