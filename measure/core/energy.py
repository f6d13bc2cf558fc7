"""Energy math over power traces: edge-clipped trapezoid integration, agreement, dynamic energy."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence


def _interp(t: float, t0: float, p0: float, t1: float, p1: float) -> float:
    if t1 == t0:
        return p0
    return p0 + (p1 - p0) * (t - t0) / (t1 - t0)


def power_at(times_s: Sequence[float], power_w: Sequence[float], t: float) -> float:
    """Power at time t, linearly interpolated; held constant beyond the first/last sample."""
    if not times_s:
        raise ValueError("empty trace")
    if t <= times_s[0]:
        return power_w[0]
    if t >= times_s[-1]:
        return power_w[-1]
    i = bisect_right(times_s, t)
    return _interp(t, times_s[i - 1], power_w[i - 1], times_s[i], power_w[i])


def integrate_j(times_s: Sequence[float], power_w: Sequence[float], start_s: float, end_s: float) -> float:
    """Energy in J over [start_s, end_s] by trapezoid, with the trace interpolated at both edges.

    Samples must be sorted by time. A window that reaches past the trace holds the edge value, which
    is why the sampler keeps running a little before and after every measured window.
    """
    if end_s < start_s:
        raise ValueError("end before start")
    if len(times_s) != len(power_w):
        raise ValueError("times and powers differ in length")
    if end_s == start_s:
        return 0.0
    lo = bisect_right(times_s, start_s)
    hi = bisect_left(times_s, end_s)
    ts = [start_s, *times_s[lo:hi], end_s]
    ps = [power_at(times_s, power_w, start_s), *power_w[lo:hi], power_at(times_s, power_w, end_s)]
    total = 0.0
    for k in range(1, len(ts)):
        total += 0.5 * (ps[k] + ps[k - 1]) * (ts[k] - ts[k - 1])
    return total


def mean_power_w(times_s: Sequence[float], power_w: Sequence[float], start_s: float, end_s: float) -> float:
    """Time-weighted mean power over a window."""
    return integrate_j(times_s, power_w, start_s, end_s) / (end_s - start_s)


def disagreement_pct(counter_j: float, trace_j: float) -> float:
    """|counter - trace| relative to the counter, in percent."""
    if counter_j <= 0:
        return float("inf")
    return abs(counter_j - trace_j) / counter_j * 100.0


def dynamic_j(energy_j: float, idle_power_w: float, duration_s: float) -> float:
    """Energy above the loaded-idle floor: what the work itself added."""
    return energy_j - idle_power_w * duration_s


def reconstruct_per_token_j(block_energy_j: float, block_tokens: int, prefill_j: float, tokens: int) -> float:
    """Energy per token of a `tokens`-long generation from a `block_tokens`-long one.

    A greedy generation of n new tokens costs P + (n - 1) * d: one prefill (the prompt's forward pass,
    which yields the first token, plus the per-call overhead) and n - 1 decode steps. With P measured
    separately, d = (E_block - P) / (block_tokens - 1) and E(tokens) = P + (tokens - 1) * d.
    """
    if block_tokens == tokens:
        return block_energy_j / tokens
    if block_tokens < 2:
        raise ValueError("block_tokens must be at least 2 to separate decode from prefill")
    decode_j = (block_energy_j - prefill_j) / (block_tokens - 1)
    return (prefill_j + (tokens - 1) * decode_j) / tokens


def _changes(times_s: Sequence[float], values: Sequence[float]) -> tuple[list[float], list[float], tuple]:
    """(times, values) of the first reading and of every change, each change placed midway between the
    reading that last showed the old value and the first that shows the new one; NaN readings are
    skipped. Also returns the last finite reading as (time, value), or () when there is none."""
    ts: list[float] = []
    vs: list[float] = []
    prev_t = prev_v = None
    for t, v in zip(times_s, values, strict=True):
        if v != v:  # NaN: a tick where this quantity was not read
            continue
        if prev_v is None:
            ts.append(t)
            vs.append(v)
        elif v != prev_v:
            ts.append(0.5 * (prev_t + t))
            vs.append(v)
        prev_t, prev_v = t, v
    return ts, vs, (() if prev_t is None else (prev_t, prev_v))


def counter_steps(times_s: Sequence[float], counter_j: Sequence[float]) -> tuple[list[float], list[float]]:
    """Change points of a sampled cumulative counter: (time, value) where the value moved.

    NVML's energy counter advances in steps (every ~100 ms), so reading it around a short
    window is off by up to one step at each edge. Each step is placed midway between the reading that
    last showed the old value and the first that shows the new one; between steps the cumulative energy
    grows linearly. NaN entries (ticks where the counter was not read) are skipped.
    """
    ts, cs, _ = _changes(times_s, counter_j)
    return ts, cs


def power_steps(times_s: Sequence[float], power_w: Sequence[float]) -> tuple[list[float], list[float]]:
    """The power trace as the points where the reading changed, for integration.

    NVML's instant power field refreshes every ~100 ms while the sampler reads it every 10 ms, so the
    raw trace is a staircase. Held from the reading that first shows it, each value would count late: a
    refreshed value matches the counter's mean power over the 100 ms before its change, and a held
    staircase moves energy from FP16's windows into the quantized windows after them (measure/README.md,
    "Counter-vs-trace figures"). Each new value is therefore placed where it changed, as the counter's
    steps are, and the trace runs linearly between those points; the last reading is kept so the trace
    spans the record. A source whose value
    changes on every reading keeps every sample (moved by half a sample interval). NaN readings are
    skipped.
    """
    ts, ps, last = _changes(times_s, power_w)
    if last and ts[-1] != last[0]:
        ts.append(last[0])
        ps.append(last[1])
    return ts, ps


def counter_window_j(steps: tuple[list[float], list[float]], start_s: float, end_s: float) -> float | None:
    """Counter energy over [start_s, end_s], interpolated between its steps; None outside their span."""
    ts, cs = steps
    if len(ts) < 2 or start_s < ts[0] or end_s > ts[-1]:
        return None
    return power_at(ts, cs, end_s) - power_at(ts, cs, start_s)


# NVML's counter moves every ~100 ms; ten times that with no step is a counter that stopped
COUNTER_STALL_S = 1.0


def trace_gap_s(times_s: Sequence[float], start_s: float, end_s: float) -> float:
    """Longest stretch of [start_s, end_s] without a power sample (bracketing samples included);
    inf when the trace does not reach the end (the sampler stopped)."""
    if not times_s or times_s[-1] < end_s:
        return math.inf
    lo = max(0, bisect_right(times_s, start_s) - 1)
    hi = bisect_left(times_s, end_s)
    # the sampler's first sample may come just after the window opened: that stretch counts as a gap
    seg = [start_s, *times_s[: hi + 1]] if times_s[0] > start_s else times_s[lo : hi + 1]
    return max((b - a for a, b in zip(seg, seg[1:], strict=False)), default=0.0)


def gap_limit_s(times_s: Sequence[float]) -> float:
    """A trace gap worth recording: five typical sample intervals, and never under 50 ms."""
    if len(times_s) < 3:
        return 0.05
    steps = sorted(b - a for a, b in zip(times_s, times_s[1:], strict=False))
    return max(0.05, 5 * steps[len(steps) // 2])


def counter_stall_s(
    steps: tuple[list[float], list[float]], start_s: float, end_s: float, last_read_s: float
) -> float:
    """Longest time the counter showed no step while overlapping [start_s, end_s]; the stretch from the
    last step to the last reading counts too (a counter that stopped for good). inf with no steps."""
    ts = list(steps[0])
    if not ts:
        return math.inf
    if last_read_s > ts[-1]:
        ts.append(last_read_s)
    return max((b - a for a, b in zip(ts, ts[1:], strict=False) if b > start_s and a < end_s), default=0.0)
