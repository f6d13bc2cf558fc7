"""grade(report, curves) -> Verdict: the one rule for confirmation / contradiction / ungraded."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from curves.condition import (
    REFERENCE_CONDITION,
    condition_text,
    report_condition,
    report_mismatch,
)
from curves.model import extrapolation_doublings
from curves.point import Z_LIMIT, grade_point
from curves.store import normalise_arch, resolve_with_code
from curves.values import get_path, int_or_none, number, text
from schema.gpus import derived_arch
from schema.models import lookup_model
from schema.validate import claims_measurement

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

def _major_minor(version: object) -> tuple[str, ...]:
    return tuple(str(version).strip().split("+")[0].split(".")[:2])


def software_differs(report: dict, curves: dict) -> bool:
    """The report says its stack differs from the reference pins, or a pinned package differs in major.minor
    from `settings.reference_software` of curves.json (torch is never pinned: it must match the driver)."""
    software = get_path(report, "software")
    if not isinstance(software, dict):
        return False
    declared = software.get("differs_from_reference_pins")
    if software.get("matches_reference_pins") is False or (isinstance(declared, list) and declared):
        return True
    pins = get_path(curves, "settings", "reference_software") or {}
    packages = software.get("packages")
    if not isinstance(pins, dict) or not isinstance(packages, dict):
        return False
    return any(
        isinstance(packages.get(name), str) and _major_minor(packages[name]) != _major_minor(pin)
        for name, pin in sorted(pins.items())
    )

def _trials(report: dict, legacy: bool) -> tuple[int, float | None]:
    """(n paired trials, their per-pair sd or None); legacy reports declare no trials, so n = 1."""
    if legacy:
        return 1, None
    n = int_or_none(get_path(report, "statistics", "n_pairs"))
    if n is None or n < 1:
        n = int_or_none(get_path(report, "protocol", "trials"))
        return (n if n is not None and n >= 1 else 1), None
    sd = number(get_path(report, "statistics", "delta_e_pct", "sd"))
    return n, sd if sd is not None and sd >= 0 else None

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

def grade(report: object, curves: dict) -> Verdict:
    """Grade one (already validated) report against `curves`; pure and total: odd input gives `ungraded`."""
    version = text(get_path(curves, "version"))
    if not isinstance(report, dict):
        return ungraded_verdict("QJ307", "the report is not a JSON object", {"curves_version": version}, [])
    legacy = str(report.get("schema_version") or "").startswith(LEGACY_PREFIX)
    # The curve follows the GPU's name by measure's table; a name it does not know keeps the stated arch.
    sut = get_path(report, "system_under_test")
    arch, how = derived_arch(get_path(sut, "gpu"), get_path(sut, "gpu_arch"))
    arch = normalise_arch(arch)
    precision = text(get_path(report, "workload", "precision"))
    precision = precision.upper() if precision else None
    backend = (text(get_path(report, "workload", "backend")) or "eager").lower()
    params_b = number(get_path(report, "workload", "params_b"))
    obs = number(get_path(report, "results", "vs_fp16_energy_pct"))
    n_trials, pair_sd = _trials(report, legacy)
    qualifiers = [] if how == "table" else ["arch-unverified"]
    if legacy:
        qualifiers.append("legacy-schema")
    if get_path(report, "workload", "weights") == "random-init":
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

    basis, source = get_path(report, "results", "basis"), get_path(report, "measurement_source")
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
    mismatch = report_mismatch(report, found, precision, wanted)
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
    name = text(get_path(report, "workload", "model_name"))
    known = lookup_model(name, text(get_path(report, "workload", "model_id")))
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
