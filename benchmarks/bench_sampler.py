"""Does the 100 Hz power sampler slow the decode it measures? Sampler on vs off, interleaved, one run.

One FP16 arm decodes `--tokens`-token generations in quads whose order alternates (on off off on /
off on on off), so a linear drift of host speed cancels inside each quad. "off" pauses the sampler
process (it then sleeps on an event); "on" samples at --rate-hz. The statistic is the per-quad change
of time per token with the sampler on, in percent, with a t interval over quads; the sampler is
harmless when |change| <= 1 % and the interval is narrow enough to resolve 1 %.

    python -m benchmarks.bench_sampler --synthetic tinyllama-1.1b --quads 24 [--max-seconds S] [--fake-power]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics as st
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", default="tinyllama-1.1b")
    ap.add_argument("--backend", default="eager")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--quads", type=int, default=24)
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="stop starting quads after this many seconds of them (a time bound, never a result-based stop)",
    )
    ap.add_argument("--rate-hz", type=float, default=100.0)
    ap.add_argument(
        "--counter-every", type=int, default=5, help="read the energy counter every N ticks (measure run: 5)"
    )
    ap.add_argument("--fake-power", action="store_true", help="fake power source (CPU runs of the script)")
    ap.add_argument(
        "--pin", choices=["auto", "none"], default="none", help="CPU pinning (measure run: none by default)"
    )
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()

    from measure.core.stats import summarise, trimmed_summary
    from measure.gpu.workload import Workload
    from measure.power.sampler import ProcessSampler

    if args.fake_power:
        from measure.power.fake import open_fake

        factory = functools.partial(open_fake, [(0.0, 120.0), (1.0, 130.0)], time.monotonic())
    else:
        from measure.power.nvml import open_nvml

        factory = functools.partial(open_nvml, 0)
    from measure.power.pinning import choose_cpus, pin_current_process

    cpus = choose_cpus() if args.pin == "auto" else None
    if cpus:
        pin_current_process(cpus[0])
    sampler = ProcessSampler(
        factory, args.rate_hz, counter_every=args.counter_every, cpu=cpus[1] if cpus else None
    )
    sampler.start()
    arm = Workload(f"synthetic:{args.synthetic}", args.backend, args.device).load("FP16")
    for _ in range(3):
        arm.generate(args.tokens)

    on_windows: list[tuple[float, float]] = []
    gens: list[list] = []  # every generation: start (s after the first), sampler on, seconds
    first = time.monotonic()

    def timed(on: bool) -> float:
        (sampler.resume if on else sampler.pause)()
        t0 = time.perf_counter()
        m0 = time.monotonic()
        arm.generate(args.tokens)
        elapsed = time.perf_counter() - t0
        if on:
            on_windows.append((m0, time.monotonic()))
        gens.append([round(m0 - first, 4), on, round(elapsed, 6)])
        return elapsed / args.tokens

    changes, on_all, off_all = [], [], []
    t_start = time.perf_counter()
    for q in range(args.quads):
        if args.max_seconds is not None and time.perf_counter() - t_start > args.max_seconds:
            break
        pattern = (True, False, False, True) if q % 2 == 0 else (False, True, True, False)
        times = [(on, timed(on)) for on in pattern]
        on_t = [t for on, t in times if on]
        off_t = [t for on, t in times if not on]
        on_all += on_t
        off_all += off_t
        changes.append((st.fmean(on_t) / st.fmean(off_t) - 1) * 100)
    sampler.resume()
    time.sleep(0.2)
    sampler.stop()
    stamps = sampler.trace()[0]
    on_s = sum(b - a for a, b in on_windows)
    # the rate while sampling: samples inside the sampler-on generations over their total time
    achieved = sum(1 for t in stamps for a, b in on_windows if a <= t <= b) / on_s if on_s else None
    s = summarise(changes)
    result = {
        "tokens_per_generation": args.tokens,
        "counter_every": args.counter_every,
        "cpus": cpus,
        "quads": len(changes),
        "quads_requested": args.quads,
        "max_seconds": args.max_seconds,
        "backend": args.backend,
        "wall_s": round(time.perf_counter() - t_start, 1),
        "throughput_on_tokens_per_s": round(1 / st.fmean(on_all), 2),
        "throughput_off_tokens_per_s": round(1 / st.fmean(off_all), 2),
        "time_per_token_change_pct": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in s.items()},
        # declared before its first use: the 10 % trimmed mean, as the timing data are heavy-tailed
        "time_per_token_change_trimmed_pct": {
            k: (round(v, 3) if isinstance(v, float) else v) for k, v in trimmed_summary(changes).items()
        },
        "sampler_rate_hz_requested": args.rate_hz,
        "sampler_rate_hz_achieved": achieved,
        "dropped_samples": sampler.dropped(),
        "harmless": abs(s["mean"]) <= 1.0
        and s["ci95_half_width_pp"] is not None
        and s["ci95_half_width_pp"] < 1.0,
        "generations": gens,
    }
    text = json.dumps(result, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "generations"}, indent=1))
    if args.json_path:
        with open(args.json_path, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
