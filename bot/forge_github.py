"""The `github` forge: PyGithub only (no hand-written HTTP), against a configurable API base URL.

Files go in through the git data API (blobs, one tree on top of the base branch's tree, one commit whose
parent is the base head, then the branch ref moved): the branch changes in one atomic ref update, binary
plots are fine, and a rerun that would produce the same tree changes nothing. The contents API would make
one commit per file and leave a half-written branch when a call fails midway.
Retries are decided here (`retry_delay`) and slept by bot.forge.Retrier: 5xx, connection resets and
timeouts back off exponentially; 403/429 rate limits wait for `Retry-After`, else `X-RateLimit-Reset`.
"""

from __future__ import annotations

import base64
import hashlib
import time

import requests
from github import Auth, Github, GithubException, InputGitTreeElement, UnknownObjectException

from bot.forge import BOT_CLOSED_MARKER, Comment, PullRequest, with_trailer, written_by_bot

MAX_WAIT_S = 900.0  # a longer rate-limit wait is left to the next run (bot-error label)


class GitHubForge:
    """Adapter over one repository. Constructing it does no network work."""

    def __init__(
        self,
        repo_slug: str,
        token: str,
        api_url: str = "https://api.github.com",
        bot_login: str = "github-actions[bot]",
        clock=time.time,
        timeout_s: int = 15,
        throttle: bool = True,
        backoff_s: float = 1.0,
        backoff_cap_s: float = 60.0,
    ):
        self.repo_slug = repo_slug
        self.bot_login = bot_login
        self._token, self._api_url = token, api_url.rstrip("/")
        self._clock, self._timeout_s, self._throttle = clock, timeout_s, throttle
        self._backoff_s, self._backoff_cap_s = backoff_s, backoff_cap_s
        self._repo_obj = None
        self._comment_objs: dict[int, object] = {}
        self._pr_objs: dict[int, object] = {}
        # Git objects are immutable and content-addressed: once GitHub answered for one, a retried step
        # reuses it instead of asking again, so a retry resumes where the failure struck.
        self._git_objs: dict[tuple, object] = {}

    def _repo(self):
        if self._repo_obj is None:
            # PyGithub's own retry is off: retries are counted and slept by bot.forge.Retrier.
            gh = Github(
                auth=Auth.Token(self._token),
                base_url=self._api_url,
                timeout=self._timeout_s,
                retry=None,
                lazy=True,
                seconds_between_requests=0.25 if self._throttle else None,
                seconds_between_writes=1.0 if self._throttle else None,
            )
            self._repo_obj = gh.get_repo(self.repo_slug)
        return self._repo_obj

    # ---- retry policy ------------------------------------------------------------------------------
    def retry_delay(self, error: Exception, attempt: int) -> float | None:
        backoff = min(self._backoff_cap_s, self._backoff_s * 2**attempt)
        if isinstance(error, requests.exceptions.RequestException):
            return backoff
        if not isinstance(error, GithubException):
            return None
        headers = {k.lower(): v for k, v in (error.headers or {}).items()}
        text = f"{error.message or ''} {error.data or ''}".lower()
        if error.status == 429 or (
            error.status == 403 and ("rate limit" in text or "retry-after" in headers)
        ):
            wait = _rate_limit_wait(headers, self._clock())
            wait = backoff if wait is None else wait
            return wait if wait <= MAX_WAIT_S else None
        if error.status >= 500 or error.status == 409:
            return backoff
        if error.status == 422 and "already exists" in text:
            return 0.0  # a lost answer to our own earlier write; rerunning the step finds it
        return None

    # ---- comments and labels -----------------------------------------------------------------------
    def list_bot_comments(self, issue: int) -> list[Comment]:
        found = []
        for c in self._repo().get_issue(issue).get_comments():
            if c.user is not None and c.user.login == self.bot_login:
                self._comment_objs[c.id] = c
                found.append(Comment(c.id, c.body or ""))
        return found

    def create_comment(self, issue: int, body: str) -> Comment:
        c = self._repo().get_issue(issue).create_comment(body)
        self._comment_objs[c.id] = c
        return Comment(c.id, c.body or "")

    def edit_comment(self, issue: int, comment: Comment, body: str) -> None:
        self._comment_objs[comment.id].edit(body)

    def get_labels(self, issue: int) -> list[str]:
        return [lb.name for lb in self._repo().get_issue(issue).labels]

    def set_labels(self, issue: int, labels: list[str]) -> None:
        self._repo().get_issue(issue).set_labels(*labels)

    # ---- branch and commit ----------------------------------------------------------------------------
    def _once(self, key: tuple, make):
        if key not in self._git_objs:
            self._git_objs[key] = make()
        return self._git_objs[key]

    def commit_files(self, base: str, branch: str, files: dict[str, bytes], message: str) -> str:
        repo = self._repo()
        base_sha = repo.get_git_ref(f"heads/{base}").object.sha  # never cached: the base moves
        base_commit = self._once(("commit", base_sha), lambda: repo.get_git_commit(base_sha))
        elements, entries = [], []
        for path, content in sorted(files.items()):
            blob = self._once(
                ("blob", hashlib.sha256(content).hexdigest()),
                lambda c=content: repo.create_git_blob(base64.b64encode(c).decode("ascii"), "base64"),
            )
            elements.append(InputGitTreeElement(path, "100644", "blob", sha=blob.sha))
            entries.append((path, blob.sha))
        tree_key = ("tree", base_commit.tree.sha, tuple(entries))
        tree = self._once(tree_key, lambda: repo.create_git_tree(elements, base_commit.tree))
        if tree.sha == base_commit.tree.sha:
            return "no-diff"
        try:
            ref = repo.get_git_ref(f"heads/{branch}")
            head_sha = ref.object.sha  # the client is lazy: this is the request that may 404
        except UnknownObjectException:
            ref = None
        if ref is not None:
            head = self._once(("commit", head_sha), lambda: repo.get_git_commit(head_sha))
            if not written_by_bot(head.message or "", head.tree.sha, len(head.parents)):
                return "kept"  # a maintainer's commit: never overwritten (apply also checks first)
            if head.tree.sha == tree.sha and [p.sha for p in head.parents] == [base_sha]:
                return "unchanged"
        commit = self._once(
            ("new-commit", message, tree.sha, base_sha),
            lambda: repo.create_git_commit(with_trailer(message, tree.sha), tree, [base_commit]),
        )
        if ref is None:
            repo.create_git_ref(f"refs/heads/{branch}", commit.sha)
            return "created"
        # The branch belongs to the bot and is rebuilt on the current base, so the update is forced.
        ref.edit(commit.sha, force=True)
        return "updated"

    # ---- pull requests --------------------------------------------------------------------------------
    def _pr(self, pull) -> PullRequest:
        self._pr_objs[pull.number] = pull
        return PullRequest(pull.number, pull.title or "", pull.body or "", pull.html_url)

    def find_open_pr(self, base: str, branch: str) -> PullRequest | None:
        owner = self.repo_slug.split("/", 1)[0]
        for pull in self._repo().get_pulls(state="open", head=f"{owner}:{branch}", base=base):
            return self._pr(pull)
        return None

    def create_pr(self, base: str, branch: str, title: str, body: str) -> PullRequest:
        return self._pr(self._repo().create_pull(base=base, head=branch, title=title, body=body))

    def update_pr(self, pr: PullRequest, title: str, body: str) -> None:
        self._pr_objs[pr.number].edit(title=title, body=body)

    def close_pr(self, pr: PullRequest) -> None:
        body = pr.body if BOT_CLOSED_MARKER in pr.body else f"{pr.body}\n\n{BOT_CLOSED_MARKER}\n"
        self._pr_objs[pr.number].edit(state="closed", body=body)

    def find_rejected_pr(self, base: str, branch: str) -> PullRequest | None:
        """The newest pull request of `branch` closed without merging by someone other than the bot."""
        owner = self.repo_slug.split("/", 1)[0]
        closed = self._repo().get_pulls(state="closed", head=f"{owner}:{branch}", base=base)
        rejected = [p for p in closed if p.merged_at is None and BOT_CLOSED_MARKER not in (p.body or "")]
        return self._pr(max(rejected, key=lambda p: p.number)) if rejected else None

    def branch_owner(self, branch: str) -> str | None:
        """"bot" when the branch head is the bot's own commit, "other" when someone pushed, None if absent."""
        repo = self._repo()
        try:
            head_sha = repo.get_git_ref(f"heads/{branch}").object.sha
        except UnknownObjectException:
            return None
        head = self._once(("commit", head_sha), lambda: repo.get_git_commit(head_sha))
        return "bot" if written_by_bot(head.message or "", head.tree.sha, len(head.parents)) else "other"

    def live_issue(self, issue: int) -> dict:
        """The issue as GitHub shows it now (title, body, state...)."""
        return dict(self._repo().get_issue(issue).raw_data)

    # ---- refresh after a merge -------------------------------------------------------------------------
    def open_pr_branches(self, base: str) -> list[str]:
        """Head branches of this repository's open pull requests into `base`."""
        owner = self.repo_slug.split("/", 1)[0]
        return [
            p.head.ref
            for p in self._repo().get_pulls(state="open", base=base)
            if p.head.repo is None or p.head.repo.owner.login == owner
        ]

    def issue_payload(self, number: int) -> dict:
        """The issue and repository as an issue event carries them (the REST shapes are the same)."""
        repo = self._repo()
        return {"issue": dict(repo.get_issue(number).raw_data), "repository": dict(repo.raw_data)}


def _rate_limit_wait(headers: dict, now: float) -> float | None:
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            return None
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - now) + 1.0
        except ValueError:
            return None
    return None
