"""The one factory of v2 test reports: trials in, a report out through measure's own analysis and report code.

A test names what it needs (per block, each arm's energy and time; the card, the model, the condition) and
gets the report `measure run` would write for such a run: `measure.core.analysis.analyse` and
`measure.core.report.build_report` compute every total, ratio, statistic and rounding, so the report is
consistent by construction and changes with measure when measure changes. TEST FIXTURES, never
measurements: the note says so, and `measurement_source="simulated"` gives the report measure writes for a
fake power source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from measure.core.analysis import analyse
from measure.core.design import ProtocolConfig
from measure.core.outcome import Outcome, Window
from measure.core.report import build_report

FIXTURE_NOTE = "TEST FIXTURE built by tests/support/reports.py - not a measurement"


@dataclass(frozen=True)
class Trial:
    """One arm's share of one block (its two mirrored windows together)."""

    arm: str
    energy_j: float
    duration_s: float
    trace_ratio: float = 1.0  # trace energy / counter energy
    temp_c: float = 40.0
    failed: str | None = None  # the trial fails with this reason (its windows have no sound energy)


def full_digits(value: float, digits: int = 5) -> float:
    """`value` moved up by at most a few units in its last place so that, written to `digits` significant
    figures as the report writes trial energies, it keeps all of them: a trailing zero would print as a
    shorter number, whose rounding (half a unit of its last printed place) the validator must allow."""
    while True:
        text = f"{value:.{digits}g}"
        if len(text.split("e")[0].replace("-", "").replace(".", "").lstrip("0")) >= digits:
            return value
        value = float(text) + 10 ** (math.floor(math.log10(abs(value))) - digits + 1)


def paired_trials(per_token_mj: list[dict[str, float]], orders: list[list[str]], window_tokens: int,
                  power_w: float | dict[str, float], trace_ratio: float = 1.0,
                  digits: int | None = None) -> list[list[Trial]]:
    """Blocks of trials from each block's energy per generated token by arm (a trial is two windows of
    `window_tokens` generated tokens each); time follows power. With `digits`, each trial's energy keeps
    that many significant figures in the report (`full_digits`)."""
    blocks = []
    for per, order in zip(per_token_mj, orders, strict=True):
        trials = []
        for arm in order:
            energy_j = per[arm] * 2 * window_tokens / 1000
            if digits:
                energy_j = full_digits(energy_j, digits)
            watts = power_w[arm] if isinstance(power_w, dict) else power_w
            trials.append(Trial(arm, energy_j, energy_j / watts, trace_ratio))
        blocks.append(trials)
    return blocks


def exact_deltas(mean_pct: float, sd_pp: float, n: int) -> list[float]:
    """`n` paired dE% values whose mean is `mean_pct` and whose sample sd is `sd_pp` (n >= 2)."""
    if n == 1:
        return [mean_pct]
    if n % 2:
        unit = [0.0] + [1.0, -1.0] * ((n - 1) // 2)
    else:
        unit = [math.sqrt((n - 1) / n), -math.sqrt((n - 1) / n)] * (n // 2)
    return [mean_pct + sd_pp * u for u in unit]


def v2_report(
    blocks: list[list[Trial]],
    precision: str,
    *,
    gpu: str = "NVIDIA H200",
    arch: str = "hopper",
    power_limit_w: float | None = 700.0,
    bandwidth_gb_s: float | None = None,
    memory_gb: float | None = None,
    gpu_uuid_sha256: str | None = None,
    host: str = "test fixture",
    model_name: str = "TinyLlama-1.1B",
    model_id: str = "synthetic:tinyllama-1.1b",
    params_b: float = 1.1,
    weights: str = "random-init",
    backend: str = "eager",
    tokens: int = 256,
    batch_size: int = 1,
    source: str = "nvml-energy-counter",
    method: str = "fixture: interleaved paired blocks",
    timestamp_utc: str = "2026-11-20T10:00:00Z",
    note: str = FIXTURE_NOTE,
    seed: int = 0,
    warmup_runs: int = 1,
    idle_w: float | list[float] | None = None,
    idle_bare_w: float | None = None,
    waits_s: list[float] | None = None,
    sample_rate_achieved_hz: float = 100.0,
    weight_bytes: dict[str, int] | None = None,
    software: dict | None = None,
    provenance: dict | None = None,
    quality: dict | None = None,
) -> dict:
    """The report of `precision` against FP16 (or FP16 alone) for a run of these `blocks`.

    Each block lists its trials in the order of the block's first half (F Q means F Q Q F); a window
    holds one generation of `tokens` new tokens for each of `batch_size` prompts. `idle_w` is the loaded
    idle power each block cooled down to (default: 90 % of the block's mean power)."""
    arms = ["FP16"] if precision == "FP16" else ["FP16", precision]
    # a fixed number of blocks with even turns: the report leaves protocol.allocation out
    cfg = ProtocolConfig(tokens=tokens, block_tokens=tokens, trials=len(blocks), duration_s=None,
                         warmup_runs=warmup_runs, seed=seed, batch_size=batch_size, allocation="even")
    out = Outcome(config=cfg, arms=arms)
    clock_s = 100.0
    for b, trials in enumerate(blocks):
        power_w = sum(t.energy_j for t in trials) / sum(t.duration_s for t in trials)
        idle = idle_w[b] if isinstance(idle_w, list) else (idle_w if idle_w is not None else 0.9 * power_w)
        order = [t.arm for t in trials] + [t.arm for t in reversed(trials)]
        halves = {t.arm: t for t in trials}
        windows = []
        for arm in order:
            t = halves[arm]
            start, clock_s = clock_s, clock_s + t.duration_s / 2
            counter = None if t.failed else t.energy_j / 2
            trace = None if t.failed else t.energy_j * t.trace_ratio / 2
            windows.append(Window(arm, start, clock_s, counter, tokens * batch_size, 1, trace,
                                  fault=t.failed))
        out.blocks.append({"block": b, "order": order, "idle_power_w": idle,
                           "temps_c": {t.arm: t.temp_c for t in trials}, "windows": windows,
                           "trace_j": [w.trace_j for w in windows]})
        out.orders.append(order)
    loaded = [blk["idle_power_w"] for blk in out.blocks]
    out.idle_power_loaded_w = sum(loaded) / len(loaded) if loaded else None
    out.idle_power_bare_w = idle_bare_w
    out.waits_s = list(waits_s) if waits_s is not None else [0.0] * len(blocks)
    out.time_split_s = {"warmup": 1.0, "idle": cfg.idle_window_s, "cooldown": sum(out.waits_s),
                        "decode": clock_s - 100.0}
    sut = {"gpu": gpu, "gpu_arch": arch, "accelerator_count": 1}
    for key, value in (("memory_total_gb", memory_gb), ("power_limit_w", power_limit_w),
                       ("gpu_uuid_sha256", gpu_uuid_sha256), ("datasheet_bandwidth_gb_s", bandwidth_gb_s)):
        if value is not None:
            sut[key] = value
    sut["host"] = host
    ctx = {
        "timestamp_utc": timestamp_utc,
        "system_under_test": sut,
        "workload": {"model_name": model_name, "model_id": model_id, "model_revision": None,
                     "params_b": params_b, "batch_size": batch_size, "weights": weights, "backend": backend,
                     "prompt_tokens": 16, "decoding": "greedy"},
        "method": method,
        "measurement_source": source,
        "sample_rate_hz": 100.0,
        "sample_rate_achieved_hz": sample_rate_achieved_hz,
        "dropped_samples": 0,
        "sampler": "process",
        "power_field": "NVML_FI_DEV_POWER_INSTANT",
        "weight_bytes": weight_bytes or {},
        "quality": {precision: quality or {"metric": "perplexity", "basis": "unavailable",
                                           "note": "not scored (test fixture)"}},
        "notes": {precision: note},
        "software": software or {"python": "3.12", "packages": {"torch": "2.11.0", "transformers": "5.17.0",
                                                                "bitsandbytes": "0.50.2"}},
        "provenance": provenance or {"tool_version": "0.1.0", "command": note},
    }
    return build_report(ctx, out, analyse(out), precision)
