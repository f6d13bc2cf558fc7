"""How steady is batch-1 eager decode on this host? Back-to-back generations, timed one by one.

Eager decode is bound by the Python launch path, so its speed is the host's: this prints the spread
of one arm's generation times (cv, lag-1 autocorrelation, the slowest and fastest tenth) with the
power sampler running as in a measurement, optionally with the measuring process pinned to one CPU
and the sampler to another. Run it once per configuration, each in a fresh process:

    python -m benchmarks.host_jitter --seconds 15                  # as the scheduler places it
    python -m benchmarks.host_jitter --seconds 15 --pin auto       # pinned (measure run --pin-cpu)
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics as st
import time


def _steal_ticks() -> int | None:
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()
        return int(fields[8])  # cpu  user nice system idle iowait irq softirq steal
    except (OSError, IndexError, ValueError):
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", default="tinyllama-1.1b")
    ap.add_argument("--precision", default="FP16")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--pin", default="none", help="none, auto, or MEASURE_CPU:SAMPLER_CPU")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--fake-power", action="store_true", help="fake power source (CPU runs of the script)")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()

    from measure.gpu.workload import Workload
    from measure.power.pinning import choose_cpus
    from measure.power.sampler import ProcessSampler

    cpus = None
    if args.pin == "auto":
        cpus = choose_cpus()
    elif args.pin != "none":
        a, b = args.pin.split(":")
        cpus = (int(a), int(b))
    if cpus:
        os.sched_setaffinity(0, {cpus[0]})
    if args.fake_power:
        from measure.power.fake import open_fake

        factory = functools.partial(open_fake, [(0.0, 120.0), (1.0, 130.0)], time.monotonic())
    else:
        from measure.power.nvml import open_nvml

        factory = functools.partial(open_nvml, 0)
    sampler = ProcessSampler(factory, 100.0, cpu=cpus[1] if cpus else None)
    sampler.start()
    arm = Workload(f"synthetic:{args.synthetic}", "eager", args.device).load(args.precision)
    for _ in range(3):
        arm.generate(args.tokens)
    times = []
    steal0, t_end = _steal_ticks(), time.monotonic() + args.seconds
    while time.monotonic() < t_end:
        t0 = time.perf_counter()
        arm.generate(args.tokens)
        times.append(time.perf_counter() - t0)
    steal1 = _steal_ticks()
    sampler.stop()
    m = st.fmean(times)
    lag1 = (
        sum((a - m) * (b - m) for a, b in zip(times, times[1:], strict=False))
        / sum((x - m) ** 2 for x in times)
        if len(times) > 2 and st.pstdev(times) > 0
        else None
    )
    ranked = sorted(times)
    result = {
        "pin": args.pin,
        "cpus": cpus,
        "generations": len(times),
        "mean_s": round(m, 5),
        "cv": round(st.stdev(times) / m, 4) if len(times) > 1 else None,
        "lag1_autocorrelation": round(lag1, 3) if lag1 is not None else None,
        "p10_s": round(ranked[len(ranked) // 10], 5),
        "p90_s": round(ranked[(9 * len(ranked)) // 10], 5),
        "steal_ticks": None if steal0 is None or steal1 is None else steal1 - steal0,
        "cpu_count": os.cpu_count(),
        "times_s": [round(x, 5) for x in times],
    }
    print(json.dumps({k: v for k, v in result.items() if k != "times_s"}))
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(result, fh)


if __name__ == "__main__":
    main()
