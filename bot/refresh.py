"""Re-plan open replication PRs after main moved, so each one is rebuilt on the new main.

Every replication PR carries the rebuilt gallery files, so once one is merged the others change the same
files against an older main and conflict. The bot's branches are its own and are always rebuilt on the
current base (`commit_files`), so re-planning each open PR's issue against the new main resolves that:
the record is unchanged, the gallery files now hold every merged point too. The plans are made with a
read-only token and applied by `python -m bot apply`, like any other event.
"""

from __future__ import annotations

import re

from bot.forge import Retrier
from bot.intake import REFRESH_ACTION
from bot.pipeline import failure_plan, plan_event

BRANCH = re.compile(r"replication/issue-([1-9][0-9]{0,9})")


def open_replication_issues(forge, base: str, retrier: Retrier | None = None) -> list[int]:
    """Issue numbers of the open replication PRs into `base` (branch `replication/issue-<n>`)."""
    retrier = retrier or Retrier()
    branches = retrier.run(forge, "list open pull requests", lambda: forge.open_pr_branches(base))
    return sorted({int(m[1]) for b in branches if (m := BRANCH.fullmatch(b))})


def refresh_plans(
    forge, repo_dir, curves: dict, base: str, retrier: Retrier | None = None
) -> dict[int, dict]:
    """{issue: plan} for every open replication PR, planned against the checkout of `base` at repo_dir.

    One issue that cannot be planned never stops the others: its plan records the failure (QJ518), so
    `apply` leaves the bot-error label on it."""
    retrier = retrier or Retrier()
    plans = {}
    for number in open_replication_issues(forge, base, retrier):
        payload = {"issue": {"number": number}}
        try:
            payload = retrier.run(forge, f"read issue {number}", lambda n=number: forge.issue_payload(n))
            payload["action"] = REFRESH_ACTION
            plans[number] = plan_event(payload, "refresh", repo_dir, curves, forge, retrier, live=False)
        except Exception as err:  # noqa: BLE001 - API failures, bad input, anything: the others go on
            plans[number] = failure_plan(payload, f"refresh issue {number}", err)
    return plans
