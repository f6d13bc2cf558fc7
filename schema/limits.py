"""Tolerances and plausibility limits of the semantic checks (each documented in schema/README.md)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

# dE% recomputed from the two printed energies: agreement within their rounding plus this slack.
DELTA_E_SLACK_PP = 0.2
# energy per token vs total / tokens, arms vs results, trial sums vs totals: rounding plus this share.
RATIO_SLACK = 0.005
# avg power x duration vs total energy: the power may come from the trace and the energy from the counter.
POWER_TIME_REL = 0.10
# avg power / throughput vs energy per token (a warning): legacy reports may average power per sample.
POWER_THROUGHPUT_REL = 0.15
# counter vs trace: the report's own agreement.threshold_pct, else this (the H200 showed a median 0.25 %).
COUNTER_TRACE_DEFAULT_PCT = 5.0
# ... and never more than this in a measured report, whatever threshold it states (an error, QJ222).
COUNTER_TRACE_MAX_PCT = 5.0
# The most freedom the rounding of the two printed energies may leave the stated dE% (QJ219): with the
# 0.2 pp slack on each side, a stated dE% is pinned to within 1 pp, a fraction of the smallest sigma the
# grader uses (the single-trial floor, 2.8 pp at dE 0), so rounding cannot choose a verdict.
MAX_DELTA_E_ROUNDING_PP = 0.6
# A run may finish at most this long after the submission that carries it (contributors' clocks drift,
# and some write local time as UTC); anything later is in the future (QJ221).
FUTURE_SKEW_S = 86_400.0
# params_b vs the named model: nominal (name) and counted (checkpoint) sizes differ by up to ~9 %.
PARAMS_REL = 0.20
# Power: an average cannot exceed the enforced limit; margin for reading error and short overshoot.
POWER_LIMIT_FACTOR = 1.10
POWER_LIMIT_MARGIN_W = 10.0
# Without a power limit in the report: above any single card shipped so far (B200 1,000 W).
POWER_CAP_UNKNOWN_W = 1500.0
# 1 kJ per generated token: orders of magnitude above any batch-1 run of the known models.
MAX_ENERGY_PER_TOKEN_MJ = 1_000_000.0
MAX_PARAMS_B = 2000.0
# Statistics recomputed from the trials agree within what the rounding of the printed trial energies can
# move them, plus the reported figure's own rounding and this much relative slack (float noise, and the
# t quantile a writer may round to 4 digits).
STATS_SLACK_REL = 1e-4


def half_unit(value) -> float:
    """Half a unit in the last printed decimal place of `value`: the rounding it may carry."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        exponent = Decimal(repr(value)).as_tuple().exponent
    except (InvalidOperation, ValueError):
        return 0.0
    if not isinstance(exponent, int):
        return 0.0
    return 0.5 * 10.0**exponent


# measure writes a v2 report's floats at this many significant figures (measure.core.report.round_floats),
# so a v2 energy printed with fewer had trailing zeros: its precision is still this many figures.
V2_SIGNIFICANT_DIGITS = 6


def written_half_unit(value, v2: bool) -> float:
    """The rounding `value` may carry as written: half a unit of its last printed place, and in a v2 report
    never more than half a unit of its V2_SIGNIFICANT_DIGITS-th figure (5.50000 prints as 5.5)."""
    printed = half_unit(value)
    if not v2 or not printed or not value:
        return printed
    try:
        top = Decimal(repr(value)).adjusted()
    except (InvalidOperation, ValueError):
        return printed
    return min(printed, 0.5 * 10.0 ** (top - (V2_SIGNIFICANT_DIGITS - 1)))


def intervals_meet(low_a: float, high_a: float, low_b: float, high_b: float, slack: float) -> bool:
    """True when the intervals [low_a, high_a] and [low_b, high_b] are at most `slack` apart."""
    return low_a <= high_b + slack and low_b <= high_a + slack
