"""Where a run's block-to-block scatter comes from: drift, or each generation's own jitter (no GPU needed).

A block runs FP16 and one quantized arm twice each, mirrored (F Q Q F or Q F F Q), so a host whose speed
drifts linearly across a block cancels out of its paired ΔE%. What pairing cannot remove is jitter from one
generation to the next. Each block holds two generations of each arm, so log(second / first) of one arm in
one block measures that jitter without any model of the host: if every generation's time carries an
independent relative error of sd j, log(second / first) has sd j·√2, and the block's paired log ratio
log((Q1 + Q2) / (F1 + F2)) has sd ≈ √(j_F² + j_Q²) / √2 = √(sd_F² + sd_Q²) / 2, with sd_F and sd_Q the
sds of the two log(second / first). When that prediction matches the paired scatter actually seen, the
blocks are as good as pairing can make them and only more blocks narrow the interval (ci_budget says how
many). Raw records are read because a report sums each arm's two generations of a block into one trial.

    python -m benchmarks.block_noise measurements/hopper-campaign
"""

from __future__ import annotations

import math
import statistics as st
from pathlib import Path

from measure.core.record import RAW_NAME, read

MIN_BLOCKS = 4  # below this an sd says little


def _durations(block: dict, arm: str) -> list[float]:
    return [w["end_s"] - w["start_s"] for w in block["windows"] if w["arm"] == arm]


def arm_noise(blocks: list[dict], arm: str) -> dict | None:
    """Scatter of one quantized arm's blocks (FP16 and `arm`, two generations each), in % (log × 100)."""
    f_lr, q_lr, pair = [], [], []
    for block in blocks:
        if arm not in block["order"]:
            continue
        f, q = _durations(block, "FP16"), _durations(block, arm)
        if len(f) != 2 or len(q) != 2 or min(f + q) <= 0:
            continue
        f_lr.append(math.log(f[1] / f[0]))
        q_lr.append(math.log(q[1] / q[0]))
        pair.append(math.log(sum(q) / sum(f)))
    if len(pair) < MIN_BLOCKS:
        return None
    sd_f, sd_q = st.stdev(f_lr), st.stdev(q_lr)
    return {
        "arm": arm,
        "blocks": len(pair),
        "paired_sd_pct": round(100 * st.stdev(pair), 1),
        "fp16_jitter_pct": round(100 * sd_f / math.sqrt(2), 1),
        "quant_jitter_pct": round(100 * sd_q / math.sqrt(2), 1),
        "predicted_sd_pct": round(100 * math.sqrt(sd_f**2 + sd_q**2) / 2, 1),
    }


def collect(folders: list[Path]) -> list[dict]:
    """One row per run and quantized arm whose blocks hold two whole generations of each arm."""
    rows = []
    for folder in folders:
        for path in sorted(folder.glob(f"*/{RAW_NAME}")):
            blocks = read(path).get("outcome", {}).get("blocks") or []
            arms = sorted({a for b in blocks for a in b["order"] if a != "FP16"})
            for arm in arms:
                row = arm_noise(blocks, arm)
                if row is not None:
                    rows.append({"run": f"{folder.name}/{path.parent.name}", **row})
    return rows


def pooled_ratio(rows: list[dict]) -> tuple[float, int] | None:
    """Paired scatter seen over the scatter per-generation jitter predicts, pooled over runs (each weighted
    by its blocks - 1 degrees of freedom), and those degrees of freedom; rows with no jitter at all (CUDA
    graphs) are left out."""
    rows = [r for r in rows if r["predicted_sd_pct"] > 0]
    seen = sum((r["blocks"] - 1) * r["paired_sd_pct"] ** 2 for r in rows)
    predicted = sum((r["blocks"] - 1) * r["predicted_sd_pct"] ** 2 for r in rows)
    return (math.sqrt(seen / predicted), sum(r["blocks"] - 1 for r in rows)) if predicted else None


def table(rows: list[dict]) -> str:
    lines = ["| run | arm | blocks | paired sd % | FP16 jitter % | quantized jitter % | predicted sd % |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['run']} | {r['arm']} | {r['blocks']} | {r['paired_sd_pct']} | {r['fp16_jitter_pct']} | "
              f"{r['quant_jitter_pct']} | {r['predicted_sd_pct']} |" for r in rows]
    return "\n".join(lines)


def footer(rows: list[dict]) -> str:
    """The pooled ratio per quantized arm, with its degrees of freedom."""
    lines = []
    for arm in sorted({r["arm"] for r in rows}):
        pooled = pooled_ratio([r for r in rows if r["arm"] == arm])
        if pooled is not None:
            ratio, dof = pooled
            lines.append(f"{arm}: paired sd seen / predicted from per-generation jitter = {ratio:.2f} "
                         f"({dof} dof)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.folder_table import run

    return run(__doc__.split("\n\n")[0], argv, collect, table, footer)


if __name__ == "__main__":
    raise SystemExit(main())
