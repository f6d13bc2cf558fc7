"""Where do the sampler's power edges land against a GPU load whose edges are known?

Bursts of large FP16 matrix products (each ended by a device synchronise, so the host knows when the GPU
went busy and idle to within a launch) alternate with idle gaps. The sampler runs exactly as in
`measure run` (its own process, 100 Hz, counter every 5th tick). Afterwards, per burst: the lag from the
known start/end to where the instant-power trace (`measure.core.energy.power_steps`) and the energy counter's
mean power cross halfway between idle and busy, and the counter-vs-trace disagreement of the burst's
energy. Bursts of several lengths show how agreement depends on window length when the edges are sharp.

    python -m benchmarks.edge_timing [--bursts-s 0.25,0.5,1,2] [--repeats 5] [--gap-s 1.0] [--json PATH]
    python -m benchmarks.edge_timing --fake-power --size 256      # CPU dry run of the script itself
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics as st
import sys
import time
from pathlib import Path


def crossing(ts: list[float], ws: list[float], after_s: float, level_w: float, rising: bool) -> float | None:
    """First time at or after `after_s` where the piecewise-linear power (ts, ws) crosses `level_w`."""
    for i in range(1, len(ts)):
        if ts[i] < after_s:
            continue
        a, b = ws[i - 1], ws[i]
        if (rising and a < level_w <= b) or (not rising and a > level_w >= b):
            frac = (level_w - a) / (b - a) if b != a else 0.0
            return ts[i - 1] + frac * (ts[i] - ts[i - 1])
    return None


def counter_power(steps: tuple[list[float], list[float]]) -> tuple[list[float], list[float]]:
    """Mean power between consecutive counter steps, placed at each interval's midpoint."""
    ts, cs = steps
    mid = [(ts[i] + ts[i - 1]) / 2 for i in range(1, len(ts))]
    pw = [(cs[i] - cs[i - 1]) / (ts[i] - ts[i - 1]) for i in range(1, len(ts)) if ts[i] > ts[i - 1]]
    return mid[: len(pw)], pw


def analyse(bursts: list[dict], t: list[float], p: list[float], e: list[float]) -> dict:
    """Edge lags and per-burst counter-vs-trace agreement from the recorded samples."""
    from measure.core.energy import counter_steps, counter_window_j, integrate_j, power_steps

    trace = power_steps(t, p)
    steps = counter_steps(t, e)
    cts, cws = counter_power(steps)
    out = []
    for b in bursts:
        idle = st.median([w for tt, w in zip(*trace, strict=True)
                          if b["idle_from_s"] <= tt <= b["start_s"] - 0.15] or [float("nan")])
        busy = st.median([w for tt, w in zip(*trace, strict=True)
                          if b["start_s"] + 0.15 <= tt <= b["end_s"] - 0.05] or [float("nan")])
        half = (idle + busy) / 2
        row = {"burst_s": b["burst_s"], "idle_w": idle, "busy_w": busy}
        for name, (ts, ws) in (("trace", trace), ("counter", (cts, cws))):
            up = crossing(ts, ws, b["start_s"] - 0.3, half, True)
            down = crossing(ts, ws, b["end_s"] - 0.3, half, False)
            row[f"{name}_rise_lag_s"] = None if up is None else up - b["start_s"]
            row[f"{name}_fall_lag_s"] = None if down is None else down - b["end_s"]
        ce = counter_window_j(steps, b["start_s"], b["end_s"])
        te = integrate_j(trace[0], trace[1], b["start_s"], b["end_s"])
        row["counter_j"], row["trace_j"] = ce, te
        row["disagreement_pct"] = None if not ce or te is None else abs(te - ce) / ce * 100
        out.append(row)
    summary = {}
    for length in sorted({r["burst_s"] for r in out}):
        rs = [r for r in out if r["burst_s"] == length]
        s = {}
        for key in ("trace_rise_lag_s", "trace_fall_lag_s", "counter_rise_lag_s", "counter_fall_lag_s",
                    "disagreement_pct"):
            vals = [r[key] for r in rs if r[key] is not None]
            s[key] = {"median": st.median(vals), "max_abs": max(abs(v) for v in vals)} if vals else None
        summary[str(length)] = s
    return {"bursts": out, "by_length_s": summary}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bursts-s", default="0.25,0.5,1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--gap-s", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=8192, help="matrix side of the products")
    ap.add_argument("--fake-power", action="store_true", help="fake power source and CPU (dry run)")
    ap.add_argument("--json", dest="json_path")
    a = ap.parse_args(argv)

    import torch

    from measure.power.sampler import ProcessSampler

    if a.fake_power:
        from measure.power.fake import open_fake

        factory = functools.partial(open_fake, [(0.0, 120.0), (1.0, 300.0), (2.0, 120.0)], time.monotonic())
        device = "cpu"
    else:
        from measure.power.nvml import open_nvml

        factory = functools.partial(open_nvml, 0)
        device = "cuda:0"
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    x = torch.randn(a.size, a.size, device=device, dtype=torch.float16 if device != "cpu" else torch.float32)
    sampler = ProcessSampler(factory, 100.0, counter_every=5)
    sampler.start()
    lengths = [float(v) for v in a.bursts_s.split(",")] * a.repeats
    bursts = []
    try:
        time.sleep(a.gap_s)
        for length in lengths:
            idle_from = time.monotonic() - a.gap_s + 0.1
            sync()
            start = time.monotonic()
            while time.monotonic() - start < length:
                for _ in range(4):
                    x @ x  # noqa: B018 - the product is the load
                sync()
            end = time.monotonic()
            bursts.append({"burst_s": length, "idle_from_s": idle_from, "start_s": start, "end_s": end})
            time.sleep(a.gap_s)
        sampler.wait_past(bursts[-1]["end_s"] + 0.5)
        t, p, e = sampler.trace()
    finally:
        sampler.stop()
    result = {"device": device, "size": a.size, "fake_power": a.fake_power, "gap_s": a.gap_s,
              **analyse(bursts, list(t), list(p), list(e))}
    print(json.dumps(result["by_length_s"], indent=1))
    if a.json_path:
        Path(a.json_path).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
