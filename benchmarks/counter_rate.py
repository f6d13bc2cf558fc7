"""Does reading NVML's energy counter on every sampler tick matter? Replays raw records with fewer reads.

Each record is replayed as recorded and with the counter kept on every 5th and every 10th tick only
(the other readings dropped), and the per-trial counter-vs-trace agreement and the paired dE% compared.
No GPU needed.

    python -m benchmarks.counter_rate measurements/h200-protocol-2026-12-02/*/energy-raw.json.gz
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path


def thinned(record: dict, every: int) -> dict:
    out = copy.deepcopy(record)
    out["trace"]["energy_mj"] = [
        v if i % every == 0 else None for i, v in enumerate(out["trace"]["energy_mj"])
    ]
    return out


def compare(record: dict, everies=(1, 5, 10)) -> dict:
    from measure.core.analysis import analyse, subset
    from measure.core.record import replay

    rows: dict[str, list] = {}
    for every in everies:
        out = replay(thinned(record, every))
        for prec in (a for a in out.arms if a != "FP16"):
            a = analyse(subset(out, prec))
            stats = a["statistics"][prec]
            if not stats["n_pairs"]:
                continue
            rows.setdefault(prec, []).append(
                {
                    "counter_every": every,
                    "trial_max_pct": round(a["agreement"]["counter_vs_trace_max_pct"], 2),
                    "trial_median_pct": round(a["agreement"]["counter_vs_trace_median_pct"], 2),
                    "delta_e_pct": round(stats["delta_e_pct"]["mean"], 2),
                    "ci95_half_width_pp": round(stats["delta_e_pct"]["ci95_half_width_pp"], 2),
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", type=Path)
    args = ap.parse_args()
    from measure.core.record import read

    for path in args.records:
        print(json.dumps({"record": str(path), **compare(read(path))}))


if __name__ == "__main__":
    main()
