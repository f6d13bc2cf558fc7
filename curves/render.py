"""Verdicts for humans: one field list, rendered as terminal text or Markdown, the same for every label."""

from __future__ import annotations

from curves.grade import Verdict
from curves.point import Z_LIMIT
from schema.escape import md_verdict, printable

DASH = "—"


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{value:+.1f} %"


def _pp(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f} pp"


def verdict_fields(verdict: Verdict) -> list[tuple[str, str]]:
    """(field, value) pairs in display order. Every label gets the same fields in the same order, so a
    confirmation and a contradiction look alike except for their values (equal prominence)."""
    v = verdict
    fields = [
        ("Verdict", v.label),
        ("Qualifiers", ", ".join(v.qualifiers) if v.qualifiers else "none"),
        ("Summary", v.sentence),
        ("GPU architecture", v.arch or DASH),
        ("Precision / backend", f"{v.precision or DASH} / {v.backend or DASH}"),
        ("Condition", v.condition or DASH),
        ("Model size", DASH if v.params_b is None else f"{v.params_b:.2f} B parameters"),
        ("Trials", DASH if v.n_trials is None else str(v.n_trials)),
        ("Observed ΔE% vs FP16", _pct(v.obs_pct)),
        ("Reference ΔE%", _pct(v.ref_pct) + ("" if v.ref_source is None else f" ({v.ref_source})")),
        ("σ observed", _pp(v.sigma_obs_pp)),
        ("σ reference", _pp(v.sigma_ref_pp)),
        ("z", DASH if v.z is None else f"{v.z:+.2f} (confirmation when |z| ≤ {Z_LIMIT:g})"),
        (
            "Detectable difference",
            DASH
            if v.min_detectable_pp is None
            else f"{v.min_detectable_pp:.1f} pp (a larger |observed − reference| is a contradiction)",
        ),
        (
            "Accepted range",
            DASH if v.band_low_pct is None else f"{_pct(v.band_low_pct)} to {_pct(v.band_high_pct)}",
        ),
        ("Curve", f"{v.curve_key or DASH} (curves {v.curves_version or DASH})"),
        ("Not graded because", DASH if v.reason is None else f"{v.reason_code}: {v.reason}"),
    ]
    # Values can carry report text; control characters (terminal escapes, newlines) never reach the output.
    return [(name, printable(value)) for name, value in fields]


def render_text(verdict: Verdict) -> str:
    """Plain terminal text, no colour or emphasis for any label."""
    fields = verdict_fields(verdict)
    width = max(len(name) for name, _ in fields)
    return "\n".join(f"{name + ':':<{width + 1}} {value}" for name, value in fields) + "\n"


def render_markdown(verdict: Verdict) -> str:
    """A two-column Markdown table, plain text in every cell for every label."""
    lines = ["| Field | Value |", "| --- | --- |"]
    lines += [f"| {name} | {md_verdict(value)} |" for name, value in verdict_fields(verdict)]
    return "\n".join(lines) + "\n"
