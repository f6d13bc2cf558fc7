"""Reproducible least-squares fit of the anchor rows into curves.json (pure; scipy)."""

from __future__ import annotations

import copy
import hashlib
import json
import math

import numpy as np

from curves.anchors import normalise_rows
from curves.entry import group_entry, pooled_residual_sds, round_sig
from curves.lsq import fit_points, fit_with_trend, free_mask, residuals
from curves.model import MODEL_TEXT, curve_pct
from curves.repeats import between_run, standard_error_pp

CODE_VERSION = "quantjoule-curves-fit/7"

DEFAULT_SETTINGS: dict = {
    # The published anchors are eager; the project's own runs add the CUDA-graph (static) backend, which is
    # graded only against its own curve (the backend decides the sign of NF4's change on Hopper).
    "backends": ["eager", "static"],
    "a_lower_pct": -50.0,
    "a_upper_margin_pct": 50.0,
    "s_cap_pct": {"INT8": 50.0, "NF4": 75.0},
    "n_star_bounds_b": [0.1, 200.0],
    "min_points": 2,
    # Runs with their own intervals: one size already gives a flat reference (the trend test decides
    # when a size trend is drawn), banded by the published pooled scatter until repeats give tau.
    "min_points_weighted": 1,
    "min_points_free_n_star": 3,
    "borrows": {"hopper": "ampere"},
    # Only groups fitted wholly on these sources enter the pooled residual sd, so adding the project's own
    # runs never moves the published curves' bands.
    "pooled_sources": ["ecocompute"],
    "multistart": {"A": 4, "S": 4, "ln_N_star": 6},
    "size_tolerance_rel": 0.10,
    "k_per_doubling": 0.5,
    "repeatability_cv_pct": 2.0,
    "reference_software": {},
    "significant_digits": 6,
}

BAND_METHOD = (
    "sigma points: cov = sigma_fit^2 * pinv(J'J) over the free parameters of (A, S, ln N*) at the fitted "
    "optimum; six points theta +- sqrt(3) * sqrt(lambda_i) * v_i on its principal axes; parameter variance "
    "v(N) = mean over the points of (curve(N; point) - curve(N; theta))^2, capped at the admissible "
    "half-width squared; sd(N) = sqrt(v + sigma^2) * (1 + k * d), d = doublings outside the measured sizes "
    "widened by the size tolerance"
)


# Per-anchor provenance written only when the row has it (the published rows carry none of it).


def version_hash(rows: list[dict], settings: dict) -> str:
    """sha256 (16 hex) of the anchor rows as read, the fit settings and the code version."""
    canon_rows = [{str(k): "" if v is None else str(v) for k, v in row.items()} for row in rows]
    blob = json.dumps(
        {"anchors": canon_rows, "settings": settings, "code": CODE_VERSION},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def weighted_sd(points: list[dict], settings: dict) -> tuple[np.ndarray | None, dict | None]:
    """(per-point sqrt(se^2 + tau^2), between-run estimate) when every point is a run with its own
    interval (the project's anchors); (None, None) for the published rows, which are fitted unweighted."""
    se = [standard_error_pp(p) for p in points]
    if any(v is None or v <= 0 for v in se):
        return None, None
    se_a = np.array(se)
    between = between_run(
        np.array([p["delta_e_pct"] for p in points]),
        se_a,
        np.array([p["params_b"] for p in points]),
        settings["size_tolerance_rel"],
    )
    tau = between["tau_pp"] or 0.0
    return np.sqrt(se_a**2 + tau**2), between


def fit_group(points: list[dict], precision: str, settings: dict, *, loo: bool = True) -> dict:
    """Fit one group's points; `loo=False` skips the leave-one-out refits (the calibration's resampling).
    Runs with their own intervals are fitted weighted, with the size-trend test (`fit_with_trend`)."""
    n_b = np.array([p["params_b"] for p in points])
    y = np.array([p["delta_e_pct"] for p in points])
    sd, between = weighted_sd(points, settings)
    trend = None
    if sd is None:
        res = fit_points(n_b, y, precision, settings)
    else:
        known = between["tau_pp"] is not None
        res, trend = fit_with_trend(n_b, y, precision, settings, sd, known)
    theta = res["theta"]
    resid = residuals(theta, n_b, y)
    free = free_mask(res)
    dof = len(points) - sum(free)
    loo_rmse = None
    least = settings["min_points"] if sd is None else settings["min_points_weighted"]
    if loo and len(points) - 1 >= least:
        errs = []
        for i in range(len(points)):
            keep = np.arange(len(points)) != i
            if sd is None:
                t = fit_points(n_b[keep], y[keep], precision, settings)["theta"]
            else:
                t = fit_with_trend(n_b[keep], y[keep], precision, settings, sd[keep], known)[0]["theta"]
            errs.append(curve_pct(n_b[i], t[0], t[1], math.exp(t[2])) - y[i])
        loo_rmse = math.sqrt(float(np.mean(np.square(errs))))
    return {
        "points": points,
        "precision": precision,
        "n_b": n_b,
        "y": y,
        "theta": theta,
        "fit": res,
        "resid": resid,
        "rss": res["rss"],
        "dof": dof,
        "free": free,
        "loo": loo_rmse,
        "sd": sd,
        "between": between,
        "trend": trend,
    }


def group_points(anchor_rows: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    """Normalised anchor points per (arch, precision, backend), each list in a fixed order."""
    by_group: dict[tuple[str, str, str], list[dict]] = {}
    order = lambda p: (p["params_b"], p["gpu"], p["model"], p["delta_e_pct"], p["source"])  # noqa: E731
    for p in sorted(normalise_rows(anchor_rows), key=order):
        by_group.setdefault((p["arch"], p["precision"], p["backend"]), []).append(p)
    return by_group


def fit(anchor_rows: list[dict], settings: dict | None = None, *, loo: bool = True) -> dict:
    """curves.json content for `anchor_rows` (rows as read from the anchors CSV). Pure and deterministic.
    `loo=False` skips each group's leave-one-out refits: its `loo_rmse_pp` is then null, and nothing a
    verdict reads changes (the refits only measure the curve's out-of-sample error)."""
    settings = copy.deepcopy(DEFAULT_SETTINGS if settings is None else settings)
    fitted, unfitted = {}, {}
    for (arch, precision, backend), pts in sorted(group_points(anchor_rows).items()):
        key = f"{arch}/{precision}/{backend}"
        if backend not in settings["backends"]:
            unfitted[key] = f"backend {backend}: only {', '.join(settings['backends'])} anchors are fitted"
        elif precision not in settings["s_cap_pct"]:
            unfitted[key] = f"no published S cap for precision {precision}"
        elif len(pts) < (
            need := settings["min_points_weighted"]
            if weighted_sd(pts, settings)[0] is not None
            else settings["min_points"]
        ):
            unfitted[key] = f"{len(pts)} anchor point(s); at least {need} are needed"
        else:
            fitted[key] = fit_group(pts, precision, settings, loo=loo)

    rss_dof: dict[str, list[tuple[float, int]]] = {}
    pool_from = set(settings["pooled_sources"])
    for g in fitted.values():
        if not {p["source"] for p in g["points"]} <= pool_from:
            continue
        rss_dof.setdefault(g["precision"], []).append((g["rss"], g["dof"]))
    pooled = pooled_residual_sds(rss_dof)
    groups = {key: group_entry(key, g, pooled, settings) for key, g in fitted.items()}
    for to_arch, from_arch in sorted(settings["borrows"].items()):
        for key in sorted(groups):
            src = groups[key]
            new_key = f"{to_arch}/{src['precision']}/{src['backend']}"
            # An arch with anchors of its own (too few for a curve) never borrows: its own points say
            # more about it than another architecture's curve.
            own = new_key in groups or new_key in unfitted
            if src["arch"] == from_arch and src["borrowed_from"] is None and not own:
                groups[new_key] = {**copy.deepcopy(src), "arch": to_arch, "borrowed_from": from_arch}

    digits = settings["significant_digits"]
    return {
        "version": version_hash(anchor_rows, settings),
        "code_version": CODE_VERSION,
        "model": MODEL_TEXT,
        "band_method": BAND_METHOD,
        "settings": settings,
        "pooled_residual_sd_pp": {k: None if v is None else round_sig(v, digits) for k, v in pooled.items()},
        "groups": dict(sorted(groups.items())),
        "unfitted": unfitted,
    }


def dumps(curves: dict) -> str:
    """The canonical text of curves.json: same curves -> byte-identical file."""
    return json.dumps(curves, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
