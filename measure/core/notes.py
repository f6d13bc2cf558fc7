"""What a run's record says in words: each report's note, the run's findings (QJ4xx), its condition."""

from __future__ import annotations

import statistics as st

from measure.codes import problem
from measure.core.outcome import Outcome
from measure.core.report import AGREEMENT_THRESHOLD_PCT
from measure.core.stats import target_half_width_pp
from schema.problem import Problem


def note(out: Outcome, prec: str, source: str, int8_threshold: float | None = None,
         workload: dict | None = None, int8_outliers: dict | None = None) -> str:
    """`results.note` of the report of PREC: what is partial or set aside, and what the numbers are of.
    WORKLOAD (the record's) names the weights and any planted outliers; INT8_OUTLIERS is the INT8 arm's
    outlier-column probe, absent from records made before it (whose notes stay as they were)."""
    parts = []
    plant = (workload or {}).get("outlier_plant")
    if plant:
        parts.append(
            f"planted outlier features: {plant['dims']} hidden dims of every decoder layer's two RMSNorm "
            f"weights set to {plant['scale']:g} (--outlier-dims): a sensitivity condition, not a published "
            "model's weights, never graded"
        )
    if source == "simulated":
        parts.append("simulated power source (tests/demo): not a measurement")
    if out.interrupted:
        parts.append("interrupted before the protocol finished: partial data, not a measurement")
    if out.power_error:
        parts.append(f"{out.power_error}; the run stopped there: partial data, not a measurement")
    if out.faults.get("counter_stalls"):
        parts.append(
            f"energy counter stopped advancing in {out.faults['counter_stalls']} windows: "
            "their energy is the power trace's (see the trials' reason)"
        )
    if out.faults.get("trace_gaps"):
        parts.append(
            f"power trace has gaps in {out.faults['trace_gaps']} windows (longest "
            f"{out.faults['max_trace_gap_s']} s): their energy is the counter's"
        )
    if prec in out.failed:
        parts.append(f"{prec} arm failed: {out.failed[prec]}")
    if "FP16" in out.failed and prec != "FP16":
        parts.append(f"FP16 baseline failed: {out.failed['FP16']}")
    if prec == "INT8" and int8_threshold == 0.0:
        parts.append(
            "INT8 with llm_int8_threshold=0: bitsandbytes' vector-wise int8 matmul with no outlier "
            "decomposition, not LLM.int8() (no FP16 outlier columns; needed for CUDA-graph capture)"
        )
    if prec == "INT8" and int8_outliers:
        parts.append(int8_scope(int8_outliers, (workload or {}).get("weights"), bool(plant)))
    cfg = out.config
    parts.append(
        f"results and statistics: energy per generated token of {cfg.block_tokens}-token greedy generations "
        "(paired per block"
        + (f"; each generation made in {cfg.chunk_tokens}-token chunks, the block's generations taking turns "
           "chunk by chunk" if cfg.chunk_tokens else "")
        + f"); phases: reconstructed to {cfg.tokens}-token generations from prefill + decode "
        "energy, with a direct check"
    )
    return "; ".join(parts)


def int8_scope(probe: dict, weights: str | None, planted: bool) -> str:
    """What the INT8 figure covers, from the outlier-column probe: the share of int8 input columns that
    went to LLM.int8()'s FP16 product, and, for unplanted random-init weights, what that leaves out."""
    if "columns_fraction" not in probe:
        return f"INT8 outlier-column probe failed ({probe.get('error', 'no result')})"
    cols, layers = probe["columns_fraction"], probe["layers_with_outliers_fraction"]
    text = (
        f"LLM.int8() outlier columns, measured over {probe['decode_steps']} decode steps after the blocks: "
        f"{cols * 100:.3g} % of the int8 layers' input columns reached the threshold"
        + (f" {probe['threshold']:g}" if isinstance(probe.get("threshold"), (int, float)) else "")
        + f" ({layers * 100:.3g} % of int8 layers per step had any)"
    )
    if weights == "random-init" and not planted:
        text += (
            "; random-init weights lack the systematic outlier features of real checkpoints (Dettmers et al. "
            "2022: a few hidden dims >= 6 in most tokens, in every layer from 6.7B parameters), so this INT8 "
            "figure "
            "covers LLM.int8() with "
            + ("no" if cols == 0 else "almost no" if cols < 1e-3 else "few")
            + " FP16 outlier columns, not the mixed-precision work a real model's outliers add"
        )
    return text


def findings(record: dict, out: Outcome, analysis: dict) -> list[Problem]:
    """What the run's record shows went wrong or was set aside, one Problem each (QJ4xx)."""
    found = []
    src, smp = record["source"], record["sampler"]
    if smp["dropped"] > 0.01 * max(1, smp["samples"]):
        found.append(problem("QJ406", f"{smp['dropped']} power samples dropped"))
    if out.timeouts:
        found.append(problem("QJ405", f"cooldown timed out {out.timeouts} times"))
    if src["measurement_source"] == "nvml-power-trace":
        found.append(problem("QJ411", "no energy counter; energies from the power trace"))
    if src["power_field"] == "nvmlDeviceGetPowerUsage":
        found.append(
            problem("QJ412", "instant power field unsupported; nvmlDeviceGetPowerUsage may be a 1 s average")
        )
    agree_max = analysis["agreement"]["counter_vs_trace_max_pct"]
    if agree_max is not None and agree_max > AGREEMENT_THRESHOLD_PCT:
        found.append(problem("QJ407", f"counter and trace disagree by up to {agree_max:.2f} % on a trial"))
    found += wide_intervals(analysis)
    for arm, reason in out.failed.items():
        found.append(problem("QJ403", f"{arm}: {reason}"))
    if out.interrupted:
        found.append(problem("QJ404", "interrupted; partial reports written, not measurements"))
    if out.power_error:
        found.append(problem("QJ414", f"{out.power_error}; partial reports written, not measurements"))
    if out.faults.get("counter_stalls"):
        found.append(problem(
            "QJ415",
            f"the energy counter stopped advancing ({out.faults['counter_stalls']} windows "
            "fell back to the power trace)",
        ))
    if out.faults.get("trace_gaps"):
        found.append(problem(
            "QJ406",
            f"power trace gaps in {out.faults['trace_gaps']} windows, longest "
            f"{out.faults['max_trace_gap_s']} s (energy from the counter there)",
        ))
    return found


def wide_intervals(analysis: dict) -> list[Problem]:
    """QJ421 for each quantized arm whose paired ΔE% interval is wider than its target, max(3 pp, 5 %),
    with how far FP16's time per token moved between its trials: on a host whose launch speed wanders
    (batch-1 eager decode waits on it) that, not the GPU, is what widens the interval."""
    fp16 = [1000.0 * r["duration_s"] / r["tokens"] for r in analysis["records"]
            if r["arm"] == "FP16" and r["status"] == "ok" and r.get("tokens") and r.get("duration_s")]
    speed = ""
    if len(fp16) >= 2:
        cv = 100.0 * st.stdev(fp16) / st.fmean(fp16)
        if cv > 5.0:
            speed = (f"; FP16 took {min(fp16):.1f}–{max(fp16):.1f} ms per token across its trials "
                     f"(cv {cv:.0f} %): the host's speed moved between blocks")
    found = []
    for arm, s in sorted(analysis["statistics"].items()):
        d = s.get("delta_e_pct") or {}
        half, mean = d.get("ci95_half_width_pp"), d.get("mean")
        if half is None or mean is None or half <= target_half_width_pp(mean):
            continue
        found.append(problem("QJ421", f"{arm}: ΔE% {mean:+.1f} ± {half:.1f} pp over {s['n_pairs']} blocks, "
                                      f"wider than its target ± {target_half_width_pp(mean):.1f} pp{speed}"))
    return found


def condition_text(report: dict) -> str:
    """The measured condition in one line, from the fields that carry it (what the grader compares)."""
    wl, sut = report["workload"], report["system_under_test"]
    text = (
        f"{sut.get('gpu_arch')} {wl['precision']}, {wl['backend']} backend, batch {wl['batch_size']}, "
        f"{report['measurement']['tokens_per_run']}-token generations"
    )
    if "int8_outlier_threshold" in wl:
        text += f", llm_int8_threshold {wl['int8_outlier_threshold']:g}"
    if wl.get("outlier_plant"):
        text += f", planted outliers {wl['outlier_plant']['dims']} dims x {wl['outlier_plant']['scale']:g}"
    return text
