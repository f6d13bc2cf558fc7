"""The saturating crossover model, its gradient, and the prediction band of a curves.json group."""

from __future__ import annotations

import math

MODEL_TEXT = "dE%(N) = A - S*x/(1+x), x = N/N*"
THETA_NAMES = ("A", "S", "ln_N_star")


def curve_pct(params_b: float, a_pct: float, s_pct: float, n_star_b: float) -> float:
    """ΔE% of the model at size `params_b` (billions of parameters)."""
    x = params_b / n_star_b
    return a_pct - s_pct * x / (1.0 + x)


def gradient(params_b: float, a_pct: float, s_pct: float, n_star_b: float) -> tuple[float, float, float]:
    """d ΔE% / d (A, S, ln N*) at `params_b`; the band's covariance is over the same three coordinates."""
    x = params_b / n_star_b
    return (1.0, -x / (1.0 + x), s_pct * x / (1.0 + x) ** 2)


def extrapolation_doublings(params_b: float, band: dict) -> float:
    """How far `params_b` lies outside the measured sizes (widened by the size tolerance), in doublings."""
    lo_b, hi_b = band["range_b"]
    tol = band["size_tolerance_rel"]
    lo_edge = lo_b / (1.0 + tol)
    hi_edge = hi_b * (1.0 + tol)
    if params_b > hi_edge:
        return math.log2(params_b / hi_edge)
    if params_b < lo_edge:
        return math.log2(lo_edge / params_b)
    return 0.0


def admissible_half_width(params_b: float, band: dict) -> float:
    """Half the spread of ΔE% that any parameters inside the published bounds can give at `params_b`.

    No distribution on an interval of width W has variance above (W/2)^2, so this caps the parameter
    variance where the sigma points (unbounded normal draws) reach beyond what the bounded model can produce.
    """
    (a_lo, a_hi), (s_lo, s_hi), (n_lo, n_hi) = band["a_bounds"], band["s_bounds"], band["n_star_bounds_b"]
    x_max = params_b / n_lo
    x_min = params_b / n_hi
    low = a_lo - s_hi * x_max / (1.0 + x_max)
    high = a_hi - s_lo * x_min / (1.0 + x_min)
    return (high - low) / 2.0


def parameter_variance(group: dict, params_b: float) -> float:
    """Variance (pp^2) of ΔE% at `params_b` from the parameter uncertainty: the mean squared deviation of
    the curve at the six stored sigma points from the fitted curve, capped at the admissible half-width^2."""
    p = group["params"]
    band = group["band"]
    mean = curve_pct(params_b, p["A"], p["S"], p["N_star"])
    points = band["sigma_points"]
    var = sum((curve_pct(params_b, q["A"], q["S"], q["N_star"]) - mean) ** 2 for q in points) / len(points)
    return min(var, admissible_half_width(params_b, band) ** 2)


def delta_method_variance(group: dict, params_b: float) -> float:
    """The linearised parameter variance g' C g (same cap), kept to show what the sigma points correct."""
    p = group["params"]
    g = gradient(params_b, p["A"], p["S"], p["N_star"])
    cov = group["band"]["cov"]
    var = sum(g[i] * cov[i][j] * g[j] for i in range(3) for j in range(3))
    return min(max(var, 0.0), admissible_half_width(params_b, group["band"]) ** 2)


def predict_group(group: dict, params_b: float, variance=parameter_variance) -> tuple[float, float]:
    """(mean ΔE%, prediction sd in pp) of `group` at `params_b`.

    sd = sqrt(v + sigma^2) * (1 + k * d): v the parameter variance from the sigma points (capped by the
    admissible half-width h), sigma the scatter of a new setup around the curve, inflated by k per doubling
    of distance d outside the measured sizes. The gallery evaluates the same formula in JavaScript from the
    same stored numbers. `variance` exists so the calibration can show the delta method side by side.
    """
    if not (isinstance(params_b, (int, float)) and math.isfinite(params_b) and params_b > 0):
        raise ValueError(f"params_b must be a positive finite number, got {params_b!r}")
    p = group["params"]
    band = group["band"]
    mean = curve_pct(params_b, p["A"], p["S"], p["N_star"])
    var = variance(group, params_b) + band["sigma_pp"] ** 2
    inflation = 1.0 + band["k_per_doubling"] * extrapolation_doublings(params_b, band)
    return mean, math.sqrt(var) * inflation
