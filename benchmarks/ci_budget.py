"""What the CI target would cost: for each committed run, the blocks and device seconds that would bring its
ΔE% interval to max(3 pp, 5 % of |ΔE%|), projected from its own blocks (no GPU needed).

A run's per-block paired ΔE% has sd s over n blocks; with more blocks from the same host the t interval
shrinks as t(n-1)·s/√n, so the target needs the least n with t(n-1)·s/√n ≤ target. Each block costs what the
run's blocks cost (its trials' seconds over its blocks; cooldown, model load and warm-up not counted, so
this is a lower bound of the call time). s from four or five blocks is itself uncertain by about ±35-50 %
(a chi distribution with 3-4 dof), so the projection is an order of magnitude, not a schedule.

    python -m benchmarks.ci_budget measurements/hopper-campaign measurements/hopper-batch
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks.cells import condition

MAX_BLOCKS = 100_000  # past this the answer is "never", whatever the exact count


def blocks_needed(sd_pp: float, target_pp: float) -> int:
    """The least n ≥ 2 with t975(n-1)·sd/√n ≤ target (MAX_BLOCKS when even that many do not reach it)."""
    from schema.recompute import t975

    if sd_pp <= 0:
        return 2
    # t975 is at least 1.96, so n below (1.96·sd/target)² cannot reach the target: start the search there
    n = min(MAX_BLOCKS, max(2, math.floor((1.96 * sd_pp / target_pp) ** 2)))
    while n < MAX_BLOCKS and t975(n - 1) * sd_pp / math.sqrt(n) > target_pp:
        n += 1
    return n


def projection(report: dict) -> dict | None:
    """The projection for one report, or None when it has no paired interval (fewer than 2 blocks)."""
    from measure.core.stats import target_half_width_pp

    stats = report.get("statistics") or {}
    delta = stats.get("delta_e_pct") or {}
    n, sd, half = stats.get("n_pairs"), delta.get("sd"), delta.get("ci95_half_width_pp")
    obs = (report.get("results") or {}).get("vs_fp16_energy_pct")
    if not isinstance(n, int) or n < 2 or sd is None or half is None or obs is None:
        return None
    trials = [t for t in report.get("trials") or [] if t.get("status") == "ok"]
    block_s = sum(t["duration_s"] for t in trials) / n
    target = target_half_width_pp(obs)
    need = blocks_needed(sd, target)
    wl = report.get("workload") or {}
    return {
        "model": wl.get("model_name"),
        "params_b": wl.get("params_b"),
        "precision": wl.get("precision"),
        "backend": wl.get("backend") or "eager",
        "batch": wl.get("batch_size") or 1,
        "chunk_tokens": (report.get("protocol") or {}).get("chunk_tokens"),
        "delta_e_pct": round(obs, 1),
        "blocks": n,
        "half_width_pp": round(half, 1),
        "target_pp": round(target, 1),
        "met": half <= target,
        "block_s": round(block_s, 1),
        "blocks_needed": need,
        "seconds_needed": None if need >= MAX_BLOCKS else round(need * block_s),
    }


def collect(folders: list[Path]) -> list[dict]:
    """Every whole-generation report under the folders (one per run folder and precision), projected."""
    rows = []
    for folder in folders:
        for path in sorted(folder.glob("*/energy*.json")):
            report = json.loads(path.read_text())
            per_run = (report.get("measurement") or {}).get("tokens_per_run")
            if per_run != (report.get("phases") or {}).get("tokens"):
                continue  # shorter generations reconstructed to 256: not the graded quantity
            row = projection(report)
            if row is not None:
                rows.append({"run": f"{folder.name}/{path.parent.name}", **row})
    order = lambda r: (r["backend"], r["batch"], r["precision"], r["params_b"] or 0.0, r["run"])  # noqa: E731
    return sorted(rows, key=order)


def table(rows: list[dict]) -> str:
    head = ("| run | condition | ΔE% | ± now (blocks) | target | s per block | blocks to target | "
            "device time to target |")
    lines = [head, "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        secs = r["seconds_needed"]
        time_text = "never" if secs is None else f"{secs / 60:.0f} min" if secs >= 600 else f"{secs} s"
        lines.append(
            f"| {r['run']} | {condition(r)} | {r['delta_e_pct']:+.1f} | "
            f"{r['half_width_pp']} ({r['blocks']}) | {r['target_pp']} | {r['block_s']} | "
            f"{r['blocks_needed']}{' (met)' if r['met'] else ''} | {time_text} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.folder_table import run

    return run(__doc__.split("\n\n")[0], argv, collect, table)


if __name__ == "__main__":
    raise SystemExit(main())
