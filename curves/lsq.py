"""Bounded least squares of one group's points onto the crossover model, with the size-trend test (scipy)."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import least_squares

from curves.repeats import TREND_ALPHA, trend_p_value, trend_p_value_unknown_scale


def _bounds(y: np.ndarray, precision: str, settings: dict) -> tuple[np.ndarray, np.ndarray]:
    max_de = float(np.max(y))
    cap = settings["s_cap_pct"][precision]
    n_lo, n_hi = settings["n_star_bounds_b"]
    lo = np.array([settings["a_lower_pct"], 0.0, math.log(n_lo)])
    hi = np.array([max_de + settings["a_upper_margin_pct"], cap + max(0.0, max_de), math.log(n_hi)])
    return lo, hi


def residuals(theta: np.ndarray, n_b: np.ndarray, y: np.ndarray, sd: np.ndarray | None = None) -> np.ndarray:
    x = n_b / math.exp(theta[2])
    r = theta[0] - theta[1] * x / (1.0 + x) - y
    return r if sd is None else r / sd


def jacobian(theta: np.ndarray, n_b: np.ndarray, y: np.ndarray, sd: np.ndarray | None = None) -> np.ndarray:
    x = n_b / math.exp(theta[2])
    jac = np.column_stack([np.ones_like(x), -x / (1.0 + x), theta[1] * x / (1.0 + x) ** 2])
    return jac if sd is None else jac / sd[:, None]


def weighted_mean(y: np.ndarray, sd: np.ndarray | None) -> float:
    return float(np.mean(y)) if sd is None else float(np.sum(y / sd**2) / np.sum(1.0 / sd**2))


def fit_points(
    n_b: np.ndarray, y: np.ndarray, precision: str, settings: dict, sd: np.ndarray | None = None
) -> dict:
    """Best bounded least-squares (A, S, ln N*) over a fixed multi-start grid; ties keep the first start.
    With `sd` (one per point) the residuals are weighted by 1/sd and `rss` is chi^2."""
    lo, hi = _bounds(y, precision, settings)
    grid = settings["multistart"]
    fixed_ln_n = None
    if len(n_b) < settings["min_points_free_n_star"]:
        fixed_ln_n = math.log(float(np.median(n_b)))

    def starts(i: int, count: int) -> list[float]:
        return [lo[i] + (hi[i] - lo[i]) * (k + 0.5) / count for k in range(count)]

    best = None
    for a0 in starts(0, grid["A"]):
        for s0 in starts(1, grid["S"]):
            for l0 in [fixed_ln_n] if fixed_ln_n is not None else starts(2, grid["ln_N_star"]):
                if fixed_ln_n is None:
                    res = least_squares(
                        residuals,
                        [a0, s0, l0],
                        jac=jacobian,
                        bounds=(lo, hi),
                        args=(n_b, y, sd),
                        method="trf",
                        xtol=1e-12,
                        ftol=1e-12,
                        gtol=1e-12,
                        max_nfev=5000,
                    )
                    theta = res.x
                else:
                    res = least_squares(
                        lambda t: residuals(np.array([t[0], t[1], fixed_ln_n]), n_b, y, sd),
                        [a0, s0],
                        bounds=(lo[:2], hi[:2]),
                        method="trf",
                        jac=lambda t: jacobian(np.array([t[0], t[1], fixed_ln_n]), n_b, y, sd)[:, :2],
                        xtol=1e-12,
                        ftol=1e-12,
                        gtol=1e-12,
                        max_nfev=5000,
                    )
                    theta = np.array([res.x[0], res.x[1], fixed_ln_n])
                cost = float(np.sum(residuals(theta, n_b, y, sd) ** 2))
                if best is None or cost < best[0] - 1e-9 * (1.0 + best[0]):
                    best = (cost, theta)
    theta = best[1].copy()
    n_star_free = fixed_ln_n is None
    # S at zero makes the curve flat and N* meaningless: pin it to the median size so the output is unique.
    if theta[1] <= 1e-6 * hi[1]:
        theta = np.array([weighted_mean(y, sd), 0.0, math.log(float(np.median(n_b)))])
        if float(np.sum(residuals(theta, n_b, y, sd) ** 2)) <= best[0] + 1e-9 * (1.0 + best[0]):
            n_star_free = False
        else:
            theta = best[1].copy()
    return {
        "theta": theta,
        "lo": lo,
        "hi": hi,
        "n_star_free": n_star_free,
        "rss": float(np.sum(residuals(theta, n_b, y, sd) ** 2)),
    }


def fit_with_trend(
    n_b: np.ndarray, y: np.ndarray, precision: str, settings: dict, sd: np.ndarray, scatter_known: bool = True
) -> tuple:
    """(fit, trend) for weighted points: the curve is kept only when its drop in chi^2 from a flat line
    (the weighted mean) is significant at TREND_ALPHA; otherwise the flat line is the fit, so no
    crossover shape is drawn that the data do not support. Without repeats (`scatter_known` False) the
    runs' own intervals understate their scatter, so the drop is judged against the residuals (F test)."""
    res = fit_points(n_b, y, precision, settings, sd)
    flat_theta = np.array([weighted_mean(y, sd), 0.0, math.log(float(np.median(n_b)))])
    chi2_flat = float(np.sum(residuals(flat_theta, n_b, y, sd) ** 2))
    free = sum(free_mask(res))
    if scatter_known:
        test = "chi-square drop, flat line vs curve"
        p = trend_p_value(chi2_flat, res["rss"], free - 1)
    else:
        test = "F test of the chi-square drop against the residuals (no repeats: scatter unknown)"
        p = trend_p_value_unknown_scale(chi2_flat, res["rss"], free - 1, len(y) - free)
    supported = p is not None and p <= TREND_ALPHA
    trend = {
        "test": test,
        "alpha": TREND_ALPHA,
        "p_value": None if p is None else p,
        "supported": supported,
        "model": "curve" if supported else "flat",
    }
    if not supported:
        res = {**res, "theta": flat_theta, "n_star_free": False, "rss": chi2_flat}
    return res, trend


def on_bound(theta: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> dict:
    flags = {}
    for i, name in enumerate(("A", "S", "N_star")):
        tol = 1e-6 * (hi[i] - lo[i])
        flags[name] = "lower" if theta[i] <= lo[i] + tol else "upper" if theta[i] >= hi[i] - tol else None
    return flags


def free_mask(fres: dict) -> list[bool]:
    """Parameters estimated from the data: not pinned by a rule and not held by an active bound."""
    flags = on_bound(fres["theta"], fres["lo"], fres["hi"])
    return [flags["A"] is None, flags["S"] is None, fres["n_star_free"] and flags["N_star"] is None]


def crossover(a: float, s: float, n_star: float, lo_b: float, hi_b: float) -> tuple[float | None, str]:
    if not a > 0:
        return None, "A <= 0: quantization saves energy at every size"
    if not s > a:
        return None, "S <= A: quantization costs energy at every size"
    n_c = n_star * a / (s - a)
    if lo_b <= n_c <= hi_b:
        return n_c, "inside the measured size range"
    return None, f"N*A/(S-A) = {n_c:.3g} B lies outside the measured sizes"
