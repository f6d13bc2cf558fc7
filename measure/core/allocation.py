"""Which quantized arm the next paired block compares with FP16 when blocks go where the noise is.

With `allocation="even"` the quantized arms take turns (a seeded shuffled round each). With "target",
once every arm has `MIN_BLOCKS` blocks, each block goes to the arm whose dE% interval is furthest
from its target, i.e. the largest ratio

    t(0.975, n-1) * sd / sqrt(n)  /  max(3 pp, 5 % of |mean dE%|)

over the blocks it has so far. The arms differ in cost and noise (an LLM.int8() block costs more than an
NF4 block while its target is looser: measure/README.md), so an even split leaves one arm far inside its
target while the other is outside. Minimising the worst ratio is what "every arm within target" needs.

The running dE% comes from the power readings as read (available as soon as the sampler has passed a
window; the counter needs another refresh, and placing the readings where they changed, as the reports
do, would redo the whole trace before every block), and decides only which arm runs next: the
reported statistics are computed after the run from every block, as for "even". The rule looks at
spread, not at the sign or size of the difference beyond the 5 % term, so it cannot steer the estimate.
"""

from __future__ import annotations

from collections.abc import Sequence

from measure.core.energy import integrate_j
from measure.core.stats import summarise, target_half_width_pp

MIN_BLOCKS = 5  # per arm before its spread is trusted; until then the arms take turns


def need(deltas_pct: Sequence[float]) -> float | None:
    """CI95 half-width of the mean over its target; None with fewer than MIN_BLOCKS values."""
    if len(deltas_pct) < max(2, MIN_BLOCKS):
        return None
    s = summarise(deltas_pct)  # the same t interval the reports give
    return s["ci95_half_width_pp"] / target_half_width_pp(s["mean"])


def choose(running: dict[str, list[float]], candidates: Sequence[str]) -> str | None:
    """The candidate with the largest need, first in `candidates` on a tie; None while any candidate
    lacks MIN_BLOCKS estimates (the caller then keeps the even rounds)."""
    needs = {a: need(running.get(a, [])) for a in candidates}
    if not candidates or any(v is None for v in needs.values()):
        return None
    return max(candidates, key=lambda a: (needs[a], -candidates.index(a)))


def covered(windows: Sequence, times_s: Sequence[float]) -> bool:
    """Whether the trace reaches past the block's last window (the sampler runs ~10 ms behind)."""
    return bool(windows) and bool(times_s) and times_s[-1] >= max(w.end_s for w in windows)


def block_delta_pct(
    windows: Sequence, times_s: Sequence[float], power_w: Sequence[float]
) -> tuple[str, float] | None:
    """(quantized arm, dE%) of one paired block from a trace that covers it; None when the block
    lacks one of its two arms (an arm failed inside it)."""
    energy: dict[str, float] = {}
    tokens: dict[str, int] = {}
    for w in windows:
        energy[w.arm] = energy.get(w.arm, 0.0) + integrate_j(times_s, power_w, w.start_s, w.end_s)
        tokens[w.arm] = tokens.get(w.arm, 0) + w.tokens
    quant = [a for a in energy if a != "FP16"]
    if len(quant) != 1 or "FP16" not in energy or not tokens["FP16"] or not tokens[quant[0]]:
        return None
    fp16 = energy["FP16"] / tokens["FP16"]
    if fp16 <= 0:
        return None
    return quant[0], (energy[quant[0]] / tokens[quant[0]] - fp16) / fp16 * 100.0
