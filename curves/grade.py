"""grade(report, curves) -> Verdict: the one rule for confirmation / contradiction / ungraded."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from curves.model import extrapolation_doublings, parameter_variance, predict_group
from curves.store import normalise_arch, resolve_with_code
from schema.gpus import derived_arch
from schema.models import lookup_model
from schema.validate import claims_measurement

Z_LIMIT = 2.0
LEGACY_PREFIX = "ecocompute-energy/"
QUALIFIERS = (
    "arch-unverified",
    "borrowed-curve",
    "extrapolated-size",
    "legacy-schema",
    "opposite-sign",
    "random-init-weights",
    "self-anchored",
    "single-trial",
    "software-differs",
)
# What every anchor measured; a group without a `condition` (older curves files) means this one.
REFERENCE_CONDITION = {"batch_size": 1, "generation_tokens": 256}
# INT8 curves are LLM.int8() (bitsandbytes' default outlier threshold); threshold 0 is another INT8.
LLM_INT8_THRESHOLD = 6.0


@dataclass(frozen=True)
class Verdict:
    """What the grader concluded and every number it used. `band_*` is ref ± 2·sqrt(σ_obs² + σ_ref²):
    the observation confirms exactly when it lies inside that band, so `min_detectable_pp` (half its
    width) is the smallest |obs − ref| this verdict could call a contradiction. `condition` is what was
    compared: backend, batch and generation length."""

    label: str
    qualifiers: tuple[str, ...]
    reason: str | None
    reason_code: str | None
    arch: str | None
    precision: str | None
    backend: str | None
    params_b: float | None
    n_trials: int | None
    curve_key: str | None
    curves_version: str | None
    obs_pct: float | None
    ref_pct: float | None
    ref_source: str | None
    sigma_obs_pp: float | None
    sigma_ref_pp: float | None
    z: float | None
    band_low_pct: float | None
    band_high_pct: float | None
    sentence: str
    condition: str | None = None
    min_detectable_pp: float | None = None

    def to_dict(self) -> dict:
        out = asdict(self)
        out["qualifiers"] = list(self.qualifiers)
        return out


def _get(obj: object, *path: str) -> object:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:  # an integer beyond float range
        return None
    return value if math.isfinite(value) else None


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _major_minor(version: object) -> tuple[str, ...]:
    return tuple(str(version).strip().split("+")[0].split(".")[:2])


def software_differs(report: dict, curves: dict) -> bool:
    """The report says its stack differs from the reference pins, or a pinned package differs in major.minor
    from `settings.reference_software` of curves.json (torch is never pinned: it must match the driver)."""
    software = _get(report, "software")
    if not isinstance(software, dict):
        return False
    declared = software.get("differs_from_reference_pins")
    if software.get("matches_reference_pins") is False or (isinstance(declared, list) and declared):
        return True
    pins = _get(curves, "settings", "reference_software") or {}
    packages = software.get("packages")
    if not isinstance(pins, dict) or not isinstance(packages, dict):
        return False
    return any(
        isinstance(packages.get(name), str) and _major_minor(packages[name]) != _major_minor(pin)
        for name, pin in sorted(pins.items())
    )


def single_trial_floor_pp(obs_pct: float, cv_pct: float) -> float:
    """sd of one ΔE% from the published repeatability: two energies with CV c each give a ratio with
    relative sd sqrt(2)·c, i.e. sqrt(2)·c·(1 + ΔE/100) percentage points of ΔE%."""
    return math.sqrt(2.0) * cv_pct * max(0.0, 1.0 + obs_pct / 100.0)


def _trials(report: dict, legacy: bool) -> tuple[int, float | None]:
    """(n paired trials, their per-pair sd or None); legacy reports declare no trials, so n = 1."""
    if legacy:
        return 1, None
    n = _get(report, "statistics", "n_pairs")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        n = _get(report, "protocol", "trials")
        n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1
        return n, None
    sd = _number(_get(report, "statistics", "delta_e_pct", "sd"))
    return n, sd if sd is not None and sd >= 0 else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def report_condition(report: dict) -> dict:
    """Batch size and tokens per measured generation as the report states them (None: not stated)."""
    return {
        "batch_size": _int(_get(report, "workload", "batch_size")),
        "generation_tokens": _int(_get(report, "measurement", "tokens_per_run")),
    }


def condition_text(backend: str, condition: dict) -> str:
    batch = condition.get("batch_size")
    tokens = condition.get("generation_tokens")
    return (f"{backend}, batch {batch if batch is not None else 'not stated'}, "
            f"{tokens if tokens is not None else 'unstated'}-token generations")


def condition_mismatch(found: dict, wanted: dict) -> str | None:
    """Why a report's condition is not the curve's, or None when they match. An unstated field is taken
    as the reference's (older and legacy reports state no batch or say 256 tokens)."""
    why = []
    for name, label in (("generation_tokens", "token generations"), ("batch_size", "batch")):
        have, want = found.get(name), wanted.get(name)
        if have is not None and have != want:
            why.append(f"{have}-{label}" if name == "generation_tokens" else f"{label} {have}")
    return " and ".join(why) or None


def self_anchored(report: dict, group: dict) -> bool:
    """The report is one of the anchors the curve was fitted on (same canonical sha256, or the same run
    identity: start time, precision and card), so grading it there checks it against itself."""
    from curves.measured import canonical_sha256, report_id  # lazy: measured imports the schema reader

    ident = report_id(report)
    digest = None
    for anchor in group.get("anchors") or []:
        if anchor.get("report_id") and anchor["report_id"] == ident:
            return True
        if anchor.get("report_sha256"):
            digest = digest or canonical_sha256(report)
            if anchor["report_sha256"] == digest:
                return True
    return False


def ungraded_verdict(code: str, reason: str, base: dict, qualifiers: list[str]) -> Verdict:
    fields = {
        "arch": None,
        "precision": None,
        "backend": None,
        "params_b": None,
        "n_trials": None,
        "curve_key": None,
        "curves_version": None,
        "obs_pct": None,
        **base,
    }
    return Verdict(
        label="ungraded",
        qualifiers=tuple(sorted(set(qualifiers))),
        reason=reason,
        reason_code=code,
        ref_pct=None,
        ref_source=None,
        sigma_obs_pp=None,
        sigma_ref_pp=None,
        z=None,
        band_low_pct=None,
        band_high_pct=None,
        sentence=f"Not graded: {reason}.",
        min_detectable_pp=None,
        **fields,
    )


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


def grade(report: object, curves: dict) -> Verdict:
    """Grade one (already validated) report against `curves`; pure and total: odd input gives `ungraded`."""
    version = _text(_get(curves, "version"))
    if not isinstance(report, dict):
        return ungraded_verdict("QJ307", "the report is not a JSON object", {"curves_version": version}, [])
    legacy = str(report.get("schema_version") or "").startswith(LEGACY_PREFIX)
    # The curve follows the GPU's name by measure's table; a name it does not know keeps the stated arch.
    sut = _get(report, "system_under_test")
    arch, how = derived_arch(_get(sut, "gpu"), _get(sut, "gpu_arch"))
    arch = normalise_arch(arch)
    precision = _text(_get(report, "workload", "precision"))
    precision = precision.upper() if precision else None
    backend = (_text(_get(report, "workload", "backend")) or "eager").lower()
    params_b = _number(_get(report, "workload", "params_b"))
    obs = _number(_get(report, "results", "vs_fp16_energy_pct"))
    n_trials, pair_sd = _trials(report, legacy)
    qualifiers = [] if how == "table" else ["arch-unverified"]
    if legacy:
        qualifiers.append("legacy-schema")
    if _get(report, "workload", "weights") == "random-init":
        qualifiers.append("random-init-weights")
    if software_differs(report, curves):
        qualifiers.append("software-differs")
    found = report_condition(report)
    base = {
        "arch": arch,
        "precision": precision,
        "backend": backend,
        "params_b": params_b,
        "n_trials": n_trials,
        "curves_version": version,
        "obs_pct": None if obs is None else round(obs, 3),
        "condition": condition_text(backend, found),
    }

    basis, source = _get(report, "results", "basis"), _get(report, "measurement_source")
    if not claims_measurement(report):  # the one measurement rule
        return ungraded_verdict(
            "QJ303",
            f"not a measurement (basis {basis!r}, measurement_source {source!r}); only "
            "'measured' from an NVML source is graded",
            base,
            qualifiers,
        )
    if precision == "FP16":
        return ungraded_verdict(
            "QJ304", "an FP16-only baseline has no quantized arm to compare", base, qualifiers
        )
    key, group, code, reason = resolve_with_code(curves, arch, precision, backend)
    if key is None:
        return ungraded_verdict(code, reason, base, qualifiers)
    wanted = group.get("condition") or REFERENCE_CONDITION
    mismatch = condition_mismatch(found, wanted)
    threshold = _number(_get(report, "workload", "int8_outlier_threshold"))
    if precision == "INT8" and threshold is not None and threshold != LLM_INT8_THRESHOLD:
        other = (f"INT8 outlier threshold {threshold:g} "
                 f"(not LLM.int8(), whose threshold is {LLM_INT8_THRESHOLD:g})")
        mismatch = f"{mismatch} and {other}" if mismatch else other
    plant = _get(report, "workload", "outlier_plant")
    if isinstance(plant, dict):  # a sensitivity run's weights, for any precision: no curve measured them
        dims, scale = _number(plant.get("dims")), _number(plant.get("scale"))
        other = "planted outlier features" + (
            f" ({dims:g} hidden dims at scale {scale:g})" if dims is not None and scale is not None else "")
        mismatch = f"{mismatch} and {other}" if mismatch else other
    if mismatch:
        return ungraded_verdict(
            "QJ309",
            f"measured with {mismatch}, but the {key} curve grades "
            f"{condition_text(backend, wanted).split(', ', 1)[1]} (like with like only; "
            "python -m measure run measures whole 256-token generations at batch 1 by default)",
            base,
            qualifiers,
        )
    if params_b is None or params_b <= 0:
        return ungraded_verdict("QJ305", "workload.params_b is missing or not positive", base, qualifiers)
    if obs is None:
        return ungraded_verdict(
            "QJ306", "results.vs_fp16_energy_pct is missing or not finite", base, qualifiers
        )

    if n_trials == 1:
        qualifiers.append("single-trial")
    cv_pct = curves.get("settings", {}).get("repeatability_cv_pct", 2.0)
    # The model as the known-model table names it (schema/models.py), found from model_name or model_id:
    # a chat variant, a Hugging Face id or a renamed report of a known model is still that model's run.
    name = _text(_get(report, "workload", "model_name"))
    known = lookup_model(name, _text(_get(report, "workload", "model_id")))
    model = known.name if known else name
    point = grade_point(group, params_b, obs, n_trials, pair_sd, cv_pct, model=model)
    ref, ref_source, sigma_obs, sigma_ref = (
        point["ref"],
        point["ref_source"],
        point["sigma_obs"],
        point["sigma_ref"],
    )
    z, label, scale, same_size = point["z"], point["label"], point["scale"], point["n_same_size"]
    if group["borrowed_from"]:
        qualifiers.append("borrowed-curve")
    if extrapolation_doublings(params_b, group["band"]) > 0:
        qualifiers.append("extrapolated-size")
    opposite = obs * ref < 0
    if opposite:
        qualifiers.append("opposite-sign")
    anchored = self_anchored(report, group)
    if anchored:
        qualifiers.append("self-anchored")
    mdd = Z_LIMIT * scale
    anchors_text = "the same-size anchor" if same_size == 1 else f"mean of {same_size} same-size anchors"
    runs_text = (f"the curve's run of {model}" if same_size == 1
                 else f"weighted mean of the curve's {same_size} runs of {model}")
    source_text = (
        runs_text
        if ref_source == "runs"
        else anchors_text
        if ref_source == "anchors"
        else f"{group['borrowed_from']} curve, borrowed"
        if group["borrowed_from"]
        else "curve"
    )
    sentence = (
        f"{precision} on {arch} at {params_b:.2f} B: measured {obs:+.1f} % energy per token vs FP16, "
        f"reference {ref:+.1f} % ({source_text}), z = {z:+.2f}: a {label}"
        + ("; the two disagree on whether quantization saves energy" if opposite else "")
        + f". It could detect a difference of {mdd:.1f} pp or more"
        + ("; this report is an anchor of the curve, so it is compared with itself and is not an "
           "independent check" if anchored else "")
        + "."
    )
    return Verdict(
        label=label,
        qualifiers=tuple(sorted(set(qualifiers))),
        reason=None,
        reason_code=None,
        arch=arch,
        precision=precision,
        backend=backend,
        params_b=params_b,
        n_trials=n_trials,
        curve_key=key,
        curves_version=version,
        obs_pct=round(obs, 3),
        ref_pct=round(ref, 3),
        ref_source=ref_source,
        sigma_obs_pp=round(sigma_obs, 3),
        sigma_ref_pp=round(sigma_ref, 3),
        z=z,
        band_low_pct=round(ref - Z_LIMIT * scale, 3),
        band_high_pct=round(ref + Z_LIMIT * scale, 3),
        sentence=sentence,
        condition=base["condition"],
        min_detectable_pp=round(mdd, 3),
    )
