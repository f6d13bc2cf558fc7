"""Which block design narrows dE% fastest on a host like the H200's? A replay of its recorded decode times.

Takes the back-to-back generation times that `bench_sampler.py` recorded on a real host (one FP16 arm)
and walks them as if a run used them: FP16 windows take the recorded times, the quantized arm's windows
take them times a fixed ratio (energy follows time in batch-1 eager decode), each block first spends
`--overhead` seconds (cooldown + preroll), then `K` mirrored rounds (F Q Q F, Q F F Q, ...). For every
K it prints the mean CI95 half-width scaled to `--seconds` of block phase, over many starting points on
the circular record. A model, not a measurement: it keeps the host's speed regimes and jitter, and
nothing else (no energy-measurement noise, a ratio that does not move with host speed).

    python -m benchmarks.design_sim measurements/h200-protocol-2026-12-02/bench_sampler-8tok-*.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics as st
from pathlib import Path

from scipy import stats as sps

from measure.core.design import block_rounds


def simulate(times: list[float], rounds: int, overhead_s: float, ratio: float, offset: int) -> list[float]:
    """Per-block dE% (percent) over one pass of the circular record starting at `offset`."""
    n, total = len(times), sum(times)
    i, t, deltas = offset, 0.0, []
    while t < total:
        skipped = 0.0
        while skipped < overhead_s:
            skipped += times[i % n]
            i += 1
        t += skipped
        f = q = 0.0
        for arm in block_rounds(["F", "Q", "Q", "F"], rounds):  # the protocol's own block order
            d = times[i % n] * (1.0 if arm == "F" else ratio)
            i += 1
            t += d
            if arm == "F":
                f += d
            else:
                q += d
        deltas.append((q / f - 1) * 100)
    return deltas


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench_json", type=Path)
    ap.add_argument("--ratio", type=float, default=1.35, help="quantized / FP16 time per token")
    ap.add_argument("--overhead", type=float, default=0.5, help="seconds per block before its windows")
    ap.add_argument("--seconds", type=float, default=280.0, help="block phase to scale the interval to")
    args = ap.parse_args()
    times = [g[2] for g in json.loads(args.bench_json.read_text())["generations"]]
    total = sum(times)
    print(f"{len(times)} recorded generations, {total:.0f} s; ratio {args.ratio}, overhead {args.overhead} s")
    for rounds in (1, 2, 4, 8):
        halves, blocks = [], []
        for offset in range(0, len(times), 7):
            d = simulate(times, rounds, args.overhead, args.ratio, offset)
            half = sps.t.ppf(0.975, len(d) - 1) * st.stdev(d) / math.sqrt(len(d))
            halves.append(half * math.sqrt(total / args.seconds))
            blocks.append(len(d))
        print(
            f"rounds per block {rounds}: {st.fmean(blocks):.0f} blocks per record, "
            f"CI95 half-width at {args.seconds:.0f} s: {st.fmean(halves):.2f} pp"
        )


if __name__ == "__main__":
    main()
