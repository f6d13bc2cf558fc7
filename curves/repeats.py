"""Runs of the same size: each run's own standard error, the scatter between runs, and the size-trend test.

The project's own anchors are whole runs with their paired-block intervals. Repeat runs (other processes,
seeds, cards) scatter beyond those intervals, so a run's interval is not the uncertainty of "this card".
The between-run variance tau^2 is estimated from every set of runs of one size (method of moments,
DerSimonian & Laird 1986, pooled over sizes), and each run is then weighted by 1 / (se^2 + tau^2).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import chi2, f, t

TREND_ALPHA = 0.05


def standard_error_pp(point: dict) -> float | None:
    """The run's own se of ΔE% from its 95 % t interval over n paired blocks; None without one."""
    half, n = point.get("ci95_half_width_pp"), point.get("n_trials")
    if half is None or n is None or n < 2 or not math.isfinite(half) or half < 0:
        return None
    return float(half) / float(t.ppf(0.975, n - 1))


def size_clusters(sizes: np.ndarray, tol: float) -> list[list[int]]:
    """Indices of runs of one size (within the size tolerance of the cluster's smallest), by size."""
    order = sorted(range(len(sizes)), key=lambda i: (float(sizes[i]), i))
    clusters: list[list[int]] = []
    for i in order:
        if clusters and sizes[i] <= sizes[clusters[-1][0]] * (1.0 + tol):
            clusters[-1].append(i)
        else:
            clusters.append([i])
    return clusters


def between_run(y: np.ndarray, se: np.ndarray, sizes: np.ndarray, tol: float) -> dict:
    """tau^2 from the repeats of each size: Q = sum w (y - mean_w)^2 within sizes, df = sum (k - 1),
    tau^2 = max(0, (Q - df) / C), C = sum over sizes of (sum w - sum w^2 / sum w). df = 0: no repeats,
    tau unknown. p is the chance of a Q this large if runs scattered only by their own intervals."""
    q = c = 0.0
    df = 0
    for idx in size_clusters(sizes, tol):
        if len(idx) < 2:
            continue
        w = 1.0 / se[idx] ** 2
        mean = float(np.sum(w * y[idx]) / np.sum(w))
        q += float(np.sum(w * (y[idx] - mean) ** 2))
        c += float(np.sum(w) - np.sum(w**2) / np.sum(w))
        df += len(idx) - 1
    if df == 0:
        return {"tau_pp": None, "df": 0, "q": None, "p_value": None}
    tau2 = max(0.0, (q - df) / c) if c > 0 else 0.0
    return {"tau_pp": math.sqrt(tau2), "df": df, "q": q, "p_value": float(chi2.sf(q, df))}


def trend_p_value(chi2_flat: float, chi2_curve: float, extra_params: int) -> float | None:
    """p of the drop in chi^2 from a flat line to the fitted curve (variances known, so the drop is
    chi^2 with `extra_params` dof under a flat truth); None when the curve has no extra free parameter."""
    if extra_params < 1:
        return None
    return float(chi2.sf(max(0.0, chi2_flat - chi2_curve), extra_params))


def trend_p_value_unknown_scale(chi2_flat: float, chi2_curve: float, extra_params: int,
                                resid_dof: int) -> float | None:
    """p of the same drop when the runs' scatter is not known (no repeats, so no tau): the F ratio of
    the drop per extra parameter to the curve's residual chi^2 per dof, which scales the variances by
    what the residuals show; None without an extra parameter or a residual dof."""
    if extra_params < 1 or resid_dof < 1 or chi2_curve <= 0:
        return None if extra_params < 1 or resid_dof < 1 else 0.0
    ratio = (max(0.0, chi2_flat - chi2_curve) / extra_params) / (chi2_curve / resid_dof)
    return float(f.sf(ratio, extra_params, resid_dof))
