"""Intake (pure): a GitHub issues / issue_comment event payload -> a Submission, or the reason it is ignored.

Which issues are replication submissions (the rule, documented in bot/README.md): an issue is taken when
it carries the `replication` label, or its title starts with `[replication]`, or its body has the issue
form's `### energy.json` section, or it holds at least one candidate report block. A candidate block is
a fenced block (``` or ~~~, at least three) whose info string is `json`, or an untagged fenced block whose
content starts with `{`. Text GitHub does not show (HTML comments) is read as absent: a report or a
consent line inside `<!-- -->` does not count. Anything else is ignored, as are the bot's own comments,
comments that are not a maintainer's `/recheck` and comments on pull requests. Closing the issue withdraws
it (QJ520): the `closed` event, a `/recheck` or a refresh of a closed issue plans nothing filed and closes
its pull request; edits of a closed issue are ignored.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

import schema
from bot.codes import problem
from bot.shown import is_consent, outside_fences, shown_lines
from schema.problem import Problem

MAX_BODY_CHARS = 65_536  # GitHub's own limit on an issue body
MAX_BLOCKS = 20
FIELD_LIMITS = {"credited_handle": 100, "affiliation": 100, "gpu": 100, "notes": 2000}
MAINTAINER_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
ISSUE_ACTIONS = ("opened", "edited", "reopened", "closed")
REFRESH_ACTION = "base-moved"
REPLICATION_LABEL = "replication"
TITLE_PREFIX = "[replication]"
MARKER = "<!-- quantjoule-bot"  # prefix of every hidden marker the bot writes

# The issue form's headings (.github/ISSUE_TEMPLATE/replication.yml) -> Submission field names.
FORM_FIELDS = {
    "credited handle": "credited_handle",
    "affiliation": "affiliation",
    "gpu": "gpu",
    "notes": "notes",
}
FORM_REPORT_HEADING = "energy.json"
NO_RESPONSE = "_No response_"

_HEADING = re.compile(r"^ {0,3}###[ \t]+(.+?)[ \t#]*$")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class ReportBlock:
    index: int  # 1-based position among the candidate blocks of the body
    text: str
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class Submission:
    repo: str
    repo_url: str
    default_branch: str
    issue: int
    issue_url: str
    title: str
    submitter_login: str
    event: str  # "issues/opened", "issue_comment/created", ...
    submitted_at: str
    event_at: str
    fields: dict = field(default_factory=dict)
    consent: bool = False
    form: bool = False
    blocks: tuple[ReportBlock, ...] = ()
    problems: tuple[Problem, ...] = ()
    withdrawn: bool = False  # the issue is closed: nothing is filed, the pull request is closed
    source_sha256: str = ""  # issue_digest of the issue this was read from (apply re-checks it)


@dataclass(frozen=True)
class Ignored:
    reason: str


def read_event(payload: dict, event_name: str | None = None) -> Submission | Ignored:
    """Turn one webhook payload into a Submission; never raises on a well-formed GitHub payload."""
    if not isinstance(payload, dict) or not isinstance(payload.get("issue"), dict):
        return Ignored("not an issue event")
    event_name = event_name or ("issue_comment" if "comment" in payload else "issues")
    action = str(payload.get("action", ""))
    issue = payload["issue"]
    if issue.get("pull_request"):
        return Ignored("event on a pull request")
    if event_name == "issues":
        if action not in ISSUE_ACTIONS:
            return Ignored(f"issues/{action} is not handled")
        event_at = str(issue.get("updated_at") or issue.get("created_at") or "")
    elif event_name == "refresh":  # main moved under an open replication PR (bot.refresh), not a webhook
        if action != REFRESH_ACTION:
            return Ignored(f"refresh/{action} is not handled")
        event_at = str(issue.get("updated_at") or issue.get("created_at") or "")
    elif event_name == "issue_comment":
        reason = _comment_ignored(payload.get("comment") or {}, action)
        if reason:
            return Ignored(reason)
        event_at = str(payload["comment"].get("created_at") or "")
    else:
        return Ignored(f"event {event_name} is not handled")
    closed = issue.get("state", "open") != "open"
    if event_name == "issues" and (action == "closed") != closed:
        # edits of a closed issue change nothing (its withdrawal was planned when it was closed); a
        # `closed` event for an issue that is open again is stale
        return Ignored("issue is closed" if closed else "issues/closed on an issue that is open again")
    return _submission(payload, issue, f"{event_name}/{action}", event_at)


def issue_digest(issue: dict) -> str:
    """sha256 of what a plan depends on in an issue: its body (newlines normalised), its state, and whether
    its title marks it a submission (a title-only edit changes no plan)."""
    title = str(issue.get("title") or "").lower().startswith(TITLE_PREFIX)
    parts = [normalise_newlines(issue.get("body") or ""), str(issue.get("state") or "open"), title]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=True).encode()).hexdigest()


def is_bot_account(user: dict) -> bool:
    return user.get("type") == "Bot" or str(user.get("login", "")).lower().endswith("[bot]")


def _comment_ignored(comment: dict, action: str) -> str | None:
    user = comment.get("user") or {}
    body = str(comment.get("body") or "")
    if is_bot_account(user) or MARKER in body:
        return "the bot's own comment"
    if action != "created" or [line.strip() for line in body.strip().splitlines()[:1]] != ["/recheck"]:
        return "comment is not /recheck"
    if comment.get("author_association") not in MAINTAINER_ASSOCIATIONS:
        return "/recheck is for maintainers (OWNER, MEMBER, COLLABORATOR)"
    return None


def _submission(payload: dict, issue: dict, event: str, event_at: str) -> Submission | Ignored:
    repo = payload.get("repository") or {}
    body = normalise_newlines(issue.get("body") or "")
    title = str(issue.get("title") or "")
    labels = {str(lb.get("name", "")) for lb in issue.get("labels") or [] if isinstance(lb, dict)}
    base = {
        "repo": str(repo.get("full_name", "")),
        "repo_url": str(repo.get("html_url", "")),
        "default_branch": str(repo.get("default_branch") or "main"),
        "issue": int(issue["number"]),
        "issue_url": str(issue.get("html_url", "")),
        "title": clean_text(title),
        "submitter_login": clean_text((issue.get("user") or {}).get("login", "")),
        "event": event,
        "submitted_at": str(issue.get("created_at") or ""),
        "event_at": event_at,
        "source_sha256": issue_digest(issue),
    }
    marked = REPLICATION_LABEL in labels or title.lower().startswith(TITLE_PREFIX)
    if issue.get("state", "open") != "open":
        if not marked and not _candidate_blocks(body[: MAX_BODY_CHARS * 2])[0]:
            return Ignored("not a replication submission")
        closed = problem("QJ520", "the issue is closed, so nothing of it is filed")
        return Submission(**base, withdrawn=True, problems=(closed,))
    if len(body) > MAX_BODY_CHARS:
        if not marked and not _candidate_blocks(body[: MAX_BODY_CHARS * 2])[0]:
            return Ignored("not a replication submission")
        too_long = problem(
            "QJ502", f"the issue body has {len(body):,} characters; the limit is {MAX_BODY_CHARS:,}"
        )
        return Submission(**base, problems=(too_long,))
    blocks, sections, unterminated = _candidate_blocks(body)
    form = FORM_REPORT_HEADING in sections
    if not (marked or form or blocks):
        return Ignored("not a replication submission")
    problems: list[Problem] = []
    if unterminated:
        problems.append(problem("QJ512", "a code fence is never closed"))
    fields = {}
    for heading, key in FORM_FIELDS.items():
        value, cut = _field(sections.get(heading), FIELD_LIMITS[key])
        fields[key] = value
        if cut:
            problems.append(problem("QJ509", f"'{heading}' was cut to {FIELD_LIMITS[key]} characters"))
    consent = any(is_consent(line) for line in outside_fences(body))
    if is_bot_account(issue.get("user") or {}):
        problems.append(problem("QJ519", f"the issue was opened by {base['submitter_login'][:60]!r}, a bot "
                                         "account"))
    if not blocks:
        problems.append(problem("QJ501", "no fenced JSON block was found in the issue body"))
    elif len(blocks) > MAX_BLOCKS:
        problems.append(problem("QJ507", f"{len(blocks)} reports; only the first {MAX_BLOCKS} are read"))
        blocks = blocks[:MAX_BLOCKS]
    if blocks and not consent:
        problems.append(problem("QJ504", "the CC BY 4.0 consent box is not ticked"))
    return Submission(
        **base,
        fields=fields,
        consent=consent,
        form=form,
        blocks=tuple(_check_size(i + 1, text) for i, text in enumerate(blocks)),
        problems=tuple(problems),
    )


def normalise_newlines(text: str) -> str:
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def clean_text(text: object) -> str:
    """`text` with unpaired surrogates replaced by U+FFFD: they cannot be written as UTF-8, and these
    fields reach records and the gallery. (Report blocks keep theirs, for the parser to refuse: QJ003.)"""
    return _SURROGATE.sub("\ufffd", str(text))


def _check_size(index: int, text: str) -> ReportBlock:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > schema.MAX_REPORT_BYTES:
        return ReportBlock(
            index,
            text,
            (
                problem(
                    "QJ503", f"report {index} has {size:,} bytes; the limit is {schema.MAX_REPORT_BYTES:,}"
                ),
            ),
        )
    return ReportBlock(index, text)


def _field(value: str | None, limit: int) -> tuple[str | None, bool]:
    if value is None or value.strip() in ("", NO_RESPONSE):
        return None, False
    value = clean_text(value.strip())
    return (value[:limit], True) if len(value) > limit else (value, False)


def _candidate_blocks(body: str) -> tuple[list[str], dict[str, str], bool]:
    """The candidate report texts, the `### Heading` sections (lower-cased heading -> text), unterminated?"""
    blocks: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    unterminated = False
    for kind, payload in shown_lines(body):
        if kind == "text":
            heading = _HEADING.match(payload)
            if heading:
                current = sections.setdefault(heading[1].strip().lower(), [])
            elif current is not None:
                current.append(payload)
            continue
        info, content, closed = payload
        # Any fence left open swallows the rest of the body (licence box included), so say so.
        unterminated = unterminated or not closed
        lang = info.split()[0].lower() if info else ""
        if lang == "json" or (not lang and content.lstrip().startswith("{")):
            blocks.append(content)
    return blocks, {k: "\n".join(v) for k, v in sections.items()}, unterminated
