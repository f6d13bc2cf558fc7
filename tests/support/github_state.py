"""In-memory state of the fake GitHub: issues, comments, labels, git objects, refs and pull requests.

Hand-written test double; JSON shapes follow GitHub's REST documentation for the fields the bot reads.
Simplification (documented): trees are flat path -> blob maps, so tree shas are not git's, but blob shas
are real git blob shas. Every method is called with the server's lock held.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import zlib

FIXED_TIME = "2026-12-02T13:00:00Z"


class ApiError(Exception):
    """An HTTP error answer, shaped like GitHub's error bodies."""

    def __init__(self, status: int, message: str, errors: list | None = None):
        super().__init__(message)
        self.status = status
        self.body = {"message": message, "documentation_url": "https://docs.github.com/rest"}
        if errors:
            self.body["errors"] = errors


def blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()  # noqa: S324 - git's object id


def _tree_sha(entries: dict[str, str]) -> str:
    return hashlib.sha1(json.dumps(sorted(entries.items())).encode()).hexdigest()  # noqa: S324


class GitHubState:
    """Everything the fake server knows; methods return JSON-ready dicts or raise ApiError."""

    def __init__(self, base_url: str, owner: str, repo: str, default_branch: str = "main"):
        self.base_url = base_url
        self.owner = owner
        self.repo = repo
        self.default_branch = default_branch
        self.issues: dict[int, dict] = {}
        self.comments: dict[int, dict] = {}
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, str]] = {}
        self.commits: dict[str, dict] = {}
        self.refs: dict[str, str] = {}
        self.pulls: dict[int, dict] = {}
        self._ids = itertools.count(1000)
        self._numbers = itertools.count(1)
        self.commit_files({}, "initial commit", branch=default_branch)

    # ---- helpers for tests -------------------------------------------------------------------------
    @property
    def repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.owner}/{self.repo}"

    def html(self, suffix: str) -> str:
        return f"https://github.com/{self.owner}/{self.repo}/{suffix}"

    def user(self, login: str) -> dict:
        kind = "Bot" if login.endswith("[bot]") else "User"
        return {
            "login": login,
            "id": zlib.crc32(login.encode()) % 10**6,
            "type": kind,
            "url": f"{self.base_url}/users/{login}",
            "html_url": f"https://github.com/{login}",
        }

    def add_issue(self, title: str, body: str | None, login: str, labels: tuple[str, ...] = ()) -> dict:
        number = next(self._numbers)
        self.issues[number] = {
            "id": next(self._ids),
            "node_id": f"I_{number}",
            "number": number,
            "title": title,
            "body": body,
            "user": self.user(login),
            "labels": [self._label(name) for name in labels],
            "state": "open",
            "locked": False,
            "comments": 0,
            "created_at": FIXED_TIME,
            "updated_at": FIXED_TIME,
            "closed_at": None,
            "author_association": "NONE",
            "url": f"{self.repo_url}/issues/{number}",
            "html_url": self.html(f"issues/{number}"),
            "comments_url": f"{self.repo_url}/issues/{number}/comments",
            "labels_url": f"{self.repo_url}/issues/{number}/labels{{/name}}",
            "repository_url": self.repo_url,
        }
        return self.issues[number]

    def edit_issue(self, number: int, **fields) -> dict:
        """Change the issue as its author or a maintainer would (body, title, state, updated_at...), so
        what the API shows agrees with the webhook event a test sends for that change."""
        issue = self.get_issue(number)
        issue.update(fields)
        if fields.get("state") == "closed":
            issue["closed_at"] = issue.get("updated_at") or FIXED_TIME
        return issue

    def sync_with_event(self, payload: dict) -> None:
        """Make the issue of a webhook payload the one the API shows (the payload is what GitHub sent)."""
        issue = payload["issue"]
        if issue["number"] in self.issues:
            self.edit_issue(issue["number"], body=issue.get("body"), title=issue.get("title"),
                            state=issue.get("state", "open"), updated_at=issue.get("updated_at"))

    def commit_files(self, files: dict[str, bytes], message: str, branch: str) -> str:
        parent = self.refs.get(f"refs/heads/{branch}")
        entries = dict(self.trees[self.commits[parent]["tree"]]) if parent else {}
        for path, content in files.items():
            self.blobs[blob_sha(content)] = content
            entries[path] = blob_sha(content)
        tree = self._store_tree(entries)
        sha = self._store_commit(message, tree, [parent] if parent else [])
        self.refs[f"refs/heads/{branch}"] = sha
        return sha

    def files_at(self, ref: str) -> dict[str, bytes]:
        sha = self.refs.get(f"refs/heads/{ref}", ref)
        return {path: self.blobs[b] for path, b in self.trees[self.commits[sha]["tree"]].items()}

    def open_pulls(self) -> list[dict]:
        return [p for p in self.pulls.values() if p["state"] == "open"]

    def merge_pull(self, number: int) -> str:
        """Apply a PR's changed files onto the base branch (a squash merge) and close it."""
        pull = self.pulls[number]
        head = self.commits[self.refs[f"refs/heads/{pull['head']['ref']}"]]
        parent_tree = self.trees[self.commits[head["parents"][0]]["tree"]] if head["parents"] else {}
        changed = {p: self.blobs[b] for p, b in self.trees[head["tree"]].items() if parent_tree.get(p) != b}
        sha = self.commit_files(changed, f"Merge #{number}", pull["base"]["ref"])
        pull.update(state="closed", merged=True, merged_at=FIXED_TIME)
        return sha

    # ---- issues, comments, labels --------------------------------------------------------------------
    def _label(self, name: str) -> dict:
        return {
            "id": zlib.crc32(name.encode()) % 10**6,
            "name": name,
            "color": "ededed",
            "default": False,
            "description": None,
            "url": f"{self.repo_url}/labels/{name}",
        }

    def get_issue(self, number: int) -> dict:
        if number not in self.issues:
            raise ApiError(404, "Not Found")
        return self.issues[number]

    def list_comments(self, number: int) -> list[dict]:
        self.get_issue(number)
        return [c for c in self.comments.values() if c["_issue"] == number]

    def create_comment(self, number: int, body: str, login: str) -> dict:
        issue = self.get_issue(number)
        if not isinstance(body, str) or not body:
            raise ApiError(
                422,
                "Validation Failed",
                [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
            )
        if len(body) > 65536:
            raise ApiError(
                422,
                "Validation Failed",
                [
                    {
                        "resource": "IssueComment",
                        "code": "custom",
                        "message": "Body is too long (maximum is 65536 characters)",
                    }
                ],
            )
        cid = next(self._ids)
        self.comments[cid] = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "_issue": number,
            "body": body,
            "user": self.user(login),
            "created_at": FIXED_TIME,
            "updated_at": FIXED_TIME,
            "author_association": "NONE",
            "url": f"{self.repo_url}/issues/comments/{cid}",
            "issue_url": issue["url"],
            "html_url": self.html(f"issues/{number}#issuecomment-{cid}"),
        }
        issue["comments"] += 1
        return self.comments[cid]

    def edit_comment(self, cid: int, body: str, login: str) -> dict:
        comment = self.comments.get(cid)
        if comment is None:
            raise ApiError(404, "Not Found")
        if comment["user"]["login"] != login:
            raise ApiError(403, "Resource not accessible by integration")
        comment["body"] = body
        return comment

    def set_labels(self, number: int, names: list[str]) -> list[dict]:
        issue = self.get_issue(number)
        if not all(isinstance(n, str) and n for n in names):
            raise ApiError(422, "Validation Failed")
        issue["labels"] = [self._label(n) for n in dict.fromkeys(names)]
        return issue["labels"]

    # ---- git data --------------------------------------------------------------------------------------
    def _store_tree(self, entries: dict[str, str]) -> str:
        sha = _tree_sha(entries)
        self.trees[sha] = dict(entries)
        return sha

    def _store_commit(self, message: str, tree: str, parents: list[str]) -> str:
        sha = hashlib.sha1(json.dumps([message, tree, parents, len(self.commits)]).encode()).hexdigest()  # noqa: S324
        self.commits[sha] = {"message": message, "tree": tree, "parents": parents}
        return sha

    def ref_json(self, ref: str) -> dict:
        sha = self.refs[ref]
        return {
            "ref": ref,
            "node_id": f"REF_{ref}",
            "url": f"{self.repo_url}/git/{ref}",
            "object": {"type": "commit", "sha": sha, "url": f"{self.repo_url}/git/commits/{sha}"},
        }

    def get_ref(self, ref: str) -> dict:
        if ref not in self.refs:
            raise ApiError(404, "Not Found")
        return self.ref_json(ref)

    def create_ref(self, ref: str, sha: str) -> dict:
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise ApiError(422, "Reference name is not valid")
        if ref in self.refs:
            raise ApiError(422, "Reference already exists")
        if sha not in self.commits:
            raise ApiError(422, "Object does not exist")
        self.refs[ref] = sha
        return self.ref_json(ref)

    def update_ref(self, ref: str, sha: str, force: bool) -> dict:
        if ref not in self.refs:
            raise ApiError(422, "Reference does not exist")
        if sha not in self.commits:
            raise ApiError(422, "Object does not exist")
        if not force and not self._is_ancestor(self.refs[ref], sha):
            raise ApiError(422, "Update is not a fast forward")
        self.refs[ref] = sha
        return self.ref_json(ref)

    def _is_ancestor(self, old: str, new: str) -> bool:
        todo = [new]
        while todo:
            sha = todo.pop()
            if sha == old:
                return True
            todo.extend(self.commits[sha]["parents"])
        return False

    def create_blob(self, content: str, encoding: str) -> dict:
        raw = base64.b64decode(content) if encoding == "base64" else content.encode()
        sha = blob_sha(raw)
        self.blobs[sha] = raw
        return {"sha": sha, "url": f"{self.repo_url}/git/blobs/{sha}"}

    def tree_json(self, sha: str) -> dict:
        entries = [
            {
                "path": p,
                "mode": "100644",
                "type": "blob",
                "sha": b,
                "size": len(self.blobs[b]),
                "url": f"{self.repo_url}/git/blobs/{b}",
            }
            for p, b in sorted(self.trees[sha].items())
        ]
        return {"sha": sha, "url": f"{self.repo_url}/git/trees/{sha}", "tree": entries, "truncated": False}

    def create_tree(self, elements: list[dict], base_tree: str | None) -> dict:
        if base_tree is not None and base_tree not in self.trees:
            raise ApiError(422, "base_tree is not a valid tree")
        entries = dict(self.trees[base_tree]) if base_tree else {}
        for el in elements:
            path = el.get("path", "")
            if not path or path.startswith("/") or ".." in path.split("/"):
                raise ApiError(422, "tree.path contains a malformed path component")
            if el.get("sha") is None and "content" not in el:
                entries.pop(path, None)
                continue
            if "content" in el:
                sha = self.create_blob(el["content"], "utf-8")["sha"]
            elif el["sha"] in self.blobs:
                sha = el["sha"]
            else:
                raise ApiError(422, "tree.sha is not a valid blob")
            entries[path] = sha
        return self.tree_json(self._store_tree(entries))

    def commit_json(self, sha: str) -> dict:
        c = self.commits[sha]
        person = {"name": "quantjoule", "email": "bot@example.invalid", "date": FIXED_TIME}
        return {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": f"{self.repo_url}/git/commits/{sha}",
            "html_url": self.html(f"commit/{sha}"),
            "author": person,
            "committer": person,
            "message": c["message"],
            "tree": {"sha": c["tree"], "url": f"{self.repo_url}/git/trees/{c['tree']}"},
            "parents": [{"sha": p, "url": f"{self.repo_url}/git/commits/{p}"} for p in c["parents"]],
        }

    def get_commit(self, sha: str) -> dict:
        if sha not in self.commits:
            raise ApiError(404, "Not Found")
        return self.commit_json(sha)

    def create_commit(self, message: str, tree: str, parents: list[str]) -> dict:
        if tree not in self.trees or not all(p in self.commits for p in parents):
            raise ApiError(422, "Object does not exist")
        return self.commit_json(self._store_commit(message, tree, parents))

    # ---- pull requests -----------------------------------------------------------------------------------
    def pull_json(self, pull: dict) -> dict:
        out = {k: v for k, v in pull.items() if not k.startswith("_")}
        out["head"] = dict(pull["head"], sha=self.refs.get(f"refs/heads/{pull['head']['ref']}"))
        return out

    def list_pulls(self, state: str, head: str | None, base: str | None) -> list[dict]:
        out = []
        for pull in self.pulls.values():
            if state != "all" and pull["state"] != state:
                continue
            if head and head != pull["head"]["label"]:
                continue
            if base and base != pull["base"]["ref"]:
                continue
            out.append(self.pull_json(pull))
        return out

    def create_pull(self, title: str, body: str, head: str, base: str, login: str) -> dict:
        branch = head.split(":", 1)[-1]
        if f"refs/heads/{branch}" not in self.refs or f"refs/heads/{base}" not in self.refs:
            raise ApiError(
                422, "Validation Failed", [{"resource": "PullRequest", "field": "head", "code": "invalid"}]
            )
        label = f"{self.owner}:{branch}"
        if any(p["head"]["label"] == label and p["state"] == "open" for p in self.pulls.values()):
            raise ApiError(
                422,
                "Validation Failed",
                [
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"A pull request already exists for {label}.",
                    }
                ],
            )
        number = next(self._numbers)
        self.pulls[number] = {
            "id": next(self._ids),
            "node_id": f"PR_{number}",
            "number": number,
            "state": "open",
            "title": title,
            "body": body,
            "user": self.user(login),
            "merged": False,
            "merged_at": None,
            "draft": False,
            "created_at": FIXED_TIME,
            "updated_at": FIXED_TIME,
            "url": f"{self.repo_url}/pulls/{number}",
            "html_url": self.html(f"pull/{number}"),
            "head": {"ref": branch, "label": label},
            "base": {"ref": base, "label": f"{self.owner}:{base}"},
        }
        return self.pull_json(self.pulls[number])

    def get_pull(self, number: int) -> dict:
        if number not in self.pulls:
            raise ApiError(404, "Not Found")
        return self.pull_json(self.pulls[number])

    def edit_pull(self, number: int, fields: dict) -> dict:
        pull = self.pulls.get(number)
        if pull is None:
            raise ApiError(404, "Not Found")
        for key in ("title", "body", "state"):
            if key in fields:
                pull[key] = fields[key]
        return self.pull_json(pull)
