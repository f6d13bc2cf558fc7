"""The `local` forge: a local git repository via real git (subprocess), comments and PRs as files.

Branches are written with git plumbing (hash-object, a temporary index, write-tree, commit-tree,
update-ref), so the work tree and the checked-out branch are never touched. The outbox directory holds
what GitHub would show: `issues/<n>/comments.json` + one `comment-<id>.md` per comment,
`issues/<n>/labels.json`, and `pulls.json` + `pulls/<number>.md` (title and body).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from bot.forge import BOT_CLOSED_MARKER, Comment, PullRequest, with_trailer, written_by_bot

_IDENTITY = {
    "GIT_AUTHOR_NAME": "quantjoule bot",
    "GIT_AUTHOR_EMAIL": "bot@quantjoule.invalid",
    "GIT_COMMITTER_NAME": "quantjoule bot",
    "GIT_COMMITTER_EMAIL": "bot@quantjoule.invalid",
}


class GitError(RuntimeError):
    pass


class LocalForge:
    """Adapter over a local repository `repo_dir`; writes the comment/PR files under `outbox_dir`."""

    def __init__(self, repo_dir: str | Path, outbox_dir: str | Path, bot_login: str = "quantjoule-bot"):
        self.repo_dir = Path(repo_dir)
        self.outbox = Path(outbox_dir)
        self.bot_login = bot_login

    def retry_delay(self, error: Exception, attempt: int) -> float | None:
        return None  # git on a local disk either works or needs a person

    # ---- git ----------------------------------------------------------------------------------------
    def _git(self, *args: str, stdin: bytes | None = None, env: dict | None = None) -> str:
        run_env = {**os.environ, **_IDENTITY, **(env or {})}
        proc = subprocess.run(
            ["git", "-C", str(self.repo_dir), *args],
            input=stdin,
            capture_output=True,
            env=run_env,
            check=False,
        )
        if proc.returncode != 0:
            raise GitError(f"git {' '.join(args[:2])} failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout.decode().strip()

    def _rev(self, rev: str) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", rev)
        except GitError:
            return None

    def commit_files(self, base: str, branch: str, files: dict[str, bytes], message: str) -> str:
        base_sha = self._rev(f"refs/heads/{base}^{{commit}}")
        if base_sha is None:
            raise GitError(f"base branch {base} does not exist")
        index_lines = []
        for path, content in sorted(files.items()):
            sha = self._git("hash-object", "-w", "--stdin", stdin=content)
            index_lines.append(f"100644 {sha}\t{path}")
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", base_sha, env=env)
            self._git("update-index", "--index-info", stdin=("\n".join(index_lines) + "\n").encode(), env=env)
            tree = self._git("write-tree", env=env)
        if tree == self._rev(f"{base_sha}^{{tree}}"):
            return "no-diff"
        head = self._rev(f"refs/heads/{branch}^{{commit}}")
        if head is not None:
            if self.branch_owner(branch) == "other":
                return "kept"  # a maintainer's commit: never overwritten
            head_tree, *parents = self._git("log", "-1", "--format=%T %P", head).split()
            if head_tree == tree and parents == [base_sha]:
                return "unchanged"
        commit = self._git("commit-tree", tree, "-p", base_sha, stdin=with_trailer(message, tree).encode())
        self._git("update-ref", f"refs/heads/{branch}", commit)
        return "created" if head is None else "updated"

    def branch_owner(self, branch: str) -> str | None:
        """"bot" when the branch head is the bot's own commit, "other" when someone pushed, None if absent."""
        head = self._rev(f"refs/heads/{branch}^{{commit}}")
        if head is None:
            return None
        tree, parents, message = self._git("log", "-1", "--format=%T%x00%P%x00%B", head).split("\x00", 2)
        return "bot" if written_by_bot(message, tree, len(parents.split())) else "other"

    def live_issue(self, issue: int) -> dict | None:
        """The issue as last written to the outbox (`issues/<n>/issue.json`), or None: the local forge
        keeps no issues unless a caller records them there."""
        path = self.outbox / "issues" / str(int(issue)) / "issue.json"
        return self._load(path, None)

    # ---- outbox files ---------------------------------------------------------------------------------
    def _issue_dir(self, issue: int) -> Path:
        d = self.outbox / "issues" / str(int(issue))
        d.mkdir(parents=True, exist_ok=True)
        return d

    @staticmethod
    def _load(path: Path, default):
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else default

    @staticmethod
    def _save(path: Path, data) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(path)

    def comments(self, issue: int) -> list[dict]:
        return self._load(self._issue_dir(issue) / "comments.json", [])

    def list_bot_comments(self, issue: int) -> list[Comment]:
        return [Comment(c["id"], c["body"]) for c in self.comments(issue) if c["author"] == self.bot_login]

    def create_comment(self, issue: int, body: str) -> Comment:
        comments = self.comments(issue)
        cid = max([c["id"] for c in comments], default=0) + 1
        comments.append({"id": cid, "author": self.bot_login, "body": body})
        self._save(self._issue_dir(issue) / "comments.json", comments)
        (self._issue_dir(issue) / f"comment-{cid}.md").write_text(body, encoding="utf-8")
        return Comment(cid, body)

    def edit_comment(self, issue: int, comment: Comment, body: str) -> None:
        comments = self.comments(issue)
        for c in comments:
            if c["id"] == comment.id:
                c["body"] = body
        self._save(self._issue_dir(issue) / "comments.json", comments)
        (self._issue_dir(issue) / f"comment-{comment.id}.md").write_text(body, encoding="utf-8")

    def get_labels(self, issue: int) -> list[str]:
        return self._load(self._issue_dir(issue) / "labels.json", [])

    def set_labels(self, issue: int, labels: list[str]) -> None:
        self._save(self._issue_dir(issue) / "labels.json", list(labels))

    def pulls(self) -> dict:
        return self._load(self.outbox / "pulls.json", {})

    def _pr_file(self, number: int) -> Path:
        return self.outbox / "pulls" / f"{number}.md"

    def find_open_pr(self, base: str, branch: str) -> PullRequest | None:
        for number, pr in sorted(self.pulls().items(), key=lambda kv: int(kv[0])):
            if pr["head"] == branch and pr["base"] == base and pr["state"] == "open":
                return PullRequest(int(number), pr["title"], pr["body"], str(self._pr_file(int(number))))
        return None

    def create_pr(self, base: str, branch: str, title: str, body: str) -> PullRequest:
        pulls = self.pulls()
        number = max([int(n) for n in pulls], default=0) + 1
        pulls[str(number)] = {"title": title, "body": body, "head": branch, "base": base, "state": "open"}
        self._write_pr(pulls, number)
        return PullRequest(number, title, body, str(self._pr_file(number)))

    def update_pr(self, pr: PullRequest, title: str, body: str) -> None:
        pulls = self.pulls()
        pulls[str(pr.number)].update(title=title, body=body)
        self._write_pr(pulls, pr.number)

    def close_pr(self, pr: PullRequest) -> None:
        pulls = self.pulls()
        entry = pulls[str(pr.number)]
        if BOT_CLOSED_MARKER not in entry["body"]:
            entry["body"] = f"{entry['body']}\n\n{BOT_CLOSED_MARKER}\n"
        entry["state"] = "closed"
        self._write_pr(pulls, pr.number)

    def find_rejected_pr(self, base: str, branch: str) -> PullRequest | None:
        """The newest pull request of `branch` closed (not merged) by someone other than the bot."""
        found = None
        for number, pr in sorted(self.pulls().items(), key=lambda kv: int(kv[0])):
            if (pr["head"] == branch and pr["base"] == base and pr["state"] == "closed"
                    and not pr.get("merged") and BOT_CLOSED_MARKER not in pr["body"]):
                found = PullRequest(int(number), pr["title"], pr["body"], str(self._pr_file(int(number))))
        return found

    def _write_pr(self, pulls: dict, number: int) -> None:
        self._save(self.outbox / "pulls.json", pulls)
        pr = pulls[str(number)]
        self._pr_file(number).parent.mkdir(parents=True, exist_ok=True)
        self._pr_file(number).write_text(
            f"# {pr['title']}\n\n<!-- {pr['state']}: {pr['head']} -> {pr['base']} -->\n\n{pr['body']}",
            encoding="utf-8",
        )
