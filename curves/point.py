"""The grading rule's numeric core for one point against one curve group: its reference (the model's own
runs, the same-size anchors or the curve), both scatters and z (pure; calibration runs it too)."""

from __future__ import annotations

import math

from curves.model import parameter_variance, predict_group

Z_LIMIT = 2.0


def single_trial_floor_pp(obs_pct: float, cv_pct: float) -> float:
    """sd of one ΔE% from the published repeatability: two energies with CV c each give a ratio with
    relative sd sqrt(2)·c, i.e. sqrt(2)·c·(1 + ΔE/100) percentage points of ΔE%."""
    return math.sqrt(2.0) * cv_pct * max(0.0, 1.0 + obs_pct / 100.0)


def own_runs(group: dict, anchors: list[dict], model: str | None, cv_pct: float) -> tuple | None:
    """(reference, sigma_ref) from the curve's own runs of this model at this size, or None when the
    rule does not apply. Like with like: the same model's repeated runs (other processes, seeds, cards)
    are its reference, so the curve's lack of fit across models of different shapes does not widen it.
    A new run lands tau_eff from the runs' true mean (tau_eff = max(tau, the published repeatability
    floor)); their mean is weighted by 1 / (se_i^2 + tau_eff^2) and known to 1 / sum of the weights.
    Needs the group's between-run tau (repeats exist) and every such run's own se."""
    tau = group["band"].get("tau_pp")
    name = (model or "").strip().lower()
    if tau is None or not name or not anchors:
        return None
    if any(str(a.get("model") or "").strip().lower() != name or a.get("se_pp") is None for a in anchors):
        return None
    values = [a["delta_e_pct"] for a in anchors]
    floor = single_trial_floor_pp(sum(values) / len(values), cv_pct)
    tau_eff = max(tau, floor)
    tau2 = tau_eff * tau_eff
    weights = [1.0 / (a["se_pp"] * a["se_pp"] + tau2) for a in anchors]
    total = sum(weights)
    ref = sum(w * y for w, y in zip(weights, values, strict=True)) / total
    return ref, math.sqrt(1.0 / total + tau2)


def grade_point(
    group: dict,
    params_b: float,
    obs: float,
    n_trials: int,
    pair_sd: float | None,
    cv_pct: float,
    variance=parameter_variance,
    model: str | None = None,
) -> dict:
    """The numeric core of the rule for one point against one curve group (also what calibration runs;
    `variance` lets it grade with the delta method's band for comparison). `model` is the report's
    model name: a run of a model the curve has repeat runs of is compared with those runs."""
    tol = group["band"]["size_tolerance_rel"]
    curve_mean, curve_sd = predict_group(group, params_b, variance)
    anchors = (
        []
        if group["borrowed_from"]
        else [a for a in group["anchors"] if abs(params_b / a["params_b"] - 1.0) <= tol]
    )
    same_size = [a["delta_e_pct"] for a in anchors]
    runs = own_runs(group, anchors, model, cv_pct)
    if runs is not None:
        ref, sigma_ref = runs
        ref_source = "runs"
    elif same_size:
        # A new setup scatters around the truth by sigma (new setup); the mean of m anchors carries their own
        # noise sigma_fit / sqrt(m). Never narrower than the curve's band at this size.
        ref, ref_source = sum(same_size) / len(same_size), "anchors"
        band = group["band"]
        sigma_ref = max(
            curve_sd, math.sqrt(band["sigma_pp"] ** 2 + band["sigma_fit_pp"] ** 2 / len(same_size))
        )
    else:
        ref, ref_source, sigma_ref = curve_mean, "curve", curve_sd
    floor = single_trial_floor_pp(obs, cv_pct)
    sigma_obs = floor if (n_trials < 2 or pair_sd is None) else max(pair_sd, floor) / math.sqrt(n_trials)
    scale = math.hypot(sigma_obs, sigma_ref)
    z = round((obs - ref) / scale, 2)
    return {
        "ref": ref,
        "ref_source": ref_source,
        "n_same_size": len(same_size),
        "sigma_obs": sigma_obs,
        "sigma_ref": sigma_ref,
        "scale": scale,
        "z": z,
        "label": "confirmation" if abs(z) <= Z_LIMIT else "contradiction",
    }
