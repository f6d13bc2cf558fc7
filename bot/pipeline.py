"""Glue between the pure core and the side effects: read event/records/curves, plan, apply.

Bad input is turned into a BotError carrying a registered QJ5xx (or QJ3xx) code and its hint, so the CLI
prints a coded message instead of a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import gallery
from bot.codes import BotError, problem
from bot.forge import Forge, Retrier, apply_plan
from bot.intake import read_event
from bot.plan import STICKY_MARKER, PlanContext, build_plan
from schema.problem import Problem
from schema.records import read_records


def read_json_file(path: str | Path, code: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise BotError(problem(code, f"{path}: {err}")) from err
    if not isinstance(data, dict):
        raise BotError(problem(code, f"{path}: the top level is not a JSON object"))
    return data


def load_curves(curves_path: str | Path | None = None) -> dict:
    import curves
    from curves.codes import CurvesError

    try:
        return curves.load_curves(curves_path)
    except CurvesError as err:
        raise BotError(Problem(err.code, "error", "", err.message, err.hint)) from err


def previous_sticky(forge: Forge | None, issue: int, retrier: Retrier | None = None) -> str | None:
    """The body of the bot's current summary comment on `issue`, read through the forge."""
    if forge is None:
        return None
    retrier = retrier or Retrier()
    comments = retrier.run(forge, "read comments", lambda: forge.list_bot_comments(issue))
    return next((c.body for c in comments if c.body.startswith(STICKY_MARKER)), None)


def plan_event(
    payload: dict,
    event_name: str | None,
    repo_dir: str | Path,
    curves: dict,
    forge: Forge | None = None,
    retrier: Retrier | None = None,
    live: bool | None = None,
) -> dict:
    """Plan one event. With a forge that can read issues (github), the issue is read again and planned as
    it is now (`live`, the default there): an event whose run was replaced in the workflow queue by a
    later one loses nothing, because that later run plans the issue's latest state."""
    sub = read_event(payload, event_name)
    if not hasattr(sub, "issue"):
        return build_plan(sub, PlanContext(curves={}, records={}))
    retrier = retrier or Retrier()
    if forge is not None and (live if live is not None else hasattr(forge, "issue_payload")):
        fresh = retrier.run(forge, f"read issue {sub.issue}", lambda: forge.issue_payload(sub.issue))
        sub = read_event({**payload, "issue": fresh["issue"]}, event_name)
        if not hasattr(sub, "issue"):
            return build_plan(sub, PlanContext(curves={}, records={}))
    records, notes = read_records(repo_dir)  # a file that is not a record: a QJ013 note for maintainers
    ctx = PlanContext(
        curves=curves,
        records=records,
        notes=tuple(notes),
        gallery_base=gallery.committed_files(repo_dir),
        previous_comment=previous_sticky(forge, sub.issue, retrier),
        rejected_pr=rejected_pr(forge, sub.default_branch, sub.issue, retrier),
    )
    return build_plan(sub, ctx)


def rejected_pr(forge: Forge | None, base: str, issue: int, retrier: Retrier) -> dict | None:
    """{"number", "url"} of the pull request a maintainer closed without merging (and none reopened), or
    None: closing the bot's pull request rejects the submission, and that sticks (QJ521)."""
    if forge is None:
        return None
    branch = f"replication/issue-{issue}"

    def find():
        if forge.find_open_pr(base, branch) is not None:
            return None
        return forge.find_rejected_pr(base, branch)

    found = retrier.run(forge, "read pull requests", find)
    return None if found is None else {"number": found.number, "url": found.url}


def failure_plan(payload: dict, step: str, error: Exception) -> dict:
    """A plan that only records that planning failed (QJ518), for `apply` to leave the bot-error label
    and a comment: an issue the bot could not plan is never dropped silently."""
    from bot.plan import PLAN_VERSION

    issue = payload.get("issue") if isinstance(payload, dict) else None
    number = issue.get("number") if isinstance(issue, dict) else None
    if not isinstance(number, int) or isinstance(number, bool):
        return {"plan_version": PLAN_VERSION, "ignored": True, "reason": f"planning failed: {error}"}
    return {"plan_version": PLAN_VERSION, "ignored": False, "issue": number,
            "failed": {"step": step, "error": f"{type(error).__name__}: {str(error)[:300]}"}}


def process(
    payload: dict,
    event_name: str | None,
    repo_dir: str | Path,
    curves: dict,
    forge: Forge,
    retrier: Retrier | None = None,
) -> tuple[dict, dict]:
    """Plan one event and apply it: (plan, apply summary)."""
    plan = plan_event(payload, event_name, repo_dir, curves, forge, retrier)
    return plan, apply_plan(forge, plan, retrier)


def check_plan(plan: dict) -> dict:
    """Refuse a plan that is not one `bot plan` wrote (apply runs with a write token)."""
    from bot.plan import PLAN_VERSION
    from schema.records import UnsafePath, check_path

    if plan.get("plan_version") != PLAN_VERSION:
        raise BotError(problem("QJ514", f"plan_version is {plan.get('plan_version')!r}, not {PLAN_VERSION}"))
    if plan.get("ignored"):
        return plan
    if plan.get("failed") is not None:
        try:
            int(plan["issue"])
            str(plan["failed"]["step"]), str(plan["failed"]["error"])
        except (KeyError, TypeError, ValueError) as err:
            raise BotError(problem("QJ514", f"the failure plan is incomplete: {err}")) from err
        return plan
    try:
        for path in plan["files"]:
            check_path(path)
        int(plan["issue"])
        for key in ("base", "branch", "labels", "comment", "pr"):
            plan[key]  # noqa: B018 - presence check
    except (KeyError, TypeError, ValueError, UnsafePath) as err:
        raise BotError(problem("QJ514", f"the plan is incomplete or unsafe: {err}")) from err
    if not str(plan["branch"]).startswith("replication/issue-"):
        raise BotError(problem("QJ514", "the plan's branch is not replication/issue-<n>"))
    return plan
