"""The plan (pure, JSON-serialisable): what the forge must make true for one submission.

A plan names the sticky comment, an optional short verdict-change notice, the target label set, the
branch and the files to commit on it (records under replications/ and the rebuilt gallery/ files), and
the pull request, or `pr: null` when nothing is acceptable (comment + labels only, an open PR closed).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from assess import assess
from bot import render
from bot.codes import problem
from bot.dedupe import ContentIndex
from bot.intake import Ignored, Submission
from schema.problem import Problem
from schema.records import canonical_sha256, check_path, new_record, record_bytes, record_path

PLAN_VERSION = "quantjoule-plan/1"
STICKY_MARKER = "<!-- quantjoule-bot -->"
NOTICE_MARKER = "<!-- quantjoule-bot:notice"
ERROR_MARKER = "<!-- quantjoule-bot:error -->"
PR_LINK_SLOT = "<!-- quantjoule-pr-link -->"
VERDICT_LABELS = ("confirmation", "contradiction", "ungraded")
MANAGED_LABELS = ("replication", *VERDICT_LABELS, "invalid", "duplicate", "bot-error")
# Issue-level problems that keep every report of the issue out of the gallery: without the licence consent
# nothing may be committed, however good the report; nor when a bot account filed it (QJ519) or a
# maintainer rejected it by closing its pull request (QJ521). Other issue-level errors only limit what is
# read.
BLOCKING_CODES = ("QJ504", "QJ519", "QJ521")

@dataclass(frozen=True)
class PlanContext:
    curves: dict
    records: dict  # path -> record dict, every replications/**/*.json on the base branch
    previous_comment: str | None = None  # body of the current sticky comment, if any
    gallery_base: dict | None = None  # path -> bytes of gallery/ files on the base branch
    grade: Callable | None = None  # curves.grade
    render_verdict: Callable | None = None  # curves.render_markdown
    notes: tuple = ()  # Problems for maintainers about the base branch (QJ013: a record file skipped)
    rejected_pr: dict | None = None  # {"number", "url"} of a PR a maintainer closed unmerged (sticky)


def build_plan(sub: Submission | Ignored, ctx: PlanContext) -> dict:
    """Decide everything for one event. Pure: same inputs give the same plan."""
    if isinstance(sub, Ignored):
        return {"plan_version": PLAN_VERSION, "ignored": True, "reason": sub.reason}
    if sub.withdrawn and any(rec.get("issue") == sub.issue for rec in ctx.records.values()):
        # The gallery workflow closes an issue once its records are merged: that is not a withdrawal.
        return {"plan_version": PLAN_VERSION, "ignored": True, "reason": "closed after its report was merged"}
    if ctx.rejected_pr and not sub.withdrawn:
        pr = ctx.rejected_pr
        note = problem("QJ521", f"a maintainer closed pull request #{int(pr['number'])} without merging it")
        sub = replace(sub, problems=(*sub.problems, note))
    points = [] if sub.withdrawn else _points(sub, ctx)
    accepted = [p for p in points if p["status"] in ("accepted", "already-recorded")]
    errors = [p for p in sub.problems if p.severity == "error"]
    status = (
        "withdrawn"
        if sub.withdrawn
        else "refused"
        if not accepted
        else ("accepted" if len(accepted) == len(points) and not errors else "partial")
    )
    state = {"v": 1, "status": status, "points": [[p["index"], p["label"]] for p in points]}
    files = _files(sub, points, ctx) if accepted else {}
    plan = {
        "plan_version": PLAN_VERSION,
        "ignored": False,
        "repo": sub.repo,
        "issue": sub.issue,
        "issue_url": sub.issue_url,
        "event": sub.event,
        "base": sub.default_branch,
        "branch": f"replication/issue-{sub.issue}",
        "status": status,
        "state": state,
        "problems": [p.to_dict() for p in sub.problems],
        "points": [{k: v for k, v in p.items() if k not in ("record",)} for p in points],
        "labels": {"target": _labels(sub, points, status), "managed": list(MANAGED_LABELS)},
        "files": {path: _encode(content) for path, content in sorted(files.items())},
        # What the plan was computed from: `apply` re-reads the live issue and writes nothing when it moved.
        "issue_sha256": sub.source_sha256,
    }
    if ctx.notes:  # only then, so plans of a healthy base stay as they were
        plan["maintainer_notes"] = [p.to_dict() for p in ctx.notes]
    plan["comment"] = {
        "marker": STICKY_MARKER,
        "body": render.sticky(sub, plan, state, STICKY_MARKER, PR_LINK_SLOT),
    }
    plan["notice"] = _notice(sub, state, ctx.previous_comment)
    plan["pr"] = render.pull_request(sub, plan) if accepted else None
    plan["commit_message"] = render.commit_message(sub, plan) if accepted else None
    return plan


def _points(sub: Submission, ctx: PlanContext) -> list[dict]:
    grade = ctx.grade or _curves().grade
    by_sha = {}
    for path, rec in sorted(ctx.records.items()):
        by_sha.setdefault(rec.get("report_sha256"), (path, rec))
    seen: dict[str, int] = {}
    used_paths: set[str] = set()
    blocked = any(p.code in BLOCKING_CODES for p in sub.problems)
    # Measured content of the reports on file (other issues) and of this issue's earlier blocks.
    on_file, in_issue = ContentIndex(), ContentIndex()
    if sub.blocks and not blocked:
        for path, rec in sorted(ctx.records.items()):
            if rec.get("issue") != sub.issue and isinstance(rec.get("report"), dict):
                on_file.add(rec["report"], (path, rec.get("issue_url")))
    points = []
    for block in sub.blocks:
        point = {
            "index": block.index,
            "status": "refused",
            "label": "refused",
            "sha256": None,
            "path": None,
            "summary": None,
            "verdict": None,
            "verdict_markdown": None,
            "record": None,
        }
        problems: list[Problem] = list(block.problems)
        assessment = None
        if not problems:
            assessment = assess(block.text, ctx.curves, grade, now=sub.event_at or None)
            problems = list(assessment.problems)
        if assessment is not None and assessment.valid and not blocked:
            _accept(sub, ctx, assessment, point, problems, (by_sha, seen, on_file, in_issue), used_paths)
        point["problems"] = [p.to_dict() for p in problems]
        points.append(point)
    return points


def _accept(sub, ctx, assessment, point, problems, seen_before, used_paths) -> None:
    by_sha, seen, on_file, in_issue = seen_before
    report = assessment.report
    sha = canonical_sha256(report)
    point["sha256"] = sha
    point["summary"] = render.summary(report)
    if not assessment.is_measurement:  # refused by the shared acceptance rule (QJ506 is in `problems`)
        return
    form_gpu = str(sub.fields.get("gpu") or "").strip().lower()
    report_gpu = str((report.get("system_under_test") or {}).get("gpu") or "").strip().lower()
    if form_gpu and report_gpu and form_gpu not in report_gpu and report_gpu not in form_gpu:
        problems.append(
            problem(
                "QJ511",
                f"the form says {sub.fields['gpu'][:60]}, the report says {report_gpu[:60]}",
                "/system_under_test/gpu",
            )
        )
    if sha in seen:
        problems.append(problem("QJ505", f"report {point['index']} repeats report {seen[sha]} of this issue"))
        return
    first = by_sha.get(sha)
    if first and first[1].get("issue") != sub.issue:
        problems.append(problem("QJ505", f"already on file as {first[0]} from {first[1].get('issue_url')}"))
        point["duplicate_of"] = {"path": first[0], "issue_url": first[1].get("issue_url")}
        return
    near = in_issue.find(report)
    if near:
        (index, matched, total) = near
        problems.append(problem("QJ508", f"report {point['index']} repeats the measurements of report "
                                         f"{index} of this issue ({matched} of {total} trials)"))
        return
    near = on_file.find(report)
    if near:
        (where, url), matched, total = near
        problems.append(problem("QJ508", f"{matched} of its {total} trials repeat {where} from {url}"))
        point["duplicate_of"] = {"path": where, "issue_url": url}
        return
    path = record_path(sub.issue, report, used_paths)
    seen[sha] = point["index"]
    in_issue.add(report, point["index"])
    verdict = assessment.verdict
    vd = verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)
    existing = ctx.records.get(path)
    if existing and existing.get("report_sha256") == sha and existing.get("issue") == sub.issue:
        record, point["status"] = existing, "already-recorded"
    else:
        record, point["status"] = make_record(sub, report, sha, vd, ctx.curves), "accepted"
    render_verdict = ctx.render_verdict or _curves().render_markdown
    point.update(
        label=vd.get("label", "ungraded"),
        path=path,
        verdict=vd,
        record=record,
        verdict_markdown=render.defused(render_verdict(verdict)),
    )


def make_record(sub: Submission, report: dict, sha: str, verdict: dict, curves: dict) -> dict:
    """The record of one accepted report of `sub` (schema.records.new_record: the record's fields)."""
    return new_record(
        issue=sub.issue,
        issue_url=sub.issue_url,
        submitter_login=sub.submitter_login,
        credited_handle=sub.fields.get("credited_handle") or sub.submitter_login,
        affiliation=sub.fields.get("affiliation"),
        notes=sub.fields.get("notes"),
        submitted_at=sub.submitted_at,
        recorded_at=sub.event_at,
        report_sha256=sha,
        curves_version=verdict.get("curves_version") or curves.get("version"),
        verdict=verdict,
        report=report,
    )


def _files(sub: Submission, points: list[dict], ctx: PlanContext) -> dict[str, bytes]:
    import gallery

    new = {p["path"]: p["record"] for p in points if p["status"] in ("accepted", "already-recorded")}
    files = {path: record_bytes(rec) for path, rec in new.items() if ctx.records.get(path) != rec}
    after = {path: rec for path, rec in ctx.records.items() if rec.get("issue") != sub.issue}
    after.update(new)
    # Keyed by path, so each gallery page is named by its record's file (schema.records.record_id).
    files.update(gallery.changed_files(dict(ctx.records), after, ctx.curves, ctx.gallery_base or {}))
    for path in files:
        check_path(path)
    return files


def _encode(content: bytes | str) -> dict:
    if isinstance(content, str):
        content = content.encode("utf-8")
    try:
        return {"encoding": "utf-8", "content": content.decode("utf-8")}
    except UnicodeDecodeError:
        return {"encoding": "base64", "content": base64.b64encode(content).decode("ascii")}


def decode_file(entry: dict) -> bytes:
    if entry.get("encoding") == "base64":
        return base64.b64decode(entry["content"])
    return entry["content"].encode("utf-8", "surrogatepass")


def _labels(sub: Submission, points: list[dict], status: str) -> list[str]:
    target = {"replication"} | {p["label"] for p in points if p["label"] in VERDICT_LABELS}
    if status not in ("accepted", "withdrawn"):
        target.add("invalid")
    if any(pr["code"] in ("QJ505", "QJ508") for p in points for pr in p["problems"]):
        target.add("duplicate")
    return [lb for lb in MANAGED_LABELS if lb in target]


def read_state(comment_body: str | None) -> dict | None:
    """The machine-readable state embedded in a previous sticky comment, or None."""
    m = re.search(r"<!-- quantjoule-state: (\{.*?\}) -->", comment_body or "")
    try:
        return json.loads(m[1]) if m else None
    except ValueError:
        return None


def _notice(sub: Submission, state: dict, previous_comment: str | None) -> dict | None:
    before = read_state(previous_comment)
    if before is None or before.get("points") == state["points"]:
        return None
    key = hashlib.sha256(json.dumps([before, state, sub.event_at]).encode()).hexdigest()[:16]
    marker = f"{NOTICE_MARKER} {key} -->"
    return {"marker": marker, "body": render.notice(marker, before, state)}


def _curves():
    import curves

    return curves

