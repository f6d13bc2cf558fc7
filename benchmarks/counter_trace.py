"""How far each trial's instant-power trace lands from its energy counter, and how far its own telemetry
says it should (committed raw records; no GPU needed).

The report's energies come from NVML's energy counter; the trace of the instant power field, sampled in a
separate process, is its cross-check (QJ222). That field refreshes every 100 ms and holds a point reading,
not the refresh's mean, so within a trial its values scatter around the counter's mean power of the same
interval by some sd_w (2 W in eager TinyLlama decode, 15 W in eager Qwen2-7B decode on an H200), and the
trace's mean over the trial's n refreshes is off by about sd_w / sqrt(n). This script measures sd_w inside
every trial's own windows, predicts the trial's gap from it, and compares: z = gap / predicted sd.

    python -m benchmarks.counter_trace                     # every raw record under measurements/
    python -m benchmarks.counter_trace measurements/hopper-campaign --json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics as st
from bisect import bisect_left
from pathlib import Path

from benchmarks.telemetry_timing import _changes, _pct, counter_intervals, interval_power
from measure.core.record import RAW_NAME, read, recorded_trace

ROOT = Path(__file__).resolve().parent.parent
BINS = ((0.0, 0.2, "< 0.2 s"), (0.2, 0.5, "0.2–0.5 s"), (0.5, 1.0, "0.5–1 s"), (1.0, 3.0, "1–3 s"),
        (3.0, math.inf, "≥ 3 s"))


def _reports(folder: Path) -> list[dict]:
    out = []
    for path in sorted(folder.glob("energy*.json")):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return out


def trials(record: dict, reports: list[dict]) -> list[dict]:
    """One row per report trial with both energies: its gap, the refresh scatter inside its windows and
    the gap that scatter predicts."""
    t, p, e = recorded_trace(record)
    tc, ec = _changes(t, e)
    tp, pv = _changes(t, p)
    mid, pc = counter_intervals(tc, ec)
    windows: dict[tuple[int, str], list[dict]] = {}
    for block in record.get("outcome", {}).get("blocks") or []:
        for w in block.get("windows") or []:
            windows.setdefault((block["block"], w["arm"]), []).append(w)
    rows, seen = [], set()
    for report in reports:
        for trial in report.get("trials") or []:
            key = (trial.get("block"), trial.get("arm"))
            counter, trace = trial.get("counter_energy_j"), trial.get("trace_energy_j")
            if key in seen or key not in windows or not counter or trace is None:
                continue
            if not trial.get("duration_s"):
                continue
            seen.add(key)
            diffs = []
            for w in windows[key]:
                lo, hi = bisect_left(tp, w["start_s"]), bisect_left(tp, w["end_s"])
                for when, value in zip(tp[lo:hi], pv[lo:hi], strict=True):
                    at = interval_power(mid, pc, when)
                    if at is not None:
                        diffs.append(value - at)
            generations = sum(int(w.get("generations") or 1) for w in windows[key])
            power_w = counter / trial["duration_s"]
            gap_pct = 100.0 * (trace - counter) / counter
            sd_w = st.pstdev(diffs) if len(diffs) > 2 else None
            predicted = 100.0 * sd_w / math.sqrt(len(diffs)) / power_w if sd_w else None
            rows.append({"arm": trial["arm"], "generation_s": trial["duration_s"] / generations,
                         "gap_pct": gap_pct, "refresh_sd_w": sd_w, "refreshes": len(diffs),
                         "predicted_sd_pct": predicted,
                         "z": gap_pct / predicted if predicted else None})
    return rows


def collect(roots: list[Path]) -> list[dict]:
    rows = []
    for root in roots:
        for raw in sorted(root.rglob(RAW_NAME)):
            reports = _reports(raw.parent)
            for row in trials(read(raw), reports):
                rows.append({"record": raw.relative_to(ROOT).as_posix() if raw.is_relative_to(ROOT)
                             else str(raw), **row})
    return rows


def _share(zs: list[float], k: float) -> str:
    return f"{100 * sum(z <= k for z in zs) / len(zs):.0f} %" if zs else "—"


def table(rows: list[dict]) -> str:
    lines = ["| one generation lasts | trials | median |gap| | 95th pct | max | over 1 % "
             "| median predicted sd | |z| ≤ 2 | |z| ≤ 3 | max |z| |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for lo, hi, name in BINS:
        chosen = [r for r in rows if lo <= r["generation_s"] < hi]
        if not chosen:
            continue
        gaps = [abs(r["gap_pct"]) for r in chosen]
        zs = [abs(r["z"]) for r in chosen if r["z"] is not None]
        pred = [r["predicted_sd_pct"] for r in chosen if r["predicted_sd_pct"] is not None]
        head = (f"| {name} | {len(chosen)} | {st.median(gaps):.2f} % | {_pct(gaps, 0.95):.2f} % "
                f"| {max(gaps):.2f} % | {sum(g > 1 for g in gaps)} ")
        tail = (f"| {st.median(pred):.2f} % | {_share(zs, 2)} | {_share(zs, 3)} | {max(zs):.1f} |"
                if pred and zs else "| — | — | — | — |")
        lines.append(head + tail)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*", type=Path, default=[ROOT / "measurements"])
    ap.add_argument("--json", action="store_true", help="one JSON line per trial instead of the table")
    a = ap.parse_args(argv)
    rows = collect([r.resolve() for r in a.roots])
    if a.json:
        for row in rows:
            print(json.dumps(row, sort_keys=True))
        return 0
    print(f"{len(rows)} trials from {len({r['record'] for r in rows})} raw records")
    print(table(rows))
    worst = sorted(rows, key=lambda r: -abs(r["gap_pct"]))[:5]
    for r in worst:
        z = f"{r['z']:+.1f}" if r["z"] is not None else "—"
        print(f"  {r['record']} {r['arm']}: gap {r['gap_pct']:+.2f} %, generation {r['generation_s']:.2f} s, "
              f"refresh sd {r['refresh_sd_w'] or 0:.1f} W over {r['refreshes']} refreshes, z {z}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
