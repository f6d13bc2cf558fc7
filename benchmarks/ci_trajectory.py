"""How the 95 % interval of dE% narrowed over a run, from its raw record (no GPU needed).

For each quantized precision, the paired-block CI half-width after every block, against seconds since
the run's first power sample (the sampler starts before the bare-idle reading and the model loads, so
this is measurement wall time), and from which block on it stayed within the target max(3 pp, 5 % of
|dE%|) to the end of the run (a first crossing after two or three blocks is luck, not precision).

    python -m benchmarks.ci_trajectory measurements/h200-protocol-2026-12-02/*/energy-raw.json.gz
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def trajectory(record: dict) -> dict:
    from measure.core.analysis import analyse, subset
    from measure.core.record import recorded_trace, replay
    from measure.core.stats import summarise, target_half_width_pp

    out = replay(record)
    t0 = recorded_trace(record)[0][0]
    result = {}
    for prec in (a for a in out.arms if a != "FP16"):
        part = subset(out, prec)
        deltas = analyse(part)["statistics"][prec]["per_block"]
        ends = [max(w.end_s for w in b["windows"]) - t0 for b in part.blocks if b["windows"]]
        points, reached = [], None
        for k in range(2, min(len(deltas), len(ends)) + 1):
            s = summarise(deltas[:k])
            half, target = s["ci95_half_width_pp"], target_half_width_pp(s["mean"])
            points.append([round(ends[k - 1], 1), k, round(s["mean"], 2), round(half, 2)])
            if half > target:
                reached = None
            elif reached is None:
                reached = {"seconds": round(ends[k - 1], 1), "blocks": k, "half_width_pp": round(half, 2)}
        final = summarise(deltas)
        result[prec] = {
            "blocks": len(deltas),
            "final_mean_pct": round(final["mean"], 2) if final["mean"] is not None else None,
            "final_half_width_pp": None
            if final["ci95_half_width_pp"] is None
            else round(final["ci95_half_width_pp"], 2),
            "target_pp": round(target_half_width_pp(final["mean"]), 2) if final["mean"] is not None else None,
            "target_met_from": reached,
            "points": points,
        }
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--points", action="store_true", help="print every block's point too")
    args = ap.parse_args()
    from measure.core.record import read

    for path in args.records:
        res = trajectory(read(path))
        if not args.points:
            res = {k: {kk: vv for kk, vv in v.items() if kk != "points"} for k, v in res.items()}
        print(json.dumps({"record": str(path), **res}))


if __name__ == "__main__":
    main()
