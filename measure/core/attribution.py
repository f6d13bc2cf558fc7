"""Window-energy attribution: every timed window's energy as a function of the power trace alone."""

from __future__ import annotations

from dataclasses import replace

from measure.core.energy import (
    COUNTER_STALL_S,
    counter_stall_s,
    counter_steps,
    counter_window_j,
    gap_limit_s,
    integrate_j,
    power_steps,
    trace_gap_s,
)
from measure.core.outcome import Outcome, Window, window_ends_s
from measure.core.seams import Trace

SAMPLER_STOPPED = "the power sampler stopped"


def attribute(out: Outcome, trace: Trace, has_counter: bool) -> Outcome:
    """`out` with the energy of every window from TRACE: interpolated counter, trapezoid trace.

    A window whose counter did not advance falls back to the trace, one with a trace gap keeps the
    counter; either way the window says why. A window with neither (the sampler stopped, or a gap
    and no counter) is a fault and its trial is failed, never a zero-energy ok. The prefill and
    direct-check totals and the faults are computed here too; `out` itself is left as it was.
    """
    if not window_ends_s(out):
        return out
    t, p, e = trace
    steps = counter_steps(t, e) if has_counter else ([], [])
    power_pts = power_steps(t, p)
    reads = [ti for ti, ei in zip(t, e, strict=True) if ei == ei]
    last_read = reads[-1] if reads else float("-inf")
    limit_s = gap_limit_s(t)
    faults: dict = {}
    stopped = out.power_error or SAMPLER_STOPPED

    def fill(window: Window) -> Window:
        w = replace(window, counter_j=None, trace_j=None, notes=list(window.notes), fault=None)
        gap = trace_gap_s(t, w.start_s, w.end_s)
        sound = gap != float("inf") and bool(power_pts[0])  # no finite reading at all: no trace energy
        w.trace_j = integrate_j(*power_pts, w.start_s, w.end_s) if sound else None
        if w.trace_j is not None and gap > limit_s:
            faults["trace_gaps"] = faults.get("trace_gaps", 0) + 1
            faults["max_trace_gap_s"] = round(max(faults.get("max_trace_gap_s", 0.0), gap), 3)
            w.notes.append(f"power trace gap of {gap:.3g} s (over {limit_s:.3g} s)")
        if has_counter:
            stall = counter_stall_s(steps, w.start_s, w.end_s, last_read)
            counter = counter_window_j(steps, w.start_s, w.end_s)
            if stall > COUNTER_STALL_S and stall != float("inf"):
                faults["counter_stalls"] = faults.get("counter_stalls", 0) + 1
                w.notes.append(f"energy counter did not advance for {stall:.3g} s")
            elif counter is not None and counter <= 0:
                w.notes.append("energy counter did not advance")
            else:
                w.counter_j = counter
        trace_sound = w.trace_j is not None and gap <= limit_s and w.trace_j > 0
        if w.counter_j is None and not trace_sound:
            if w.trace_j is None:
                w.notes.append(f"no power samples to the end of this window ({stopped})")
            w.fault = "; ".join(w.notes) + "; no sound energy source"
        elif w.notes:
            w.notes.append(f"energy from the {'counter' if w.counter_j is not None else 'power trace'}")
        return w

    blocks = []
    for blk in out.blocks:
        windows = [fill(w) for w in blk["windows"]]
        blocks.append({**blk, "windows": windows, "trace_j": [w.trace_j for w in windows]})
    totals: dict[str, dict] = {"prefill": {}, "direct": {}}
    filled: dict[str, list[Window]] = {}
    kinds = (("prefill", out.prefill_windows, "reps"), ("direct", out.direct_windows, "tokens"))
    for kind, windows, unit in kinds:
        filled[kind] = [fill(w) for w in windows]
        for w in filled[kind]:
            if w.fault:
                continue
            acc = totals[kind].setdefault(w.arm, {"energy_j": 0.0, "duration_s": 0.0, unit: 0})
            acc["energy_j"] += w.counter_j if w.counter_j is not None else w.trace_j
            acc["duration_s"] += w.end_s - w.start_s
            acc[unit] += w.tokens
    return replace(
        out,
        blocks=blocks,
        prefill_windows=filled["prefill"],
        direct_windows=filled["direct"],
        prefill=totals["prefill"],
        direct=totals["direct"],
        faults=faults,
    )
