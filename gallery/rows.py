"""Records -> gallery rows: the flat, display-ready view of each replication (pure)."""

from __future__ import annotations

import re
from typing import Any

from schema.escape import safe_url
from schema.records import arch_part, precision_part, record_id
from schema.text import visible
from schema.validate import claims_measurement

LABELS = ("confirmation", "contradiction", "ungraded")
# A verdict against a curve the report itself anchors is counted apart, never as a confirmation: the
# report meets itself there, which checks nothing.
COUNT_KEYS = ("confirmation", "contradiction", "self-anchored", "ungraded")
COUNT_NAMES = {"confirmation": "confirmations", "contradiction": "contradictions",
               "self-anchored": "self-anchored (not independent)", "ungraded": "ungraded"}


def is_replication(record: dict) -> tuple[bool, str]:
    """Whether a record may be shown as a replication, and why not: by the one measurement rule
    (schema.validate.claims_measurement). The bot validated the report when it filed the record; validating
    every record again on every build (about 14 ms each) would cost the bot's plan, which composes the
    gallery twice, its one-second budget."""
    report = record.get("report")
    if not isinstance(report, dict):
        return False, "record has no report"
    if claims_measurement(report):
        return True, ""
    results = report.get("results") if isinstance(report.get("results"), dict) else {}
    if results.get("basis") != "measured":
        return False, f"basis is {results.get('basis')!r}, not 'measured'"
    return False, f"measurement_source {report.get('measurement_source')!r} is not an NVML measurement"


def pr_url(record: dict) -> str | None:
    """The pull request link: the recorded one, else a search for the bot's branch in the repository."""
    explicit = safe_url(record.get("pr_url"))
    if explicit:
        return explicit
    issue_url = safe_url(record.get("issue_url"))
    branch = record.get("pr_branch")
    match = re.fullmatch(r"(https://github\.com/[^/]+/[^/]+)/issues/\d+", issue_url or "")
    if not match or not isinstance(branch, str) or not re.fullmatch(r"[A-Za-z0-9/_.-]+", branch):
        return None
    return f"{match.group(1)}/pulls?q=is%3Apr+head%3A{branch.replace('/', '%2F')}"


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer no float holds (the record reader refuses those first: QJ012)
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _stats(report: dict) -> dict:
    stats = (report.get("statistics") or {}).get("delta_e_pct")
    return stats if isinstance(stats, dict) else {}


def effective_verdict(record: dict, curves: dict, grade=None) -> tuple[dict, dict | None]:
    """The verdict to show: the filed one when it was graded against these curves, else a fresh grade.

    Returns (verdict, filed) where `filed` is the verdict at filing time when it differs in curves
    version, so a page can say what changed. `grade` is curves.grade (injected to keep this pure).
    """
    filed = record.get("verdict") if isinstance(record.get("verdict"), dict) else {}
    version = curves.get("version")
    if filed and (record.get("curves_version") == version or grade is None):
        return filed, None
    try:
        fresh = grade(record["report"], curves)
    except Exception:  # noqa: BLE001 - a record the grader cannot read keeps its filed verdict
        return filed, None
    fresh = fresh.to_dict() if hasattr(fresh, "to_dict") else dict(fresh)
    return fresh, (filed or None)


def to_row(record: dict, verdict: dict, filed: dict | None, rid: str) -> dict:
    """One display row: every field the tables, filters and plots need, as plain values. Text from the
    submission is schema.text.visible: a bidi override or zero-width character reaches no page, table or
    data file raw (the site writes rows with textContent, which would show them as they are)."""
    report = record.get("report") or {}
    sut = report.get("system_under_test") or {}
    workload = report.get("workload") or {}
    results = report.get("results") or {}
    stats = _stats(report)
    schema_version = str(report.get("schema_version") or "")
    legacy = schema_version.startswith("ecocompute")
    label = verdict.get("label") if verdict.get("label") in LABELS else "ungraded"
    obs = _num(verdict.get("obs_pct"))
    if obs is None:
        obs = _num(stats.get("median")) if stats else _num(results.get("vs_fp16_energy_pct"))
    submitted = str(record.get("submitted_at") or "")
    return {
        "id": rid,
        "page": f"r/{rid}.html",
        "record_path": f"replications/{rid}.json",
        "submitted_at": submitted,
        "date": submitted[:10],
        "issue": record.get("issue") if isinstance(record.get("issue"), int) else None,
        "issue_url": safe_url(record.get("issue_url")),
        "pr_url": pr_url(record),
        "arch": arch_part(report),
        "precision": precision_part(report),
        "backend": visible(workload.get("backend") or "eager"),
        # the rest of the measured condition: absent batch = 1 (legacy and older reports)
        "batch_size": _int(workload.get("batch_size")) or 1,
        "tokens_per_run": _int((report.get("measurement") or {}).get("tokens_per_run")),
        "int8_outlier_threshold": _num(workload.get("int8_outlier_threshold")),
        "card": visible(sut.get("gpu") or ""),
        "model": visible(workload.get("model_name") or workload.get("model_id") or ""),
        "params_b": _num(workload.get("params_b")),
        "weights": visible(workload.get("weights") or ("unknown" if legacy else "")),
        "legacy": legacy,
        "schema_version": schema_version,
        "submitter": visible(record.get("submitter_login") or ""),
        "handle": visible(record.get("credited_handle") or ""),
        "affiliation": visible(record.get("affiliation") or ""),
        "label": label,
        "qualifiers": sorted(str(q) for q in (verdict.get("qualifiers") or [])),
        "reason": str(verdict.get("reason") or ""),
        "sentence": str(verdict.get("sentence") or ""),
        "obs_pct": obs,
        "ref_pct": _num(verdict.get("ref_pct")),
        "ref_source": str(verdict.get("ref_source") or ""),
        "sigma_obs_pp": _num(verdict.get("sigma_obs_pp")),
        "sigma_ref_pp": _num(verdict.get("sigma_ref_pp")),
        "z": _num(verdict.get("z")),
        "band_low_pct": _num(verdict.get("band_low_pct")),
        "band_high_pct": _num(verdict.get("band_high_pct")),
        "min_detectable_pp": _num(verdict.get("min_detectable_pp")),
        "condition": str(verdict.get("condition") or ""),
        "curve_key": str(verdict.get("curve_key") or ""),
        "ci_low_pct": _num(stats.get("ci95_low")),
        "ci_high_pct": _num(stats.get("ci95_high")),
        "n_pairs": (report.get("statistics") or {}).get("n_pairs"),
        "filed_label": (filed or {}).get("label"),
        "filed_curves_version": record.get("curves_version") if filed else None,
    }


def record_entry(record: dict, curves: dict, grade=None, path: str | None = None) -> dict:
    """Everything the gallery needs from one record, as plain JSON data (what an incremental build caches):
    its sort key, base id, and either its display row or why it is left out. With the record's file
    `path`, the id is the file's own name, so a page always shows the record its path names."""
    rid = record_id(record, path)
    submitted = str(record.get("submitted_at") or "")
    issue = record.get("issue")
    issue = issue if isinstance(issue, int) and not isinstance(issue, bool) else 0
    # by the date shown, then issue number (rows of one day read in issue order), then the exact time
    sort_key = [submitted[:10], issue, submitted, rid, str(record.get("report_sha256"))]
    entry = {"sort": sort_key, "rid": rid}
    ok, why = is_replication(record)
    if not ok:
        entry["skip"] = why
        return entry
    verdict, filed = effective_verdict(record, curves, grade)
    entry["row"] = to_row(record, verdict, filed, rid)
    return entry


def assemble(entries: list[dict]) -> tuple[list[dict], list[dict], list[int]]:
    """Rows newest first (never ordered by verdict), the left-out records with why, and for each row the
    index of its entry. Records read from their files have distinct ids (their paths); two records given
    without paths whose ids collide keep both: the later one gets the first free `-2`, `-3` suffix."""
    order = sorted(range(len(entries)), key=lambda i: entries[i]["sort"])
    rows: list[dict] = []
    sources: list[int] = []
    skipped: list[dict] = []
    reserved = {e["rid"] for e in entries if "row" in e}
    used: set[str] = set()
    for i in order:
        entry = entries[i]
        if "skip" in entry:
            skipped.append({"id": entry["rid"], "reason": entry["skip"]})
            continue
        rid = entry["rid"]
        row = dict(entry["row"])
        if rid in used:
            k = 2
            while f"{rid}-{k}" in used or f"{rid}-{k}" in reserved:
                k += 1
            rid = f"{rid}-{k}"
            row.update(id=rid, page=f"r/{rid}.html", record_path=f"replications/{rid}.json")
        used.add(rid)
        rows.append(row)
        sources.append(i)
    rows.reverse()
    sources.reverse()
    return rows, skipped, sources


def build_rows(records, curves: dict, grade=None) -> tuple[list[dict], list[dict], list[dict]]:
    """Rows newest first, the records left out with why, and each row's record. `records` is a list, or a
    mapping of record file path -> record (then each row's id is its file's name)."""
    paths, items = with_paths(records)
    entries = [record_entry(r, curves, grade, p) for p, r in zip(paths, items, strict=True)]
    rows, skipped, sources = assemble(entries)
    return rows, skipped, [items[i] for i in sources]


def with_paths(records) -> tuple[list, list[dict]]:
    """(paths, records) of a list of records (no paths) or of a path -> record mapping (sorted by path)."""
    if isinstance(records, dict):
        keys = sorted(records)
        return keys, [records[k] for k in keys]
    return [None] * len(records), list(records)


def count_key(row: dict) -> str:
    """The headline count a row falls in: its label, except that a graded self-anchored row is apart."""
    graded = row["label"] in ("confirmation", "contradiction")
    return "self-anchored" if graded and "self-anchored" in row["qualifiers"] else row["label"]


def counts(rows: list[dict]) -> dict[str, int]:
    """Confirmations, contradictions, self-anchored and ungraded: always all four keys."""
    out = {key: 0 for key in COUNT_KEYS}
    for row in rows:
        out[count_key(row)] += 1
    return out
