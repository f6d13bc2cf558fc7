"""The v2 report (quantjoule-energy/2.0) of one precision, built from an attributed Outcome."""

from __future__ import annotations

import json
import math

from measure import __version__
from measure.core.analysis import energy_of
from measure.core.stats import delta_pct
from schema.limits import COUNTER_TRACE_MAX_PCT
from schema.parse import MAX_REPORT_BYTES

TOOL = {"name": "quantjoule-measure", "version": __version__}
# the counter-vs-trace threshold a report states: the most the validator accepts in a measured report
AGREEMENT_THRESHOLD_PCT = COUNTER_TRACE_MAX_PCT


def round_floats(x, digits: int = 6):
    """Floats to `digits` significant figures so reports are compact and byte-stable."""
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        return float(f"{x:.{digits}g}")
    if isinstance(x, dict):
        return {k: round_floats(v, digits) for k, v in x.items()}
    if isinstance(x, list):
        return [round_floats(v, digits) for v in x]
    return x


def _summary(s: dict | None) -> dict | None:
    if not s or s.get("n", 0) == 0:
        return None
    keys = ("median", "mean", "sd", "cv", "ci95_low", "ci95_high", "ci95_half_width_pp")
    out = {k: s.get(k) for k in keys}
    if out["cv"] is not None:
        out["cv"] = abs(out["cv"])
    return out


def _trial(r: dict) -> dict:
    if r["status"] != "ok":
        return {
            "block": r["block"],
            "arm": r["arm"],
            "counter_energy_j": None,
            "trace_energy_j": None,
            "duration_s": None,
            "tokens": None,
            "status": "failed",
            "reason": r.get("reason") or "arm failed",
        }
    keys = (
        "block",
        "arm",
        "counter_energy_j",
        "trace_energy_j",
        "duration_s",
        "tokens",
        "mean_power_w",
        "start_temp_c",
        "idle_power_w",
        "dynamic_energy_j",
        "status",
    )
    rec = {k: r.get(k) for k in keys}
    if r.get("reason"):  # an ok trial whose energy source was set aside says which and why
        rec["reason"] = r["reason"]
    return rec


def _arm(summary: dict, weight_bytes: int | None, bandwidth_gb_s: float | None, batch: int = 1) -> dict:
    """One arm's block. The roofline bound is batch × bandwidth / weight bytes: each decode step reads
    the weights once for all batch_size sequences (KV-cache reads are left out, so at large batches and
    long contexts the bound is optimistic and the achieved fraction a lower bound)."""
    if summary.get("status") == "unavailable" or "block_energy_per_token_mj" not in summary:
        return {
            "energy_per_token_mj": None,
            "throughput_tokens_per_s": None,
            "status": "unavailable",
            "reason": summary.get("reason") or "no completed trials",
        }
    bound = bandwidth_gb_s * 1e9 / weight_bytes * batch if (bandwidth_gb_s and weight_bytes) else None
    tput = summary["throughput_tokens_per_s"]
    failed = summary.get("status") == "failed"
    return {
        "energy_per_token_mj": summary["block_energy_per_token_mj"],
        "dynamic_energy_per_token_mj": summary["dynamic_energy_j"] / summary["tokens"] * 1000,
        "throughput_tokens_per_s": tput,
        "mean_power_w": summary["mean_power_w"],
        "prefill_energy_j": summary.get("prefill_energy_j"),
        "decode_energy_per_token_mj": summary.get("decode_energy_per_token_mj"),
        "weight_bytes": weight_bytes,
        "roofline_bound_tokens_per_s": bound,
        "roofline_achieved_fraction": (tput / bound) if bound else None,
        "status": "unavailable" if failed else "ok",
        "reason": summary.get("reason")
        if failed
        else (None if bound else "no datasheet bandwidth for this GPU"),
    }


def build_report(ctx: dict, out, analysis: dict, precision: str) -> dict:
    """One report: `precision` (NF4/INT8, or FP16 for a baseline-only run) against FP16."""
    cfg = out.config
    arms_in = ["FP16"] if precision == "FP16" else ["FP16", precision]
    recs = [r for r in analysis["records"] if r["arm"] in arms_in]
    summaries = analysis["arms"]

    def totals(arm):
        ok = [r for r in recs if r["arm"] == arm and r["status"] == "ok"]
        e = sum(energy_of(r) for r in ok)
        return (
            e,
            sum(r["dynamic_energy_j"] for r in ok),
            sum(r["duration_s"] for r in ok),
            sum(r["tokens"] for r in ok),
        )

    e_q, dyn_q, dur_q, tok_q = totals(precision)
    e_f, dyn_f, dur_f, tok_f = totals("FP16")
    complete = (
        not out.interrupted
        and out.power_error is None
        and precision not in out.failed
        and "FP16" not in out.failed
        and tok_q > 0
        and tok_f > 0
    )
    source = ctx["measurement_source"]
    basis = "measured" if complete and source.startswith("nvml") else "unavailable"
    if source == "simulated":
        basis = "unavailable"
    ept = e_q / tok_q * 1000 if tok_q else None
    fp16_ept = e_f / tok_f * 1000 if tok_f else None
    base = precision == "FP16"
    workload = {**ctx["workload"], "precision": precision, "new_tokens": cfg.tokens}
    if precision == "INT8" and ctx.get("int8_outlier_threshold") is not None:
        # what "INT8" meant in this run, as loaded: 6.0 is LLM.int8(); 0.0 has no outlier decomposition
        workload["int8_outlier_threshold"] = ctx["int8_outlier_threshold"]
    probe = ctx.get("int8_outliers") or {}
    if precision == "INT8" and "columns_fraction" in probe:
        # measured after the blocks, over a few decode steps: how much of LLM.int8()'s FP16 outlier
        # product these weights exercised (random-init weights: about none)
        workload["int8_outlier_columns_fraction"] = probe["columns_fraction"]
        workload["int8_layers_with_outliers_fraction"] = probe["layers_with_outliers_fraction"]
    results = {
        "energy_per_token_mj": ept,
        "fp16_energy_per_token_mj": None if base else fp16_ept,
        "vs_fp16_energy_pct": None if base or not (ept and fp16_ept) else delta_pct(ept, fp16_ept),
        "avg_power_watts": e_q / dur_q if dur_q else None,
        "throughput_tokens_per_s": tok_q / dur_q if dur_q else None,
        "total_energy_joules": e_q or None,
        "tokens_generated": tok_q or None,
        "basis": basis,
        "note": ctx["notes"].get(precision, ""),
        "dynamic_energy_per_token_mj": dyn_q / tok_q * 1000 if tok_q else None,
        "fp16_dynamic_energy_per_token_mj": None if base or not tok_f else dyn_f / tok_f * 1000,
        "vs_fp16_dynamic_energy_pct": None
        if base or not (tok_q and tok_f and dyn_f)
        else delta_pct(dyn_q / tok_q, dyn_f / tok_f),
        "fp16_throughput_tokens_per_s": None if base or not dur_f else tok_f / dur_f,
        "duration_s": dur_q or None,
    }
    stats = analysis["statistics"].get(precision)
    agreement = analysis["agreement"]
    sut = ctx["system_under_test"]
    rep = {
        "schema_version": "quantjoule-energy/2.0",
        "benchmark": "quantjoule",
        "scenario": "SingleStream" if cfg.batch_size == 1 else "Offline",
        "certified_benchmark_result": False,
        "timestamp_utc": ctx["timestamp_utc"],
        "tool": dict(TOOL),
        "system_under_test": sut,
        "workload": workload,
        "measurement": {
            "method": ctx["method"],
            "sample_rate_hz": int(round(ctx["sample_rate_hz"])),
            "tokens_per_run": cfg.block_tokens,
            "iterations": len(out.blocks) * 2 * cfg.window_reps * cfg.block_rounds,
            "warmup": cfg.warmup_runs,
        },
        "measurement_source": source,
        "results": results,
        "protocol": {
            "design": "interleaved-blocks",
            "warmup_runs": cfg.warmup_runs,
            "trials": len(out.blocks),
            "block_tokens": cfg.block_tokens,
            # absent = every generation made in one call (what every run before this option did)
            **({"chunk_tokens": cfg.chunk_tokens} if cfg.chunk_tokens else {}),
            "iterations_per_trial": 2 * cfg.window_reps * cfg.block_rounds,
            "arm_order": [[a for a in o[: len(set(o))] if a in arms_in] for o in out.orders],
            "seed": cfg.seed,
            # absent = even turns (what every run before this option did)
            **({"allocation": cfg.allocation} if cfg.allocation != "even" else {}),
            "cooldown": {
                "rule": "loaded-idle",
                "target_w": out.idle_power_loaded_w,
                "tolerance_w": cfg.cooldown_tolerance_w,
                "timeout_s": cfg.cooldown_timeout_s,
                "waits_s": out.waits_s,
                "timeouts": out.timeouts,
            }
            if out.idle_power_loaded_w  # never measured (interrupted while loading): no cooldown ran
            else {"rule": "none"},
            "idle_power_bare_w": out.idle_power_bare_w,
            "idle_power_loaded_w": out.idle_power_loaded_w,
            "idle_window_s": cfg.idle_window_s,
            "sample_rate_requested_hz": ctx["sample_rate_hz"],
            "sample_rate_achieved_hz": ctx["sample_rate_achieved_hz"],
            "dropped_samples": ctx["dropped_samples"],
            "sampler": ctx["sampler"],
            "power_field": ctx["power_field"],
        },
        "trials": [round_floats(_trial(r), 5) for r in recs],
        "statistics": None
        if base or not stats or stats["n_pairs"] == 0
        else {
            "n_pairs": stats["n_pairs"],
            "delta_e_pct": _summary(stats["delta_e_pct"]),
            "dynamic_delta_e_pct": _summary(stats["dynamic_delta_e_pct"]),
            "ci_method": stats["ci_method"],
        },
        "agreement": {
            "counter_vs_trace_median_pct": agreement["counter_vs_trace_median_pct"],
            "counter_vs_trace_max_pct": agreement["counter_vs_trace_max_pct"],
            "threshold_pct": AGREEMENT_THRESHOLD_PCT,
        },
        "arms": {
            a: _arm(
                summaries.get(a, {}),
                ctx["weight_bytes"].get(a),
                sut.get("datasheet_bandwidth_gb_s"),
                cfg.batch_size,
            )
            for a in arms_in
            if a in summaries
        },
        "phases": _phases(out, analysis, arms_in, precision),
        "quality": ctx["quality"].get(precision)
        or {"metric": "perplexity", "basis": "unavailable", "note": "quality probe not run (run incomplete)"},
        "software": ctx["software"],
        "provenance": ctx["provenance"],
    }
    return round_floats(rep)


def _phases(out, analysis: dict, arms_in: list[str], precision: str) -> dict:
    cfg = out.config
    s = analysis["arms"]
    per_token = "" if cfg.batch_size == 1 else f"; per generated token E / ({cfg.batch_size} x {cfg.tokens})"
    ph = {
        "method": "difference of two generation lengths: prefill P from bursts of generate(1) before and "
        f"after the blocks, decode d = (E({cfg.block_tokens}) - P) / {cfg.block_tokens - 1}; "
        f"E({cfg.tokens}) = P + {cfg.tokens - 1} d" + per_token,
        "short_tokens": 1,
        "block_tokens": cfg.block_tokens,
        "tokens": cfg.tokens,
        "reconstructed_energy_per_token_mj": {a: s[a].get("energy_per_token_mj") for a in arms_in if a in s},
        "reconstructed_dynamic_energy_per_token_mj": {
            a: s[a].get("dynamic_energy_per_token_mj") for a in arms_in if a in s
        },
        "counter_vs_trace_per_block_pct": analysis["agreement"]["per_block_pct"],
        "counter_vs_trace_per_trial_median_pct": analysis["agreement"]["per_trial_median_pct"],
        "counter_vs_trace_per_trial_max_pct": analysis["agreement"]["per_trial_max_pct"],
        "time_split_s": out.time_split_s,
    }
    if out.faults or out.power_error:
        ph["faults"] = {**out.faults, "power_source_error": out.power_error}
    direct = {
        a: {
            "energy_per_token_mj": s[a].get("direct_energy_per_token_mj"),
            "throughput_tokens_per_s": s[a].get("direct_throughput_tokens_per_s"),
        }
        for a in arms_in
        if a in s and s[a].get("direct_energy_per_token_mj")
    }
    if direct:
        ph["direct_check"] = direct
        if precision != "FP16" and precision in direct and "FP16" in direct:
            ph["direct_check_delta_e_pct"] = delta_pct(
                direct[precision]["energy_per_token_mj"], direct["FP16"]["energy_per_token_mj"]
            )
    stats = analysis["statistics"].get(precision)
    if stats:
        ph["reconstructed_delta_e_pct"] = _summary(stats["reconstructed"])
        ph["reconstructed_dynamic_delta_e_pct"] = _summary(stats["reconstructed_dynamic"])
        ph["per_block_reconstructed_delta_e_pct"] = stats["per_block_reconstructed"]
    return ph


_BULKY = ("counter_vs_trace_per_block_pct", "per_block_reconstructed_delta_e_pct")


def dumps(report: dict) -> str:
    """Deterministic JSON text that fits an issue body: indented, else compact, else without the
    per-block lists of `phases` (the trials keep every number needed to recompute them)."""
    text = json.dumps(report, indent=1, ensure_ascii=False) + "\n"
    if len(text.encode()) > MAX_REPORT_BYTES:
        text = json.dumps(report, separators=(",", ":"), ensure_ascii=False) + "\n"
    if len(text.encode()) > MAX_REPORT_BYTES and isinstance(report.get("phases"), dict):
        slim = {**report, "phases": {k: v for k, v in report["phases"].items() if k not in _BULKY}}
        text = json.dumps(slim, separators=(",", ":"), ensure_ascii=False) + "\n"
    return text
