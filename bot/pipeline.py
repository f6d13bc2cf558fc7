"""Glue between the pure core and the side effects: read event/records/curves, plan, apply.

Bad input is turned into a BotError carrying a registered QJ5xx (or QJ3xx) code and its hint, so the CLI
prints a coded message instead of a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.codes import problem
from bot.forge import Forge, Retrier, apply_plan
from bot.intake import read_event
from bot.plan import STICKY_MARKER, PlanContext, build_plan
from schema.problem import Problem
from schema.records import read_records


class BotError(Exception):
    def __init__(self, prob: Problem):
        super().__init__(f"{prob.code}: {prob.message}")
        self.problem = prob


def read_json_file(path: str | Path, code: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise BotError(problem(code, f"{path}: {err}")) from err
    if not isinstance(data, dict):
        raise BotError(problem(code, f"{path}: the top level is not a JSON object"))
    return data


def read_base_records(repo_dir: str | Path) -> tuple[dict[str, dict], list[Problem]]:
    """Every readable record under `repo_dir`/replications keyed by its repository-relative path, and a
    QJ515 note for each file that is not one: it is skipped, so one bad file never stops planning."""
    records, unreadable = read_records(repo_dir)
    notes = [problem("QJ515", f"{u.path} is skipped: {u.reason}", u.path) for u in unreadable]
    return records, notes


def load_records(repo_dir: str | Path) -> dict[str, dict]:
    """Every readable record under `repo_dir`/replications, keyed by its repository-relative path."""
    return read_base_records(repo_dir)[0]


def load_curves(curves_path: str | Path | None = None) -> dict:
    import curves
    from curves.codes import CurvesError

    try:
        return curves.load_curves(curves_path)
    except CurvesError as err:
        raise BotError(Problem(err.code, "error", "", err.message, err.hint)) from err


def load_gallery(repo_dir: str | Path) -> dict[str, bytes]:
    """The committed gallery files (README and plots) of the checkout, keyed by repository path."""
    root = Path(repo_dir)
    found = sorted((root / "gallery").glob("README.md")) + sorted((root / "gallery" / "plots").glob("*"))
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in found if path.is_file()}


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
) -> dict:
    sub = read_event(payload, event_name)
    if not hasattr(sub, "issue"):
        return build_plan(sub, PlanContext(curves={}, records={}))
    records, notes = read_base_records(repo_dir)
    ctx = PlanContext(
        curves=curves,
        records=records,
        notes=tuple(notes),
        gallery_base=load_gallery(repo_dir),
        previous_comment=previous_sticky(forge, sub.issue, retrier),
    )
    return build_plan(sub, ctx)


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
    from bot.plan import PLAN_VERSION, UnsafePath, check_path

    if plan.get("plan_version") != PLAN_VERSION:
        raise BotError(problem("QJ514", f"plan_version is {plan.get('plan_version')!r}, not {PLAN_VERSION}"))
    if plan.get("ignored"):
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
