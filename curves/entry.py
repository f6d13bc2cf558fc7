"""One fitted group's curves.json entry: its scatters (sigma, tau), band, crossover and anchors (pure)."""

from __future__ import annotations

import math

import numpy as np

from curves.band import covariance, sigma_points
from curves.condition import REFERENCE_CONDITION
from curves.lsq import crossover, on_bound
from curves.model import THETA_NAMES
from curves.repeats import standard_error_pp

WEIGHTING = "inverse variance: 1 / (se^2 + tau^2), se from each run's own t interval, tau between runs"
# Per-anchor provenance written only when the row has it (the published rows carry none of it).
ANCHOR_PROVENANCE = (
    "weights",
    "report",
    "report_sha256",
    "ci95_half_width_pp",
    "report_id",
    "gpu_uuid_sha256",
)


def round_sig(value: float, digits: int) -> float:
    out = float(f"{value:.{digits}g}")
    return 0.0 if out == 0 else out


def pooled_residual_sds(rss_dof: dict[str, list[tuple[float, int]]]) -> dict[str, float | None]:
    """sqrt(sum RSS / sum dof) per precision and over all ("*") from (rss, dof) pairs, skipping dof = 0."""
    pooled = {}
    everything = [pair for pairs in rss_dof.values() for pair in pairs]
    for prec, pairs in sorted({**rss_dof, "*": everything}.items()):
        sel = [(rss, dof) for rss, dof in pairs if dof > 0]
        dof = sum(d for _, d in sel)
        pooled[prec] = math.sqrt(sum(r for r, _ in sel) / dof) if dof > 0 else None
    return pooled


def _weighted_sigmas(g: dict, floor: float, pool_sd: float | None, pool_src: str) -> tuple:
    """Scatters of a weighted group. chi^2/dof above 1 (lack of fit beyond se and tau) scales the
    covariance and adds to a new run's scatter; a new run lands tau from the card's curve (tau from the
    repeats; without repeats the published pooled sd stands in, as for any group that cannot tell)."""
    sd, dof = g["sd"], g["dof"]
    resid_pp = np.asarray(g["resid"])
    own_sd = math.sqrt(float(np.sum(resid_pp**2)) / dof) if dof > 0 else None
    phi = max(1.0, g["rss"] / dof) if dof > 0 else 1.0
    cov = covariance(g["n_b"], g["theta"], g["free"], math.sqrt(phi), sd=sd)
    mean_var = float(np.mean(sd**2))
    sigma_fit, sigma_fit_src = math.sqrt(phi * mean_var), "runs: sqrt(chi2/dof * mean(se^2 + tau^2))"
    tau = (g["between"] or {}).get("tau_pp")
    if tau is None:
        candidates = [(own_sd or 0.0, "own"), (pool_sd or 0.0, pool_src), (floor, "repeatability-floor")]
    else:
        lack = math.sqrt(tau**2 + (phi - 1.0) * mean_var)
        candidates = [(lack, "between-run"), (floor, "repeatability-floor")]
    sigma, sigma_src = max(candidates, key=lambda c: c[0])
    return own_sd, sigma_fit, sigma_fit_src, sigma, sigma_src, cov


def _tau_pp(g: dict, r) -> float | None:
    """The weighted group's between-run sd when its repeats estimate one, else None."""
    tau = (g["between"] or {}).get("tau_pp") if g["sd"] is not None else None
    return None if tau is None else r(tau)


def _weighted_extras(g: dict, r) -> dict:
    """What a weighted group adds to its entry: the weighting, the between-run estimate, the trend test."""
    if g["sd"] is None:
        return {}
    b = g["between"]
    t = g["trend"]
    return {
        "weighting": WEIGHTING,
        "between_run": {
            "tau_pp": None if b["tau_pp"] is None else r(b["tau_pp"]),
            "df": b["df"],
            "q": None if b["q"] is None else r(b["q"]),
            "p_value": None if b["p_value"] is None else r(b["p_value"]),
            "method": "DerSimonian-Laird moments over runs of one size, pooled over sizes",
        },
        "trend": {**t, "p_value": None if t["p_value"] is None else r(t["p_value"])},
        "chi2": r(g["rss"]),
    }


def group_entry(key: str, g: dict, pooled: dict, settings: dict) -> dict:
    """The curves.json entry of one fitted group (`g` from fit_group), its band included."""
    digits = settings["significant_digits"]
    r = lambda v: round_sig(v, digits)  # noqa: E731
    arch, precision, backend = key.split("/")
    theta, fres = g["theta"], g["fit"]
    a, s, n_star = float(theta[0]), float(theta[1]), math.exp(theta[2])
    own_sd = math.sqrt(g["rss"] / g["dof"]) if g["dof"] > 0 else None
    pool_sd, pool_src = (
        (pooled[precision], f"pooled:{precision}") if pooled.get(precision) else (pooled["*"], "pooled:all")
    )
    floor = math.sqrt(2.0) * settings["repeatability_cv_pct"] * max(0.0, 1.0 + float(np.mean(g["y"])) / 100)
    # The anchors' own noise drives the parameter covariance; a new setup scatters at least as much
    # as the pooled between-setup residual (only pooled groups hold more than one card).
    if g["sd"] is None:
        fit_candidates = [(own_sd, "own")] if own_sd is not None else [(pool_sd or 0.0, pool_src)]
        sigma_fit, sigma_fit_src = max([*fit_candidates, (floor, "repeatability-floor")], key=lambda c: c[0])
        candidates = [(own_sd or 0.0, "own"), (pool_sd or 0.0, pool_src), (floor, "repeatability-floor")]
        sigma, sigma_src = max(candidates, key=lambda c: c[0])
        cov = covariance(g["n_b"], theta, g["free"], sigma_fit)
    else:
        weighted = _weighted_sigmas(g, floor, pool_sd, pool_src)
        own_sd, sigma_fit, sigma_fit_src, sigma, sigma_src, cov = weighted
    points = sigma_points(theta, cov)
    lo_b, hi_b = float(np.min(g["n_b"])), float(np.max(g["n_b"]))
    cross, cross_note = crossover(a, s, n_star, lo_b, hi_b)
    bound_flags = on_bound(theta, fres["lo"], fres["hi"])
    if not fres["n_star_free"]:
        bound_flags["N_star"] = None
    lo_r = [r(float(v)) for v in fres["lo"]]
    hi_r = [r(float(v)) for v in fres["hi"]]
    sources = sorted({p["source"] for p in g["points"]})
    weights = sorted({p["weights"] or "not recorded" for p in g["points"]})
    return {
        "arch": arch,
        "precision": precision,
        "backend": backend,
        "borrowed_from": None,
        "condition": dict(REFERENCE_CONDITION),
        "source": " + ".join(sources),
        "weights": weights[0] if len(weights) == 1 else "mixed",
        "n_points": len(g["points"]),
        "params": {"A": r(a), "S": r(s), "N_star": r(n_star)},
        "free": dict(zip(("A", "S", "N_star"), g["free"], strict=True)),
        "n_star_rule": "fitted" if fres["n_star_free"] else "median size (fewer points or S = 0)",
        "bounds": {
            "A": [lo_r[0], hi_r[0]],
            "S": [lo_r[1], hi_r[1]],
            "N_star": list(settings["n_star_bounds_b"]),
        },
        "on_bound": bound_flags,
        "rms_pp": r(math.sqrt(g["rss"] / len(g["points"]))),
        "residual_sd_pp": None if own_sd is None else r(own_sd),
        "dof": g["dof"],
        "sigma_fit_pp": r(sigma_fit),
        "sigma_fit_source": sigma_fit_src,
        "sigma_pp": r(sigma),
        "sigma_source": sigma_src,
        "loo_rmse_pp": None if g["loo"] is None else r(g["loo"]),
        "size_range_b": [r(lo_b), r(hi_b)],
        "crossover_b": None if cross is None else r(cross),
        "crossover_note": cross_note,
        "band": {
            "method": "sigma-points",
            "theta": list(THETA_NAMES),
            "cov": [[r(float(v)) for v in row] for row in cov],
            "sigma_points": [
                {"A": r(float(t[0])), "S": r(float(t[1])), "N_star": r(math.exp(t[2]))} for t in points
            ],
            "sigma_pp": r(sigma),
            "sigma_fit_pp": r(sigma_fit),
            "k_per_doubling": settings["k_per_doubling"],
            "size_tolerance_rel": settings["size_tolerance_rel"],
            "range_b": [r(lo_b), r(hi_b)],
            "a_bounds": [lo_r[0], hi_r[0]],
            "s_bounds": [lo_r[1], hi_r[1]],
            "n_star_bounds_b": list(settings["n_star_bounds_b"]),
            # Between-run sd from the repeats (None: no repeats); with each run's own se it lets the grader
            # compare a run of an anchored model with that model's own runs (curves/README.md).
            "tau_pp": _tau_pp(g, r),
        },
        "anchors": [
            {
                "gpu": p["gpu"],
                "model": p["model"],
                "params_b": r(p["params_b"]),
                "delta_e_pct": r(p["delta_e_pct"]),
                "n_trials": p["n_trials"],
                "residual_pp": r(-float(e)),
                "note": p["note"],
                **{k: p[k] for k in ANCHOR_PROVENANCE if p[k] is not None},
                **({} if (se := standard_error_pp(p)) is None else {"se_pp": r(se)}),
            }
            for p, e in zip(g["points"], g["resid"], strict=True)
        ],
        **_weighted_extras(g, r),
    }
