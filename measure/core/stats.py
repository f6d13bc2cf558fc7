"""Summary statistics and the paired-block confidence interval of dE%."""

from __future__ import annotations

import math
import statistics as st
from collections.abc import Sequence

from scipy import stats as sps


def delta_pct(quant: float, fp16: float) -> float:
    """(quant - fp16) / fp16 in percent."""
    return (quant - fp16) / fp16 * 100.0


def summarise(values: Sequence[float]) -> dict:
    """median, mean, sd, cv and the 95 % t interval of the mean (sd/ci null for n < 2)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    n = len(xs)
    if n == 0:
        return {
            "n": 0,
            "median": None,
            "mean": None,
            "sd": None,
            "cv": None,
            "ci95_low": None,
            "ci95_high": None,
            "ci95_half_width_pp": None,
        }
    mean = st.fmean(xs)
    out = {
        "n": n,
        "median": st.median(xs),
        "mean": mean,
        "sd": None,
        "cv": None,
        "ci95_low": None,
        "ci95_high": None,
        "ci95_half_width_pp": None,
    }
    if n >= 2:
        sd = st.stdev(xs)
        half = float(sps.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
        out.update(
            sd=sd,
            cv=(sd / abs(mean) if mean else None),
            ci95_low=mean - half,
            ci95_high=mean + half,
            ci95_half_width_pp=half,
        )
    return out


def target_half_width_pp(delta_e_pct: float) -> float:
    """The noise target: max(3 pp, 5 % of |dE%|)."""
    return max(3.0, 0.05 * abs(delta_e_pct))


def trimmed_summary(values: Sequence[float], trim: float = 0.1) -> dict:
    """Yuen's trimmed mean and its 95 % interval (winsorised variance, h - 1 dof): for heavy-tailed timing
    data, where a few blocks that straddle a jump in host speed dominate the plain standard deviation."""
    xs = sorted(float(v) for v in values if v is not None and math.isfinite(v))
    n = len(xs)
    k = int(math.floor(trim * n))
    h = n - 2 * k
    if h < 2:
        return {"n": n, "trim": trim, "mean": None, "ci95_half_width_pp": None}
    kept = xs[k : n - k]
    lo, hi = xs[k], xs[n - k - 1]
    sw = st.stdev([min(max(v, lo), hi) for v in xs])
    half = float(sps.t.ppf(0.975, h - 1)) * sw / ((1 - 2 * trim) * math.sqrt(n))
    return {"n": n, "trim": trim, "mean": st.fmean(kept), "ci95_half_width_pp": half}
