"""What a report says about the run besides its energies: GPU, architecture, workload, method, software."""

from __future__ import annotations

from dataclasses import dataclass, field

from measure import __version__
from measure.core.outcome import Outcome
from measure.core.seams import Sampler
from measure.run.env import Env
from measure.run.options import RunOptions
from measure.run.provenance import provenance, software
from schema.gpus import arch_for, bandwidth_gb_s
from schema.models import KNOWN_ARCHS

METHOD = {
    "paired": "NVML total-energy counter per window + instant-power trace (separate process), "
    "resident arms, mirrored paired blocks (F Q Q F), loaded-idle cooldown",
    "all": "NVML total-energy counter per window + instant-power trace (separate process), "
    "resident arms, mirrored interleaved blocks (A B C C B A), loaded-idle cooldown",
}
POWER_FIELDS = ("NVML_FI_DEV_POWER_INSTANT", "nvmlDeviceGetPowerUsage")  # what a report may name


def resolve_arch(name: str, override: str | None) -> tuple[str | None, str]:
    """(arch, how): the override wins; an unknown name stays None, never mapped to a neighbour."""
    if override:
        if override not in KNOWN_ARCHS:
            raise ValueError(f"--gpu-arch must be one of {', '.join(KNOWN_ARCHS)}, got {override!r}")
        return override, "override"
    arch = arch_for(name)
    return arch, ("table" if arch else "unknown")


@dataclass
class Loaded:
    """What loading the arms and probing them found, per arm, and the workload's own `info()`."""

    weight_bytes: dict[str, int] = field(default_factory=dict)
    params_b: dict[str, float] = field(default_factory=dict)
    quality: dict[str, dict] = field(default_factory=dict)
    workload_info: dict = field(default_factory=dict)
    int8_outliers: dict | None = None  # the INT8 arm's outlier-column probe (measure.gpu.outliers)


def run_context(
    opts: RunOptions, env: Env, info: dict, arch: str, how: str, out: Outcome, sampler: Sampler,
    loaded: Loaded,
) -> dict:
    """The record's `context`: everything a report needs that the trace does not hold."""
    power = env.power
    name, mid, weights, _ = opts.names()
    params = loaded.params_b
    params_b = params.get("FP16") or next(iter(params.values()), None)
    ctx = {
        "timestamp_utc": env.timestamp(),
        "system_under_test": {
            "gpu": info["name"],
            "gpu_arch": arch,
            "accelerator_count": 1,
            "memory_total_gb": info.get("memory_total_gb"),
            "power_limit_w": info.get("power_limit_w"),
            **({} if (pm := info.get("persistence_mode")) is None else {"persistence_mode": pm}),
            "gpu_uuid_sha256": info.get("gpu_uuid_sha256"),
            "datasheet_bandwidth_gb_s": bandwidth_gb_s(info["name"]),
        },
        "workload": {
            "model_name": name,
            "model_id": mid,
            "model_revision": None,
            "params_b": round(params_b, 4) if params_b else None,
            "batch_size": out.config.batch_size,
            "weights": weights,
            "backend": opts.backend,
            "prompt_tokens": None,
            "decoding": "greedy",
        },
        "method": METHOD[out.config.pairing]
        + (f"; decode pinned to CPU {env.cpus[0]}, sampler to CPU {env.cpus[1]}" if env.cpus else "")
        + ("" if how == "table" else f"; gpu_arch from --gpu-arch ({info['name']})"),
        "measurement_source": power.measurement_source,
        "sample_rate_hz": opts.sample_rate_hz,
        "sample_rate_achieved_hz": sampler.achieved_rate_hz(),
        "dropped_samples": sampler.dropped(),
        "sampler": sampler.kind,
        "power_field": power.power_field if power.power_field in POWER_FIELDS else None,
        "weight_bytes": loaded.weight_bytes,
        "quality": loaded.quality,
        "software": software(info.get("driver")),
        "provenance": provenance(__version__, opts.argv),
    }
    wl_info = loaded.workload_info
    # outlier_plant: only in runs that planted outlier features; it goes into every arm's report
    ctx["workload"].update({k: v for k, v in wl_info.items()
                            if k in ("model_revision", "prompt_tokens", "outlier_plant")})
    if "int8_outlier_threshold" in wl_info:  # absent in records made before it was recorded
        ctx["int8_outlier_threshold"] = wl_info["int8_outlier_threshold"]
    if loaded.int8_outliers is not None:  # absent: no INT8 arm, or a record made before the probe
        ctx["int8_outliers"] = loaded.int8_outliers
    return ctx
