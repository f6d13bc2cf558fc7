"""Calibration benchmark: false-contradiction rate and power of the grader, per reference curve.

Part 1 (parameter draws) simulates N submissions per row from the curve's own uncertainty: the true curve is
the model evaluated at parameters drawn from N(theta_hat, cov), plus the scatter of a new setup, plus
observation noise of the stated regime; each is graded with the real rule, and the power column shifts
each observation by 3 combined sd. Part 2 repeats the inside rows with the draws clipped to the fit's bounds,
and with the old delta-method band, for comparison. Part 3 is the stricter check: the anchors are redrawn
around the fitted curve, the whole fit is rerun, and fresh submissions are graded against the refit.
Seeded: same output each run. Targets: false-contradiction rate 5 % +- 1.5 % for sizes inside the measured
range and power >= 80 %; the exit status is 0 when every part-1 inside row meets them.

    python -m benchmarks.calibrate [--n 10000] [--refits 100] [--per-refit 50] [--jobs 2] [--seed 20261202]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from curves.calibration import SCENARIOS, binomial_half_width, simulate
from curves.model import delta_method_variance
from curves.resample import resample_once, summarise
from curves.store import load_curves


def _target(fcr: float, power: float) -> str:
    return "ok" if abs(fcr - 0.05) <= 0.015 and power >= 0.80 else "off target"


def _rate(fcr: float, half: float) -> str:
    return f"{100 * fcr:>7.2f} ± {100 * half:4.2f}"


def part_draws(curves: dict, keys: list[tuple[int, str]], args) -> tuple[float, float]:
    cv_pct = curves["settings"]["repeatability_cv_pct"]
    head = (
        f"{'curve':<20} {'sizes':<8} {'regime':<13} {'false contra %':>15} {'power 3sd %':>12} "
        f"{'anchor ref %':>12} {'mean sd_ref':>11}  target"
    )
    print(head)
    print("-" * len(head))
    worst_inside, weakest = 0.0, 1.0
    for k, key in keys:
        for j, scenario in enumerate(SCENARIOS):
            for where in ("inside", "outside"):
                seed = args.seed + 1000 * k + 10 * j + (where == "outside")
                res = simulate(
                    curves["groups"][key], n=args.n, seed=seed, scenario=scenario, where=where, cv_pct=cv_pct
                )
                fcr, pw = res["false_contradiction_rate"], res["power"]
                if where == "inside":
                    worst_inside = max(worst_inside, abs(fcr - 0.05))
                    weakest = min(weakest, pw)
                    verdict = _target(fcr, pw)
                else:
                    verdict = "conservative by design" if fcr <= 0.05 else "above 5 %"
                print(
                    f"{key:<20} {where:<8} {scenario:<13} {_rate(fcr, binomial_half_width(fcr, args.n))} "
                    f"{100 * pw:>12.2f} {100 * res['anchor_reference_share']:>12.1f} "
                    f"{res['mean_sigma_ref_pp']:>8.1f} pp  {verdict}"
                )
    print("-" * len(head))
    return worst_inside, weakest


def part_compare(curves: dict, keys: list[tuple[int, str]], args) -> None:
    cv_pct = curves["settings"]["repeatability_cv_pct"]
    head = (
        f"{'curve':<20} {'regime':<13} {'bounded truth: false %':>23} {'power %':>8}   "
        f"{'delta-method band: false %':>27} {'power %':>8}"
    )
    print(head)
    print("-" * len(head))
    for k, key in keys:
        for j, scenario in enumerate(SCENARIOS):
            seed = args.seed + 1000 * k + 10 * j  # the same draws as the inside rows of part 1
            common = {"n": args.n, "seed": seed, "scenario": scenario, "cv_pct": cv_pct}
            clipped = simulate(curves["groups"][key], truth="bounded", **common)
            delta = simulate(curves["groups"][key], variance=delta_method_variance, **common)
            cols = []
            for res in (clipped, delta):
                fcr = res["false_contradiction_rate"]
                cols.append(f"{_rate(fcr, binomial_half_width(fcr, args.n)):>15} {100 * res['power']:>8.2f}")
            print(f"{key:<20} {scenario:<13} {cols[0]:>23}   {cols[1]:>27}")
    print("-" * len(head))


def _resample_chunk(task: tuple) -> list:
    curves, key, k, seed, first, count, per_refit = task
    return [resample_once(curves, key, [seed, k, r], per_refit) for r in range(first, first + count)]


def part_refit(curves: dict, keys: list[tuple[int, str]], args) -> None:
    head = (
        f"{'curve':<20} {'regime':<13} {'refits':>6} {'graded':>7} {'false contra %':>15} "
        f"{'power 3sd %':>12} {'mean sd_ref':>11} {'corr(sigma_new, false)':>22}  target"
    )
    print(head)
    print("-" * len(head))
    chunk = 10
    tasks = [
        (curves, key, k, args.seed, first, min(chunk, args.refits - first), args.per_refit)
        for k, key in keys
        for first in range(0, args.refits, chunk)
    ]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_resample_chunk, tasks))
    for k, key in keys:
        per_refit = [r for task, rs in zip(tasks, results, strict=True) if task[2] == k for r in rs]
        for scenario, res in summarise(per_refit, args.per_refit).items():
            fcr, pw = res["false_contradiction_rate"], res["power"]
            print(
                f"{key:<20} {scenario:<13} {res['refits']:>6} {res['n']:>7} "
                f"{_rate(fcr, res['half_width_95'])} {100 * pw:>12.2f} {res['mean_sigma_ref_pp']:>8.1f} pp "
                f"{res['sigma_new_rate_corr']:>22.2f}  {_target(fcr, pw)}"
            )
    print("-" * len(head))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="simulated submissions per row (parts 1 and 2)")
    parser.add_argument("--refits", type=int, default=100, help="refits per curve in part 3 (0 skips it)")
    parser.add_argument("--per-refit", type=int, default=50, help="fresh submissions graded per refit")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes for part 3")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--curves", default=None, help="curves.json (default reference/curves.json)")
    args = parser.parse_args()
    curves = load_curves(args.curves)
    # a borrowed curve has the numbers of the curve it borrows; k keeps the seeds of earlier versions
    keys = [
        (k, key)
        for k, key in enumerate(sorted(curves["groups"]))
        if not curves["groups"][key]["borrowed_from"]
    ]
    band = curves["groups"][keys[0][1]]["band"]["method"]
    print(f"curves version {curves['version']}; band {band}; seed {args.seed}")
    start = time.perf_counter()
    print(
        f"\n1. parameter draws: {args.n} submissions per row, true curve = model at theta ~ N(theta_hat, cov)"
    )
    worst_inside, weakest = part_draws(curves, keys, args)
    print(
        f"inside the measured range: largest |false-contradiction rate - 5 %| = {100 * worst_inside:.2f} pp; "
        f"lowest power = {100 * weakest:.2f} %; {time.perf_counter() - start:.1f} s"
    )
    start = time.perf_counter()
    print(
        "\n2. inside the measured range, same draws as part 1: theta clipped into the fit's bounds; "
        "the old delta-method band"
    )
    part_compare(curves, keys, args)
    print(f"{time.perf_counter() - start:.1f} s")
    if args.refits > 0:
        start = time.perf_counter()
        print(
            f"\n3. resimulated anchors: {args.refits} refits per curve (anchors = fitted curve + "
            f"N(0, sigma_fit^2), full fit rerun), {args.per_refit} fresh submissions per refit and regime, "
            "sizes inside the range; ± is 95 % from the spread between refits"
        )
        part_refit(curves, keys, args)
        print(f"{time.perf_counter() - start:.1f} s with {args.jobs} processes")
    return 0 if worst_inside <= 0.015 and weakest >= 0.80 else 1


if __name__ == "__main__":
    sys.exit(main())
