"""Webhook payloads shaped like GitHub's `issues` and `issue_comment` events, and issue-form bodies.

Hand-written test data: the fields follow GitHub's webhook documentation for the parts the bot reads.
"""

from __future__ import annotations

import copy

REPO = {
    "id": 1,
    "node_id": "R_1",
    "name": "quantjoule",
    "full_name": "octo-org/quantjoule",
    "private": False,
    "owner": {"login": "octo-org", "id": 2, "type": "Organization"},
    "html_url": "https://github.com/octo-org/quantjoule",
    "default_branch": "main",
}
CONSENT_LINE = "- [X] I license this report under CC BY 4.0, and I measured it myself."


def form_body(
    reports: list[str] | str,
    handle: str | None = "Ada L.",
    affiliation: str | None = "Example Lab",
    gpu: str | None = "NVIDIA H200",
    notes: str | None = None,
    consent: bool = True,
) -> str:
    """An issue body as GitHub renders the replication issue form (`### Label` sections)."""
    reports = [reports] if isinstance(reports, str) else reports

    def value(v: str | None) -> str:
        return v if v else "_No response_"

    blocks = "\n\n".join(f"```json\n{text}\n```" for text in reports) or "_No response_"
    return (
        f"### Credited handle\n\n{value(handle)}\n\n### Affiliation\n\n{value(affiliation)}\n\n"
        f"### GPU\n\n{value(gpu)}\n\n### Notes\n\n{value(notes)}\n\n### energy.json\n\n{blocks}\n\n"
        f"### Licence\n\n{CONSENT_LINE if consent else '- [ ] I license this report under CC BY 4.0.'}"
    )


def issue_object(
    number: int = 7,
    body: str | None = "",
    title: str = "[replication] TinyLlama NF4",
    login: str = "octocat",
    labels: tuple[str, ...] = ("replication",),
    state: str = "open",
    updated_at: str = "2026-12-02T13:00:00Z",
) -> dict:
    return {
        "url": f"https://api.github.com/repos/octo-org/quantjoule/issues/{number}",
        "html_url": f"https://github.com/octo-org/quantjoule/issues/{number}",
        "id": 1000 + number,
        "node_id": f"I_{number}",
        "number": number,
        "title": title,
        "user": {"login": login, "id": 583231, "type": "User"},
        "labels": [
            {"id": i, "name": name, "color": "ededed", "default": False} for i, name in enumerate(labels)
        ],
        "state": state,
        "locked": False,
        "assignee": None,
        "assignees": [],
        "comments": 0,
        "created_at": "2026-12-02T12:59:00Z",
        "updated_at": updated_at,
        "closed_at": None,
        "author_association": "NONE",
        "body": body,
        "reactions": {"total_count": 0},
    }


def issues_event(action: str = "opened", **issue_kw) -> dict:
    """An `issues` webhook payload (opened, edited, reopened, ...)."""
    issue = issue_object(**issue_kw)
    payload = {
        "action": action,
        "issue": issue,
        "repository": copy.deepcopy(REPO),
        "sender": copy.deepcopy(issue["user"]),
    }
    if action == "edited":
        payload["changes"] = {"body": {"from": "(the previous body)"}}
    return payload


def comment_event(
    body: str = "/recheck",
    association: str = "MEMBER",
    login: str = "maintainer",
    user_type: str = "User",
    created_at: str = "2026-12-02T14:00:00Z",
    **issue_kw,
) -> dict:
    """An `issue_comment` webhook payload (action created)."""
    issue = issue_object(**issue_kw)
    comment = {
        "url": f"{issue['url'].rsplit('/', 1)[0]}/comments/5001",
        "html_url": f"{issue['html_url']}#issuecomment-5001",
        "id": 5001,
        "node_id": "IC_5001",
        "body": body,
        "user": {"login": login, "id": 9, "type": user_type},
        "created_at": created_at,
        "updated_at": created_at,
        "author_association": association,
    }
    return {
        "action": "created",
        "issue": issue,
        "comment": comment,
        "repository": copy.deepcopy(REPO),
        "sender": copy.deepcopy(comment["user"]),
    }


def schema_example(name: str, kind: str = "valid") -> str:
    """Text of one of the schema package's example reports (test fixtures with constructed numbers)."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[1] / "schema" / "examples"
    return (examples / kind / name).read_text(encoding="utf-8")
