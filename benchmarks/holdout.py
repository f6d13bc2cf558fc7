"""Leave-one-run-out check of the grader on the project's own runs (see curves/holdout.py).

    python -m benchmarks.holdout [--anchors reference/anchors-quantjoule-hopper.csv]

Prints each held-out run's verdict against the refit without it, and per precision the false-contradiction
rate (target 5 %), the power to detect the goal difference (NF4 12 pp, INT8 25 pp) and the largest
minimum detectable difference; the column "at target" is the MDD the same run would get had its interval
met the measurement's target, max(3 pp, 5 % of |ΔE%|): the reference's share, what a tight submission gets.
With one run per precision nothing can be held out: it says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from curves.anchors import read_anchors
from curves.holdout import leave_one_run_out, summarise
from curves.store import DEFAULT_ANCHORS_PATH
from measure.core.stats import target_half_width_pp

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchors", type=Path, default=ROOT / "reference" / "anchors-quantjoule-hopper.csv")
    a = ap.parse_args(argv)
    runs = read_anchors(a.anchors)
    reports = {r["report"]: json.loads((ROOT / r["report"]).read_text(encoding="utf-8")) for r in runs}
    results = leave_one_run_out(read_anchors(DEFAULT_ANCHORS_PATH), runs, reports, target_half_width_pp)
    print(f"{'held-out run':<62} {'label':<13} {'z':>6} {'MDD pp':>7} {'at target':>9} goal detected")
    for r in results:
        z = "—" if r["z"] is None else f"{r['z']:+.2f}"
        mdd = "—" if r["mdd_pp"] is None else f"{r['mdd_pp']:.1f}"
        tight = "—" if r["mdd_at_target_pp"] is None else f"{r['mdd_at_target_pp']:.1f}"
        print(f"{r['report']:<62} {r['label']:<13} {z:>6} {mdd:>7} {tight:>9} {r['goal_pp']:>4.0f} "
              f"{r['detected']}/{r['moved_graded']}" + (f"  ({r['reason']})" if r["reason"] else ""))
    for prec, s in sorted(summarise(results).items()):
        fcr = "—" if s["false_contradiction_rate"] is None else f"{100 * s['false_contradiction_rate']:.1f} %"
        pw = "—" if s["power"] is None else f"{100 * s['power']:.1f} %"
        print(f"{prec}: {s['runs']} runs, {s['graded']} graded when held out; false contradictions {fcr}; "
              f"power at the goal {pw}; largest MDD {s['max_mdd_pp']}, "
              f"{s['max_mdd_at_target_pp']} at the target interval")
    return 0


if __name__ == "__main__":
    sys.exit(main())
