"""What the power telemetry of a run looked like, from its raw record (no GPU needed).

Prints how often the NVML energy counter and the instant power field changed, how regular the counter's
steps were, and how far each 100 ms instant-power value sits from the counter's mean power over the same
interval (searched over lags): the floor under any counter-vs-trace agreement of a short window.

    python -m benchmarks.telemetry_timing measurements/h200-protocol-2026-12-02/*/energy-raw.json.gz
"""

from __future__ import annotations

import argparse
import json
import statistics as st
from bisect import bisect_left
from pathlib import Path


def _changes(t: list[float], v: list[float]) -> tuple[list[float], list[float]]:
    """(time, new value) where a sampled value changed, placed as the protocol places counter steps
    (measure.core.energy.counter_steps), without its first reading, which is not a change."""
    from measure.core.energy import counter_steps

    ts, vs = counter_steps(t, v)
    return ts[1:], vs[1:]


def counter_intervals(tc: list[float], ec: list[float]) -> tuple[list[float], list[float]]:
    """(middle, mean power) of each interval between two counter steps."""
    mid = [0.5 * (a + b) for a, b in zip(tc, tc[1:], strict=False)]
    pc = [(eb - ea) / (b - a) for a, b, ea, eb in zip(tc, tc[1:], ec, ec[1:], strict=False)]
    return mid, pc


def interval_power(mid: list[float], pc: list[float], x: float) -> float | None:
    """The counter's mean power over the interval whose middle is nearest X (None outside them)."""
    i = bisect_left(mid, x)
    if 0 < i < len(mid):
        return pc[i - 1 if x - mid[i - 1] < mid[i] - x else i]
    return None


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def analyse(record: dict) -> dict:
    from measure.core.record import recorded_trace

    t, p, e = recorded_trace(record)
    tc, ec = _changes(t, e)
    tp, pv = _changes(t, p)
    steps = [b - a for a, b in zip(tc, tc[1:], strict=False)]
    # counter mean power over each step interval, placed at the interval's middle
    mid, pc = counter_intervals(tc, ec)
    best = None
    for lag_ms in range(-150, 151, 10):
        diffs = []
        for when, value in zip(tp, pv, strict=True):
            at = interval_power(mid, pc, when - lag_ms / 1000.0)
            if at is not None:
                diffs.append(value - at)
        if len(diffs) > 10:
            sd = st.pstdev(diffs)
            if best is None or sd < best[1]:
                best = (lag_ms, sd, st.fmean(diffs))
    return {
        "samples": len(t),
        "counter_steps": len(tc),
        "counter_step_ms_median": round(st.median(steps) * 1e3, 3) if steps else None,
        "counter_step_ms_p5_p95": [round(_pct(steps, 0.05) * 1e3, 3), round(_pct(steps, 0.95) * 1e3, 3)]
        if steps
        else None,
        "power_changes": len(tp),
        "power_change_ms_median": round(st.median([b - a for a, b in zip(tp, tp[1:], strict=False)]) * 1e3, 3)
        if len(tp) > 1
        else None,
        "counter_power_w_mean": round(st.fmean(pc), 2) if pc else None,
        "instant_vs_counter_best_lag_ms": best[0] if best else None,
        "instant_vs_counter_sd_w": round(best[1], 3) if best else None,
        "instant_vs_counter_mean_w": round(best[2], 3) if best else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", type=Path)
    args = ap.parse_args()
    from measure.core.record import read

    for path in args.records:
        print(json.dumps({"record": str(path), **analyse(read(path))}))


if __name__ == "__main__":
    main()
