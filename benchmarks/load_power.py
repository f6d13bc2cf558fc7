"""When does the ~120 W "loaded idle" floor appear? Power over the first seconds of raw records.

    python -m benchmarks.load_power measurements/hopper-campaign/*/energy-raw.json.gz

The sampler starts before the bare-idle window and model loading, so a raw record's first seconds show
the card going from bare idle to the floor it keeps while models are resident. Per record: bare idle
(median of the first 2 s), loaded idle (what the protocol measured), the seconds from the first sample to
the first 0.5 s bin above the midpoint of the two, and the load phase's length, so one can see whether
the step comes once (CUDA context, first allocation) or with each model loaded.
"""

from __future__ import annotations

import gzip
import json
import statistics as st
import sys


def profile(record: dict, bin_s: float = 0.5) -> dict:
    tr = record["trace"]
    ts = [u / 1e6 for u in tr["t_us"]]
    ps = [p / 1e3 if p is not None else None for p in tr["power_mw"]]
    bare = st.median([p for t, p in zip(ts, ps, strict=True) if t <= 2.0 and p is not None])
    loaded = record["outcome"]["idle_power_loaded_w"]
    split = record["outcome"]["time_split_s"]
    bins = []
    end = 3.0 + split.get("load", 0.0) + 2.0
    t = 0.0
    while t < end:
        vals = [p for tt, p in zip(ts, ps, strict=True) if t <= tt < t + bin_s and p is not None]
        bins.append(round(st.fmean(vals), 1) if vals else None)
        t += bin_s
    mid = (bare + loaded) / 2
    first = next((i * bin_s for i, v in enumerate(bins) if v is not None and v > mid), None)
    return {"bare_idle_w": round(bare, 1), "loaded_idle_w": round(loaded, 1),
            "load_s": round(split["load"], 1), "first_bin_above_midpoint_s": first, "bins_w": bins}


def main(paths: list[str]) -> int:
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            p = profile(json.load(f))
        print(f"{path}: bare {p['bare_idle_w']} W, loaded {p['loaded_idle_w']} W, load {p['load_s']} s, "
              f"above midpoint from {p['first_bin_above_midpoint_s']} s; 0.5 s bins: {p['bins_w']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
