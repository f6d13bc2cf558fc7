"""Where in time does a value of NVML's instant power field belong? An offline check on raw records.

The sampler reads the power field every 10 ms; on an H200 the field refreshes every ~100 ms, so the
trace is a staircase. This script compares, for every refresh, the new value with the energy counter's
mean power over 100 ms intervals at several offsets from the moment the value changed, then integrates
each trial record (one arm's windows in one block) both ways, the staircase held from the reading that
first shows a value, and the values placed where they changed (`measure.core.energy.power_steps`, what
`measure run` uses), against the counter:

    python -m benchmarks.trace_alignment measurements/h200-protocol-2026-12-02b/*/energy-raw.json.gz
"""

from __future__ import annotations

import argparse
import json
import statistics as st

from measure.core.energy import counter_steps, counter_window_j, integrate_j, power_steps
from measure.core.record import read, recorded_trace, replay

OFFSETS_MS = (-150, -100, -75, -50, -25, 0, 25, 50)


def alignment(t: list[float], p: list[float], steps) -> dict[int, float]:
    """sd (W) of (new power value - counter mean power over [change + offset, +100 ms]) per offset."""
    changes = power_steps(t, p)
    out = {}
    for off in OFFSETS_MS:
        res = []
        for tau, value in list(zip(*changes, strict=True))[5:-5]:
            c = counter_window_j(steps, tau + off / 1000, tau + off / 1000 + 0.1)
            if c is not None:
                res.append(value - c / 0.1)
        out[off] = round(st.stdev(res), 2) if len(res) > 1 else None
    return out


def trials(out, steps, trace) -> dict:
    """Per trial record: |trace - counter| / counter (%), and the signed mean per arm."""
    dis, signed = [], {}
    for blk in out.blocks:
        per: dict[str, list[float]] = {}
        for w in blk["windows"]:
            c = counter_window_j(steps, w.start_s, w.end_s)
            if c is None:
                continue
            acc = per.setdefault(w.arm, [0.0, 0.0])
            acc[0] += c
            acc[1] += integrate_j(*trace, w.start_s, w.end_s)
        for arm, (c, tr) in per.items():
            dis.append(abs(tr - c) / c * 100)
            signed.setdefault(arm, []).append((tr - c) / c * 100)
    dis.sort()
    return {
        "trials": len(dis),
        "median_pct": round(st.median(dis), 2) if dis else None,
        "max_pct": round(dis[-1], 2) if dis else None,
        "over_1_pct": sum(d > 1.0 for d in dis),
        "signed_mean_pct_by_arm": {a: round(st.fmean(v), 2) for a, v in sorted(signed.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+")
    args = ap.parse_args()
    for path in args.records:
        rec = read(path)
        out = replay(rec)
        t, p, e = recorded_trace(rec)
        steps = counter_steps(t, e)
        print(
            json.dumps(
                {
                    "record": path,
                    "value_vs_counter_sd_w_by_offset_ms": alignment(t, p, steps),
                    "held": trials(out, steps, (t, p)),
                    "placed_at_change": trials(out, steps, power_steps(t, p)),
                }
            )
        )


if __name__ == "__main__":
    main()
