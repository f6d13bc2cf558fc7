"""The forge interface and `apply_plan`: make a plan true on a forge, idempotently, with retries.

A forge is a small adapter (github: PyGithub; local: git + files). `apply_plan` runs idempotent steps,
each re-reading the forge's state before writing, so a step can be retried after any failure, including
a write whose answer was lost. A step that keeps failing leaves the `bot-error` label and an error
comment so the next run picks the issue up; no submission is dropped silently.

Before writing anything it re-reads the live issue: a plan made from an issue that has since been edited,
closed or reopened is stale and writes nothing (the run of that newer event plans it). It never reopens a
pull request a maintainer closed (the submission is rejected, QJ521), and never overwrites a branch a
maintainer pushed to (QJ522): it leaves the branch and its pull request as they are and says so.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Protocol

from bot.intake import issue_digest
from bot.plan import ERROR_MARKER, PR_LINK_SLOT, STICKY_MARKER, decode_file
from schema.escape import md_inline
from schema.records import check_path

ERROR_LABEL = "bot-error"
# Added to the body of a pull request the bot closes itself, so a close without it is a maintainer's.
BOT_CLOSED_MARKER = "<!-- quantjoule-bot:closed -->"
# The last line of every commit the bot writes: the tree it wrote. A head commit without it, or whose
# tree differs, is someone else's (a maintainer's fix), and the bot does not overwrite it.
TREE_TRAILER = "Quantjoule-Bot-Tree: "


def with_trailer(message: str, tree: str) -> str:
    return f"{message.rstrip()}\n\n{TREE_TRAILER}{tree}\n"


def written_by_bot(message: str, tree: str, parents: int) -> bool:
    """Whether a branch head (its message, tree sha and number of parents) is the bot's own commit."""
    trailers = [line[len(TREE_TRAILER):].strip() for line in message.splitlines()
                if line.startswith(TREE_TRAILER)]
    if trailers:
        return trailers[-1] == tree and parents == 1
    # Commits from before the trailer: the bot's message form, on one parent.
    return message.startswith("Replication from issue ") and parents == 1


@dataclass
class Comment:
    id: int
    body: str


@dataclass
class PullRequest:
    number: int
    title: str
    body: str
    url: str


class Forge(Protocol):
    def list_bot_comments(self, issue: int) -> list[Comment]: ...
    def create_comment(self, issue: int, body: str) -> Comment: ...
    def edit_comment(self, issue: int, comment: Comment, body: str) -> None: ...
    def get_labels(self, issue: int) -> list[str]: ...
    def set_labels(self, issue: int, labels: list[str]) -> None: ...
    def commit_files(self, base: str, branch: str, files: dict[str, bytes], message: str) -> str: ...
    def find_open_pr(self, base: str, branch: str) -> PullRequest | None: ...
    def create_pr(self, base: str, branch: str, title: str, body: str) -> PullRequest: ...
    def update_pr(self, pr: PullRequest, title: str, body: str) -> None: ...
    def close_pr(self, pr: PullRequest) -> None: ...  # marks the body with BOT_CLOSED_MARKER
    def find_rejected_pr(self, base: str, branch: str) -> PullRequest | None: ...
    def branch_owner(self, branch: str) -> str | None: ...  # "bot", "other", or None (no branch)
    def live_issue(self, issue: int) -> dict | None: ...  # the issue as the REST API shows it, or None
    def retry_delay(self, error: Exception, attempt: int) -> float | None: ...


class StepFailed(Exception):
    def __init__(self, step: str, error: Exception):
        super().__init__(f"{step}: {type(error).__name__}: {error}")
        self.step, self.error = step, error


@dataclass
class Retrier:
    """Runs a step until it succeeds, sleeping as the forge's retry_delay says; `sleep` is injectable."""

    attempts: int = 6
    sleep: object = time.sleep
    jitter: random.Random | None = None

    def run(self, forge: Forge, step: str, fn):
        for attempt in range(self.attempts):
            try:
                return fn()
            except Exception as err:  # noqa: BLE001 - every failure is classified, none is swallowed
                delay = forge.retry_delay(err, attempt)
                if delay is None or attempt == self.attempts - 1:
                    raise StepFailed(step, err) from err
                if self.jitter is not None:
                    delay *= 1 + self.jitter.random() * 0.25
                self.sleep(delay)
        raise AssertionError("unreachable")


def apply_plan(forge: Forge, plan: dict, retrier: Retrier | None = None) -> dict:
    """Apply `plan`; returns a summary {ok, actions, ...}. Never raises for forge failures."""
    if plan.get("ignored"):
        return {"ok": True, "ignored": True, "reason": plan.get("reason"), "actions": []}
    retrier = retrier or Retrier()
    if plan.get("failed") is not None:  # planning itself failed (QJ518): record it so a rerun picks it up
        failed = StepFailed(plan["failed"]["step"], RuntimeError(plan["failed"]["error"]))
        actions: list[str] = []
        recorded = _record_failure(forge, retrier, plan, failed, actions, code="QJ518")
        return {"ok": False, "step": failed.step, "error": str(failed), "recorded": recorded,
                "actions": actions}
    issue, actions = plan["issue"], []
    files = {check_path(path): decode_file(entry) for path, entry in plan["files"].items()}
    try:
        if _stale(forge, retrier, plan):
            actions.append("skipped: the issue changed after this plan was made (the run of that change "
                           "plans it again)")
            return {"ok": True, "stale": True, "actions": actions, "pr": None}
        owner = retrier.run(forge, "read branch", lambda: forge.branch_owner(plan["branch"]))
        pr, outcome = None, "none"
        if owner == "other":
            # A maintainer pushed to the branch: it and its pull request are theirs now (QJ522).
            outcome = "kept"
            actions.append(f"branch {plan['branch']}: kept, a maintainer pushed to it")
            pr = retrier.run(forge, "pull request", lambda: forge.find_open_pr(plan["base"], plan["branch"]))
        else:
            if files and plan["pr"]:
                outcome = retrier.run(
                    forge,
                    "commit",
                    lambda: forge.commit_files(plan["base"], plan["branch"], files, plan["commit_message"]),
                )
                actions.append(f"branch {plan['branch']}: {outcome}")
            if plan["pr"] and outcome != "no-diff":
                pr, outcome = retrier.run(
                    forge, "pull request", lambda: _ensure_pr(forge, plan, actions, outcome)
                )
            else:
                retrier.run(forge, "pull request", lambda: _ensure_no_pr(forge, plan, actions))
        retrier.run(forge, "labels", lambda: _ensure_labels(forge, issue, plan["labels"], actions))
        body = plan["comment"]["body"].replace(PR_LINK_SLOT, _pr_line(pr, plan, outcome))
        retrier.run(forge, "comment", lambda: _ensure_comments(forge, issue, plan, body, actions))
    except StepFailed as failed:
        recorded = _record_failure(forge, retrier, plan, failed, actions)
        return {
            "ok": False,
            "step": failed.step,
            "error": str(failed),
            "recorded": recorded,
            "actions": actions,
        }
    return {"ok": True, "actions": actions, "pr": pr.url if pr else None}


def _stale(forge: Forge, retrier: Retrier, plan: dict) -> bool:
    """True when the live issue is not the one the plan was made from (edited, closed or reopened since)."""
    if not plan.get("issue_sha256"):
        return False
    live = retrier.run(forge, "read issue", lambda: forge.live_issue(plan["issue"]))
    return live is not None and issue_digest(live) != plan["issue_sha256"]


def _pr_line(pr: PullRequest | None, plan: dict, outcome: str) -> str:
    if outcome == "kept":
        where = f"Pull request: {pr.url}" if pr is not None else "Its pull request is closed"
        return (f"{where} (branch `{plan['branch']}`). **QJ522** (warning): a maintainer pushed to the "
                "branch, so the bot left the branch and its pull request as they are. To let the bot "
                "rebuild it, delete the branch (or reset it to the bot's last commit) and comment "
                "`/recheck`.")
    if outcome == "rejected":
        return ("No pull request: a maintainer closed this submission's pull request without merging it, "
                "and the bot opens no other (a maintainer can reopen it to reconsider).")
    if pr is not None:
        return f"Pull request: {pr.url} (branch `{plan['branch']}`), for a maintainer to review and merge."
    if outcome == "no-diff":
        return "Everything in this submission is already on the main branch; no pull request is needed."
    if plan.get("status") == "withdrawn":
        return "No pull request: the submission was withdrawn by closing the issue."
    return "No pull request: nothing in this submission can be filed yet."


def _ensure_pr(forge: Forge, plan: dict, actions: list, outcome: str) -> tuple[PullRequest | None, str]:
    title, body = plan["pr"]["title"], plan["pr"]["body"]
    pr = forge.find_open_pr(plan["base"], plan["branch"])
    if pr is None:
        # Checked again here: a maintainer may have closed it after the plan was made.
        rejected = forge.find_rejected_pr(plan["base"], plan["branch"])
        if rejected is not None:
            actions.append(f"no pull request: a maintainer closed {rejected.url}")
            return None, "rejected"
        pr = forge.create_pr(plan["base"], plan["branch"], title, body)
        actions.append(f"opened pull request {pr.url}")
    elif (pr.title, pr.body) != (title, body):
        forge.update_pr(pr, title, body)
        actions.append(f"updated pull request {pr.url}")
    return pr, outcome


def _ensure_no_pr(forge: Forge, plan: dict, actions: list) -> None:
    pr = forge.find_open_pr(plan["base"], plan["branch"])
    if pr is not None:
        forge.close_pr(pr)
        why = "the issue was closed" if plan.get("status") == "withdrawn" else "nothing acceptable is left"
        actions.append(f"closed pull request {pr.url}: {why}")


def _ensure_labels(forge: Forge, issue: int, labels: dict, actions: list) -> None:
    current = forge.get_labels(issue)
    managed = set(labels["managed"])
    desired = [lb for lb in current if lb not in managed] + list(labels["target"])
    if sorted(desired) != sorted(current):
        forge.set_labels(issue, desired)
        actions.append(f"labels: {', '.join(desired)}")


def _ensure_comments(forge: Forge, issue: int, plan: dict, body: str, actions: list) -> None:
    comments = forge.list_bot_comments(issue)
    sticky = next((c for c in comments if c.body.startswith(STICKY_MARKER)), None)
    if sticky is None:
        forge.create_comment(issue, body)
        actions.append("posted the summary comment")
    elif sticky.body != body:
        forge.edit_comment(issue, sticky, body)
        actions.append("edited the summary comment")
    error = next((c for c in comments if c.body.startswith(ERROR_MARKER)), None)
    if error is not None and "Resolved" not in error.body:
        forge.edit_comment(issue, error, f"{ERROR_MARKER}\nResolved: a later run filed this submission.\n")
        actions.append("marked the error comment resolved")
    notice = plan.get("notice")
    if notice and not any(c.body.startswith(notice["marker"]) for c in comments):
        forge.create_comment(issue, notice["body"])
        actions.append("posted a verdict-change notice")


def _record_failure(
    forge: Forge, retrier: Retrier, plan: dict, failed: StepFailed, actions: list, code: str = "QJ510"
) -> bool:
    issue = plan["issue"]
    if code == "QJ518":
        what = f"the bot could not plan this issue (*{md_inline(failed.step, 40)}*)"
    else:
        what = (f"the GitHub API kept failing at the step *{md_inline(failed.step, 40)}* "
                f"({md_inline(type(failed.error).__name__, 60)})")
    body = (
        f"{ERROR_MARKER}\n**{code}** (error): {what}. "
        "*Hint:* nothing is lost: the issue keeps the `bot-error` label and is processed again on the "
        "next run (or comment `/recheck` as a maintainer).\n"
    )

    def label() -> None:
        labels = forge.get_labels(issue)
        if ERROR_LABEL not in labels:
            forge.set_labels(issue, [*labels, ERROR_LABEL])

    def comment() -> None:
        existing = next((c for c in forge.list_bot_comments(issue) if c.body.startswith(ERROR_MARKER)), None)
        if existing is None:
            forge.create_comment(issue, body)
        elif existing.body != body:
            forge.edit_comment(issue, existing, body)

    # The label and the comment are recorded independently, each with twice the usual attempts: the API
    # is already failing, and the label is what marks the issue for the next run.
    patient = Retrier(attempts=retrier.attempts * 2, sleep=retrier.sleep, jitter=retrier.jitter)
    done = []
    for name, fn in (("record failure: label", label), ("record failure: comment", comment)):
        try:
            patient.run(forge, name, fn)
            done.append(name)
        except StepFailed:
            continue
    if "record failure: label" not in done:
        return False
    actions.append(
        "left the bot-error label" + (" and an error comment" if len(done) == 2 else " (the comment failed)")
    )
    return True
