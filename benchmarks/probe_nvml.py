"""How fast can NVML be read, and how often do the energy counter and the instant power field change?

Polls both as fast as possible for --seconds on an idle GPU and prints read latencies and the median
interval between changes of each value (their effective update periods). Read-only NVML calls.
"""

from __future__ import annotations

import argparse
import json
import statistics as st
import time


def _changes(ts: list[float], vs: list[float]) -> list[float]:
    out, last_t, last_v = [], None, None
    for t, v in zip(ts, vs, strict=True):
        if last_v is not None and v != last_v:
            if last_t is not None:
                out.append(t - last_t)
            last_t = t
        last_v = v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    from measure.power.nvml import open_nvml

    src = open_nvml(args.device)
    te, e, tp, p, lat_e, lat_p = [], [], [], [], [], []
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        e.append(src.energy_j())
        t1 = time.monotonic()
        p.append(src.power_w())
        t2 = time.monotonic()
        te.append(t1)
        tp.append(t2)
        lat_e.append(t1 - t0)
        lat_p.append(t2 - t1)
    ce, cp = _changes(te, e), _changes(tp, p)
    info = src.device_info()
    src.close()
    print(
        json.dumps(
            {
                "gpu": info["name"],
                "power_field": info["power_field"],
                "reads": len(e),
                "energy_read_us_median": round(st.median(lat_e) * 1e6, 1),
                "power_read_us_median": round(st.median(lat_p) * 1e6, 1),
                "energy_counter_update_ms_median": round(st.median(ce) * 1e3, 2) if ce else None,
                "energy_counter_updates": len(ce),
                "power_update_ms_median": round(st.median(cp) * 1e3, 2) if cp else None,
                "power_updates": len(cp),
                "idle_power_w_mean": round(st.fmean(p), 1),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
