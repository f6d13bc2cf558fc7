"""Leave one run out: each of the project's own runs graded against a curve refitted without it.

A simulation drawn from the grader's own model only checks its arithmetic. Real repeat runs carry what the
model may miss (other cards, hosts, days), so the false-contradiction rate is measured on them: every
run is held out in turn, the whole fit is redone on the rest (published rows included, so the pooled
scatter is the committed one), and the held-out report is graded by the real rule. Power: the same
report with its ΔE% moved by a stated difference, graded again. What a verdict can detect depends on the
submission's own interval as much as on the reference, so each run is also graded as if its interval had
met the measurement's target: that MDD is the reference's share, what a tight submission would get.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

from scipy.stats import t

from curves.fit import fit
from curves.grade import grade

# The smallest differences the Hopper verdicts are meant to detect (eager, 0.5-7 B).
GOAL_PP = {"NF4": 12.0, "INT8": 25.0}


def shifted(report: dict, by_pp: float) -> dict:
    """The report with results.vs_fp16_energy_pct moved by `by_pp` (its trials untouched: the grader
    reads the summary ΔE% and the paired sd only)."""
    out = copy.deepcopy(report)
    out["results"]["vs_fp16_energy_pct"] = out["results"]["vs_fp16_energy_pct"] + by_pp
    return out


def at_half_width(report: dict, half_width_pp: float) -> dict | None:
    """The report as if its n paired blocks had given a 95 % t interval of ±`half_width_pp` (the per-pair
    sd that interval implies; its ΔE% and n untouched), or None for a report without n ≥ 2 paired blocks."""
    stats = report.get("statistics") or {}
    n = stats.get("n_pairs")
    if not (isinstance(n, int) and n >= 2 and isinstance(stats.get("delta_e_pct"), dict)):
        return None
    out = copy.deepcopy(report)
    out["statistics"]["delta_e_pct"]["sd"] = half_width_pp * math.sqrt(n) / float(t.ppf(0.975, n - 1))
    return out


def leave_one_run_out(published: list[dict], runs: list[dict], reports: dict[str, dict],
                      target: Callable[[float], float] | None = None) -> list[dict]:
    """One entry per held-out run: its verdict against the refit, and against the refit with its ΔE%
    moved up and down by the precision's goal. `reports` maps a run row's `report` path to the report.
    With `target` (ΔE% -> the interval half-width the measurement aims at), also the MDD the same run
    would get had its interval met that target (`mdd_at_target_pp`, None for a run of fewer than 2 pairs)."""
    out = []
    for i, row in enumerate(runs):
        rest = [r for j, r in enumerate(runs) if j != i]
        curves = fit(published + rest, loo=False)  # a verdict reads no leave-one-out figure
        report = reports[row["report"]]
        v = grade(report, curves)
        goal = GOAL_PP.get(str(row["precision"]).upper(), 10.0)
        moved = [grade(shifted(report, s * goal), curves) for s in (1, -1)]
        tight = None
        if target is not None:
            at_target = at_half_width(report, target(report["results"]["vs_fp16_energy_pct"]))
            tight = None if at_target is None else grade(at_target, curves).min_detectable_pp
        out.append({
            "report": row["report"], "precision": row["precision"], "params_b": float(row["params_b"]),
            "label": v.label, "z": v.z, "reason": v.reason, "mdd_pp": v.min_detectable_pp, "goal_pp": goal,
            "mdd_at_target_pp": tight,
            "detected": sum(m.label == "contradiction" for m in moved), "moved_graded": sum(
                m.label in ("confirmation", "contradiction") for m in moved),
        })
    return out


def summarise(results: list[dict]) -> dict:
    """Per precision: graded runs, false contradictions among them, and detections of the goal shift."""
    out: dict[str, dict] = {}
    for r in results:
        s = out.setdefault(r["precision"], {"runs": 0, "graded": 0, "false_contradictions": 0,
                                            "shifted_graded": 0, "detected": 0, "mdd_pp": [],
                                            "mdd_at_target_pp": []})
        s["runs"] += 1
        if r["label"] in ("confirmation", "contradiction"):
            s["graded"] += 1
            s["false_contradictions"] += r["label"] == "contradiction"
            s["mdd_pp"].append(r["mdd_pp"])
            if r.get("mdd_at_target_pp") is not None:
                s["mdd_at_target_pp"].append(r["mdd_at_target_pp"])
        s["shifted_graded"] += r["moved_graded"]
        s["detected"] += r["detected"]
    for s in out.values():
        s["false_contradiction_rate"] = s["false_contradictions"] / s["graded"] if s["graded"] else None
        s["power"] = s["detected"] / s["shifted_graded"] if s["shifted_graded"] else None
        s["max_mdd_pp"] = max(s.pop("mdd_pp"), default=None)
        s["max_mdd_at_target_pp"] = max(s.pop("mdd_at_target_pp"), default=None)
    return out
