"""Replication records: the one reader of replications/ and the one rule for naming a record's file.

A record is `replications/<arch>/<issue>-<PRECISION>-<slug>.json` (a `-2`, `-3` suffix when one issue holds
two reports that would share the name), written by the bot and read by the bot (duplicates, the gallery
rebuilt in a PR), the gallery build and `gallery merged-issues`. They all read through `read_records` /
`read_record`, so one bad file is handled one way everywhere: it is skipped with a QJ013 warning saying
why, and never stops the others. A record file is readable when it is at most MAX_RECORD_BYTES of UTF-8
JSON by the report reading rules (schema.parse.read_json_text: no NaN, no duplicate keys, no unpaired
surrogates, numbers every reader agrees on), is a regular file (not a link), and holds an object with a
`report` object.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from schema.codes import Code
from schema.parse import MAX_DEPTH, read_json_text
from schema.problem import Problem, problem_in

RECORD_VERSION = "quantjoule-record/1"
ROOT = "replications"
WRITABLE_ROOTS = ("replications/", "gallery/")
# A record is a report (at most 60,000 bytes, re-indented) plus a few hundred bytes about the filing.
MAX_RECORD_BYTES = 1_000_000
RECORD_DEPTH = MAX_DEPTH + 2  # the report sits one level down in the record
_SAFE_PATH = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")
_SLUG = re.compile(r"[^a-z0-9.-]+")
_ARCH = re.compile(r"[^a-z0-9-]+")
_PRECISION = re.compile(r"[^A-Z0-9]+")
_RECORD_FILE = re.compile(r"replications/([a-z0-9-]+)/([0-9]+)-([A-Z0-9]+)-([a-z0-9.-]+?)(-[0-9]+)?\.json")
# Reading a record, not a report: its one code is kept apart from the report codes of schema.codes.
CODES: tuple[Code, ...] = (
    Code("QJ013", "warning", "file under replications/ is not a record; skipped",
         "Each file under replications/ is a JSON record the bot wrote; restore this one from git history or "
         "remove it. Everything else goes on without it: submissions are planned (and cannot be checked "
         "against it for duplicates) and the gallery shows the other records."),
)


class UnsafePath(ValueError):
    """A file path outside replications/ and gallery/, or one that could traverse; never written."""


def check_path(path: str) -> str:
    """Return `path` when it is a plain relative path under replications/ or gallery/; raise otherwise."""
    ok = (
        isinstance(path, str)
        and path.startswith(WRITABLE_ROOTS)
        and _SAFE_PATH.fullmatch(path)
        and not any(part in ("", ".", "..") or part.startswith(".") for part in path.split("/"))
    )
    if not ok:
        raise UnsafePath(f"refusing to write {path!r}: only plain paths under replications/ and gallery/")
    return path


def canonical_sha256(report: dict) -> str:
    """sha256 of the report as canonical JSON (sorted keys, no spaces): what duplicates are found by."""
    text = json.dumps(report, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # Reports reach here through read_json_text or validate, which refuse unpaired surrogates; the
    # escape keeps hashing total for anything else.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def slug(text: object, limit: int = 40) -> str:
    """Lower-case `[a-z0-9.-]`, no leading/trailing dots or dashes, at most `limit` characters."""
    s = _SLUG.sub("-", str(text or "").lower()).strip("-.")
    return s[:limit].strip("-.") or "model"


def arch_part(report: dict) -> str:
    """The architecture part of a record's path, sanitised (`unknown` when absent)."""
    sut = report.get("system_under_test") if isinstance(report.get("system_under_test"), dict) else {}
    return _ARCH.sub("-", str(sut.get("gpu_arch") or "unknown").lower()).strip("-") or "unknown"


def precision_part(report: dict) -> str:
    workload = report.get("workload") if isinstance(report.get("workload"), dict) else {}
    return _PRECISION.sub("", str(workload.get("precision") or "FP16").upper()) or "FP16"


def _issue_part(issue: object) -> str:
    return str(int(issue)) if isinstance(issue, int) and not isinstance(issue, bool) else "0"


def stem_id(issue: object, report: dict) -> str:
    """`<arch>/<issue>-<PRECISION>-<slug>`: a record's path under replications/ without suffix or `.json`."""
    workload = report.get("workload") if isinstance(report.get("workload"), dict) else {}
    model = slug(workload.get("model_name"))
    return f"{arch_part(report)}/{_issue_part(issue)}-{precision_part(report)}-{model}"


def record_path(issue: int, report: dict, used: set[str]) -> str:
    """The path of a new record, the first of `<stem>.json`, `<stem>-2.json`, ... not in `used` (added)."""
    stem = f"{ROOT}/{stem_id(issue, report)}"
    path, k = f"{stem}.json", 2
    while path in used:
        path, k = f"{stem}-{k}.json", k + 1
    used.add(path)
    return check_path(path)


def record_id(record: dict, path: str | None = None) -> str:
    """The record's id (its path under replications/ without `.json`): taken from `path` when that is the
    record's own name (same arch, issue, precision and model slug, any `-k` suffix), else computed."""
    report = record.get("report") if isinstance(record.get("report"), dict) else {}
    computed = stem_id(record.get("issue"), report)
    match = _RECORD_FILE.fullmatch(path or "")
    if match and f"{match[1]}/{match[2]}-{match[3]}-{match[4]}" == computed:
        return path[len(ROOT) + 1 : -len(".json")]
    return computed


def new_record(
    *, issue: int, issue_url: str, submitter_login: str, credited_handle: str, affiliation: str | None,
    notes: str | None, submitted_at: str, recorded_at: str, report_sha256: str, curves_version: str | None,
    verdict: dict, report: dict,
) -> dict:
    """A record (docs/CONTRACTS.md, the record), its keys in the order record_bytes writes them."""
    return {
        "record_version": RECORD_VERSION,
        "issue": issue,
        "issue_url": issue_url,
        "pr_branch": f"replication/issue-{issue}",
        "submitter_login": submitter_login,
        "credited_handle": credited_handle,
        "affiliation": affiliation,
        "notes": notes,
        "submitted_at": submitted_at,
        "recorded_at": recorded_at,
        "report_sha256": report_sha256,
        "curves_version": curves_version,
        "verdict": verdict,
        "report": report,
    }


def record_bytes(record: dict) -> bytes:
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")


def parse_record(data: bytes) -> tuple[dict | None, str | None]:
    """(record, None) for a readable record's bytes, else (None, why not)."""
    doc, problems = read_json_text(data, MAX_RECORD_BYTES, RECORD_DEPTH)
    if doc is None:
        first = problems[0]
        return None, f"{first.code} {first.message}"
    if not isinstance(doc.get("report"), dict):
        return None, "not a record object with a report"
    return doc, None


def record_files(root: str | Path) -> list[tuple[str, Path]]:
    """(repository-relative path, path) of every *.json under root/replications/, sorted by path; links
    are listed too, so that reading them can refuse them."""
    found: list[tuple[str, str]] = []
    stack = [(os.path.join(str(root), ROOT), ROOT)]
    while stack:
        folder, rel = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{rel}/{entry.name}"))
            elif entry.name.endswith(".json"):
                found.append((f"{rel}/{entry.name}", entry.path))
    return [(rel, Path(path)) for rel, path in sorted(found)]


def codes() -> tuple[Code, ...]:
    """QJ013, for the shared table."""
    return CODES


def skipped(rel: str, why: str) -> Problem:
    """The one warning for a file under replications/ that is not a record (QJ013, `path` is the file)."""
    return problem_in(CODES, "QJ013", f"{rel} is skipped: {why}", rel)


def read_record(path: Path, rel: str) -> tuple[dict | None, str, Problem | None]:
    """(record, sha256 of the file's bytes, None), or (None, "", the QJ013 warning saying why not)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None, "", skipped(rel, "not a regular file (a link or a folder)")
        with path.open("rb") as handle:
            blob = handle.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        return None, "", skipped(rel, f"cannot be read: {exc.strerror or exc}")
    record, why = parse_record(blob)
    if record is None:
        return None, "", skipped(rel, why)
    return record, hashlib.sha256(blob).hexdigest(), None


def read_records(root: str | Path) -> tuple[dict[str, dict], list[Problem]]:
    """Every readable record under root/replications/ keyed by its repository-relative path, and a QJ013
    warning for each file that is not one. Never raises: one bad file never hides the others."""
    records: dict[str, dict] = {}
    problems: list[Problem] = []
    for rel, path in record_files(root):
        record, _digest, bad = read_record(path, rel)
        if bad is not None:
            problems.append(bad)
        else:
            records[rel] = record
    return records, problems
