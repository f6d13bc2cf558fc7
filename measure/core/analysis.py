"""Pure analysis of a protocol Outcome: trial records, paired dE% statistics, per-arm summaries."""

from __future__ import annotations

import statistics as st
from dataclasses import replace

from measure.core.energy import disagreement_pct, dynamic_j, reconstruct_per_token_j
from measure.core.outcome import Outcome
from measure.core.stats import delta_pct, summarise

CI_METHOD = {
    "paired": "t interval (n-1 dof) over per-block paired dE%; each block runs FP16 and this arm twice "
    "each, in a seeded order and its mirror (F Q Q F or Q F F Q), so blocks are independent and linear "
    "drift inside a block cancels",
    "all": "t interval (n-1 dof) over per-block paired dE%; each block runs every arm twice in a "
    "seeded shuffled order and its mirror (A B C C B A), so blocks are independent and linear "
    "drift inside a block cancels",
}


def subset(out: Outcome, precision: str) -> Outcome:
    """The blocks one report stands on: those holding `precision` (every block for FP16 alone).

    A paired run compares FP16 with NF4 in some blocks and with INT8 in others; each report's FP16
    numbers come from its own blocks only, so its ratio is the one its CI is about."""
    if precision == "FP16":
        return out
    blocks = [b for b in out.blocks if precision in b["order"]]
    arms = [a for a in out.arms if a in ("FP16", precision)]
    return replace(out, blocks=blocks, orders=[b["order"] for b in blocks], arms=arms)


def trial_records(out: Outcome) -> list[dict]:
    """One record per arm per block (its two generations summed)."""
    idle = out.idle_power_loaded_w or 0.0
    recs = []
    for blk in out.blocks:
        per: dict[str, dict] = {}
        for w in blk["windows"]:
            r = per.setdefault(
                w.arm,
                {
                    "counter": 0.0,
                    "trace": 0.0,
                    "dur": 0.0,
                    "tokens": 0,
                    "gens": 0,
                    "windows": 0,
                    "has_counter": True,
                    "has_trace": True,
                    "notes": [],
                    "faults": [],
                },
            )
            # one window without a counter reading sends the whole trial to the trace, never a partial sum
            r["has_counter"] &= w.counter_j is not None
            r["has_trace"] &= w.trace_j is not None
            r["counter"] += w.counter_j or 0.0
            r["trace"] += w.trace_j or 0.0
            r["dur"] += w.end_s - w.start_s
            r["tokens"] += w.tokens
            r["gens"] += w.generations
            r["windows"] += 1
            r["notes"] += [n for n in w.notes if n not in r["notes"]]
            if w.fault:
                r["faults"].append(w.fault)
        # a chunked block has one window per chunk of each of its generations
        chunks = out.config.block_tokens // out.config.chunk_tokens if out.config.chunk_tokens else 1
        for arm in blk["order"][: len(set(blk["order"]))]:
            r = per.get(arm)
            missing = r is None or r["windows"] < blk["order"].count(arm) * chunks
            if missing or r["faults"] or not (r["has_counter"] or r["has_trace"]):
                why = r["faults"][0] if r and r["faults"] else out.failed.get(arm, "generation missing")
                recs.append({"block": blk["block"], "arm": arm, "status": "failed", "reason": why})
                continue
            energy = r["counter"] if r["has_counter"] else r["trace"]
            rec = {
                "block": blk["block"],
                "arm": arm,
                "counter_energy_j": r["counter"] if r["has_counter"] else None,
                "trace_energy_j": r["trace"] if r["has_trace"] else None,
                "duration_s": r["dur"],
                "tokens": r["tokens"],
                "generations": r["gens"],
                "mean_power_w": energy / r["dur"] if r["dur"] > 0 else None,
                "start_temp_c": blk["temps_c"].get(arm),
                "idle_power_w": blk["idle_power_w"],
                "dynamic_energy_j": dynamic_j(energy, idle, r["dur"]),
                "status": "ok",
            }
            if r["notes"]:
                rec["reason"] = "; ".join(r["notes"])
            recs.append(rec)
    return recs


def energy_of(rec: dict) -> float:
    return rec["counter_energy_j"] if rec.get("counter_energy_j") is not None else rec["trace_energy_j"]


def prefill_j(out: Outcome, arm: str) -> tuple[float, float] | None:
    """(total, dynamic) prefill energy per generate(1) call, or None if not measured."""
    p = out.prefill.get(arm)
    if not p or p["reps"] == 0:
        return None
    e = p["energy_j"] / p["reps"]
    d = dynamic_j(p["energy_j"], out.idle_power_loaded_w or 0.0, p["duration_s"]) / p["reps"]
    return e, d


def _per_token(out: Outcome, rec: dict, dynamic: bool) -> float | None:
    cfg = out.config
    pf = prefill_j(out, rec["arm"])
    if pf is None and cfg.block_tokens != cfg.tokens:
        return None
    energy = rec["dynamic_energy_j"] if dynamic else energy_of(rec)
    per_gen = energy / rec["generations"]
    p = (pf[1] if dynamic else pf[0]) if pf else 0.0
    # a generation (and a prefill call) decodes batch_size sequences at once
    return reconstruct_per_token_j(per_gen, cfg.block_tokens, p, cfg.tokens) / cfg.batch_size


def paired_deltas(
    out: Outcome, recs: list[dict], quant: str, dynamic: bool = False, reconstruct: bool = False
) -> list[float]:
    """dE% per block between `quant` and FP16.

    Plain: energy per generated token of the block's own generations (what the trial records hold,
    and what the validator recomputes). reconstruct=True: per-token energy of a config.tokens-long
    generation rebuilt from the block and the prefill energy.
    """
    by = {(r["block"], r["arm"]): r for r in recs if r["status"] == "ok"}
    deltas = []
    for blk in out.blocks:
        a, b = by.get((blk["block"], quant)), by.get((blk["block"], "FP16"))
        if a is None or b is None:
            continue
        if reconstruct:
            ea, eb = _per_token(out, a, dynamic), _per_token(out, b, dynamic)
        else:
            key = "dynamic_energy_j" if dynamic else None
            ea = (a[key] if key else energy_of(a)) / a["tokens"]
            eb = (b[key] if key else energy_of(b)) / b["tokens"]
        if ea is not None and eb:
            deltas.append(delta_pct(ea, eb))
    return deltas


def block_agreement(out: Outcome) -> list[float]:
    """Counter-vs-trace disagreement (%) per block, all arms of the block together."""
    vals = []
    for blk in out.blocks:
        ws = blk["windows"]
        if not ws or any(w.counter_j is None or w.trace_j is None for w in ws):
            continue
        vals.append(disagreement_pct(sum(w.counter_j for w in ws), sum(blk["trace_j"])))
    return vals


def arm_summary(out: Outcome, recs: list[dict], arm: str) -> dict:
    """Totals over ok trials plus reconstruction, phase split and throughput for one arm."""
    cfg = out.config
    ok = [r for r in recs if r["arm"] == arm and r["status"] == "ok"]
    if not ok:
        return {"status": "unavailable", "reason": out.failed.get(arm, "no completed trials")}
    energy = sum(energy_of(r) for r in ok)
    dyn = sum(r["dynamic_energy_j"] for r in ok)
    dur = sum(r["duration_s"] for r in ok)
    tokens = sum(r["tokens"] for r in ok)
    gens = sum(r["generations"] for r in ok)
    pf = prefill_j(out, arm)
    s = {
        "total_energy_j": energy,
        "dynamic_energy_j": dyn,
        "duration_s": dur,
        "tokens": tokens,
        "block_energy_per_token_mj": energy / tokens * 1000,
        "mean_power_w": energy / dur,
        "throughput_tokens_per_s": tokens / dur,
        "status": "failed" if arm in out.failed else "ok",
        "reason": out.failed.get(arm),
    }
    if pf is not None or cfg.block_tokens == cfg.tokens:
        p, pd = pf if pf else (0.0, 0.0)
        batch = cfg.batch_size  # per generated token: a generation holds batch_size sequences
        s["energy_per_token_mj"] = (
            reconstruct_per_token_j(energy / gens, cfg.block_tokens, p, cfg.tokens) / batch * 1000
        )
        s["dynamic_energy_per_token_mj"] = (
            reconstruct_per_token_j(dyn / gens, cfg.block_tokens, pd, cfg.tokens) / batch * 1000
        )
        s["prefill_energy_j"] = p
        if cfg.block_tokens > 1:
            s["decode_energy_per_token_mj"] = (energy / gens - p) / (cfg.block_tokens - 1) / batch * 1000
    d = out.direct.get(arm)
    if d and d["tokens"]:
        s["direct_energy_per_token_mj"] = d["energy_j"] / d["tokens"] * 1000
        s["direct_throughput_tokens_per_s"] = d["tokens"] / d["duration_s"]
    return s


def analyse(out: Outcome) -> dict:
    """Records, per-arm summaries, and per-quantized-arm paired statistics."""
    recs = trial_records(out)
    arms = {a: arm_summary(out, recs, a) for a in out.arms}
    stats = {}
    for q in out.arms:
        if q == "FP16":
            continue
        total = paired_deltas(out, recs, q)
        dyn = paired_deltas(out, recs, q, dynamic=True)
        recon = paired_deltas(out, recs, q, reconstruct=True)
        stats[q] = {
            "n_pairs": len(total),
            "delta_e_pct": summarise(total),
            "dynamic_delta_e_pct": summarise(dyn),
            "ci_method": CI_METHOD[out.config.pairing],
            "per_block": total,
            "reconstructed": summarise(recon),
            "per_block_reconstructed": recon,
            "reconstructed_dynamic": summarise(paired_deltas(out, recs, q, True, True)),
        }
    agree = block_agreement(out)
    rec_agree = [
        disagreement_pct(r["counter_energy_j"], r["trace_energy_j"])
        for r in recs
        if r["status"] == "ok"
        and r.get("counter_energy_j") is not None
        and r.get("trace_energy_j") is not None
    ]
    agreement = {  # the headline is per trial (one arm in one block), the strictest unit reported
        "counter_vs_trace_median_pct": st.median(rec_agree) if rec_agree else None,
        "counter_vs_trace_max_pct": max(rec_agree) if rec_agree else None,
        "per_block_pct": agree,
        "per_trial_median_pct": st.median(rec_agree) if rec_agree else None,
        "per_trial_max_pct": max(rec_agree) if rec_agree else None,
    }
    return {"records": recs, "arms": arms, "statistics": stats, "agreement": agreement}
