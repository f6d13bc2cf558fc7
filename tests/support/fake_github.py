"""A fake GitHub REST server on loopback (http.server in a thread) for PyGithub-driven tests.

Hand-written test double: it implements the endpoints the bot's github forge calls, with the JSON shapes
of GitHub's REST documentation, records every request, and takes injected faults (statuses with headers,
rate limits, connection resets, lost responses, timeouts) so retry paths can be driven deterministically.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.github_state import ApiError, GitHubState


@dataclass
class Fault:
    """One injected failure: matching requests get `kind` instead of (or after) the real answer.

    kind: "status" (answer `status` with `headers`), "reset" (drop the connection before acting),
    "lost" (act, then drop the connection: the write happened but the client never hears of it),
    "timeout" (stall `delay_s` before answering normally).
    """

    method: str = "*"
    path: str = ".*"
    kind: str = "status"
    status: int = 500
    message: str = "Server Error"
    headers: dict = field(default_factory=dict)
    times: int = 1
    delay_s: float = 0.0

    def matches(self, method: str, path: str) -> bool:
        return self.times != 0 and self.method in ("*", method) and re.search(self.path, path) is not None


def rate_limit_fault(
    status: int = 403, retry_after_s: int | None = 1, reset_in_s: int | None = None, clock=time.time, **kw
) -> Fault:
    """A primary (reset header) or secondary (Retry-After) rate-limit answer as GitHub sends it."""
    headers = {}
    if retry_after_s is not None:
        headers["Retry-After"] = str(retry_after_s)
        message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
    else:
        message = "API rate limit exceeded for installation ID 1."
    if reset_in_s is not None:
        headers.update({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(clock()) + reset_in_s)})
    return Fault(kind="status", status=status, message=message, headers=headers, **kw)


class RandomFaults:
    """Fails a fraction of requests with a kind drawn from `kinds` (seeded, thread-safe).

    Kinds: an HTTP status ("500"), "rate" / "rate403" (429 / 403 with Retry-After), "reset", "lost" (the
    write happens, the answer is dropped; a read is reset instead) and "timeout" (stalls `timeout_s`).
    """

    def __init__(
        self,
        rate: float,
        seed: int,
        kinds: tuple[str, ...] = ("500", "502", "503", "reset"),
        timeout_s: float = 5.0,
    ):
        self.rate = rate
        self.kinds = kinds
        self.timeout_s = timeout_s
        self.drawn: dict[str, int] = {}
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def draw(self, method: str, path: str) -> Fault | None:
        with self._lock:
            if self._rng.random() >= self.rate:
                return None
            kind = self._rng.choice(self.kinds)
            if kind == "lost" and method == "GET":
                kind = "reset"
            self.drawn[kind] = self.drawn.get(kind, 0) + 1
        if kind.isdigit():
            return Fault(status=int(kind), message="Injected failure")
        if kind in ("rate", "rate403"):
            return rate_limit_fault(status=429 if kind == "rate" else 403, retry_after_s=1)
        return Fault(kind=kind, delay_s=self.timeout_s)


class FakeGitHub:
    """Owns the server thread, the state, the request log and the fault list."""

    def __init__(
        self, owner: str = "octo-org", repo: str = "quantjoule", tokens: dict | None = None, clock=time.time
    ):
        # token -> (login, may_write); the default pair mirrors an Actions run's two jobs
        self.tokens = tokens or {
            "write-token": ("github-actions[bot]", True),
            "read-token": ("github-actions[bot]", False),
        }
        self.owner, self.repo_name = owner, repo
        self.clock = clock
        self.lock = threading.RLock()
        self.log: list[tuple[str, str, int]] = []
        self.faults: list[Fault] = []
        self.random_faults: RandomFaults | None = None
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self.state: GitHubState | None = None

    def start(self) -> FakeGitHub:
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.state = GitHubState(self.base_url, self.owner, self.repo_name)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.repo_name}"

    def inject(self, *faults: Fault) -> None:
        with self.lock:
            self.faults.extend(faults)

    def calls(self, method: str = "*", pattern: str = ".*") -> list[tuple[str, str, int]]:
        with self.lock:
            return [c for c in self.log if method in ("*", c[0]) and re.search(pattern, c[1])]

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.matches(method, path):
                    fault.times -= 1
                    return fault
        return self.random_faults.draw(method, path) if self.random_faults else None

    def rate_headers(self) -> dict:
        return {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            "X-RateLimit-Used": "1",
            "X-RateLimit-Reset": str(int(self.clock()) + 3600),
            "X-RateLimit-Resource": "core",
        }


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        pass  # a client that timed out or was reset on purpose; the request log has the story


def _handler_for(fake: FakeGitHub):
    class Handler(_Handler):
        pass

    Handler.fake = fake
    return Handler


_N = r"(\d+)"
_REPO = r"/repos/[^/]+/[^/]+"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One buffered write per answer, no Nagle: otherwise every request waits on a delayed ACK.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    fake: FakeGitHub

    def log_message(self, *args) -> None:  # the request log is kept in fake.log instead
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        path, query = urllib.parse.unquote(url.path), dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        fault = self.fake._take_fault(method, path)
        if fault and fault.kind == "reset":
            return self._drop(method, path)
        if fault and fault.kind == "timeout":
            self.fake._release.wait(fault.delay_s)
        if fault and fault.kind == "status":
            body = {"message": fault.message, "documentation_url": "https://docs.github.com/rest"}
            return self._send(method, path, fault.status, body, fault.headers)
        status, body, extra = self._route(method, path, query, raw)
        if fault and fault.kind == "lost":
            return self._drop(method, path)
        self._send(method, path, status, body, extra)

    def _drop(self, method: str, path: str) -> None:
        with self.fake.lock:
            self.fake.log.append((method, path, 0))
        self.close_connection = True
        self.wfile = _Discard()  # nothing of this answer may reach the client
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send(self, method: str, path: str, status: int, body, headers: dict) -> None:
        with self.fake.lock:
            self.fake.log.append((method, path, status))
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for key, value in {**self.fake.rate_headers(), **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str, path: str, query: dict, raw: bytes) -> tuple[int, object, dict]:
        auth = self.headers.get("Authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else ""
        if token not in self.fake.tokens:
            return 401, {"message": "Bad credentials"}, {}
        login, may_write = self.fake.tokens[token]
        if method != "GET" and not may_write:
            return 403, {"message": "Resource not accessible by integration"}, {}
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            return 400, {"message": "Problems parsing JSON"}, {}
        with self.fake.lock:
            try:
                return _dispatch(self.fake.state, method, path, query, payload, login)
            except ApiError as err:
                return err.status, err.body, {}
            except (KeyError, TypeError, AttributeError):
                return 422, {"message": "Validation Failed"}, {}


class _Discard:
    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


def _page(items: list, query: dict, url: str) -> tuple[int, list, dict]:
    per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
    chunk = items[(page - 1) * per_page : page * per_page]
    headers = {}
    if page * per_page < len(items):
        nxt = dict(query, page=str(page + 1), per_page=str(per_page))
        headers["Link"] = f'<{url}?{urllib.parse.urlencode(nxt)}>; rel="next"'
    return 200, chunk, headers


def _dispatch(s: GitHubState, method: str, path: str, query: dict, p, login: str):
    def m(pattern: str):
        return re.fullmatch(_REPO + pattern, path)

    url = s.base_url + path
    if not path.startswith(f"/repos/{s.owner}/{s.repo}"):
        raise ApiError(404, "Not Found")
    if method == "GET" and m(""):
        return (
            200,
            {
                "id": 1,
                "name": s.repo,
                "full_name": f"{s.owner}/{s.repo}",
                "private": False,
                "owner": s.user(s.owner),
                "default_branch": s.default_branch,
                "url": s.repo_url,
                "html_url": s.html("").rstrip("/"),
            },
            {},
        )
    if (g := m(f"/issues/{_N}")) and method == "GET":
        return 200, s.get_issue(int(g[1])), {}
    if g := m(f"/issues/{_N}/comments"):
        if method == "GET":
            return _page([_public(c) for c in s.list_comments(int(g[1]))], query, url)
        return 201, _public(s.create_comment(int(g[1]), p.get("body"), login)), {}
    if (g := m(f"/issues/comments/{_N}")) and method == "PATCH":
        return 200, _public(s.edit_comment(int(g[1]), p.get("body"), login)), {}
    if (g := m(f"/issues/{_N}/labels")) and method in ("PUT", "POST"):
        names = p.get("labels", []) if isinstance(p, dict) else p
        if method == "POST":
            names = [lb["name"] for lb in s.get_issue(int(g[1]))["labels"]] + list(names)
        return 200, s.set_labels(int(g[1]), names), {}
    if (g := m("/git/ref/(.+)")) and method == "GET":
        return 200, s.get_ref("refs/" + g[1]), {}
    if m("/git/refs") and method == "POST":
        return 201, s.create_ref(p["ref"], p["sha"]), {}
    if (g := m("/git/refs/(.+)")) and method == "PATCH":
        return 200, s.update_ref("refs/" + g[1], p["sha"], bool(p.get("force"))), {}
    if (g := m("/git/commits/([0-9a-f]{40})")) and method == "GET":
        return 200, s.get_commit(g[1]), {}
    if m("/git/commits") and method == "POST":
        return 201, s.create_commit(p["message"], p["tree"], list(p.get("parents", []))), {}
    if m("/git/blobs") and method == "POST":
        return 201, s.create_blob(p["content"], p.get("encoding", "utf-8")), {}
    if m("/git/trees") and method == "POST":
        return 201, s.create_tree(p["tree"], p.get("base_tree")), {}
    if (g := m("/git/trees/([0-9a-f]{40})")) and method == "GET":
        if g[1] not in s.trees:
            raise ApiError(404, "Not Found")
        return 200, s.tree_json(g[1]), {}
    if m("/pulls"):
        if method == "GET":
            found = s.list_pulls(query.get("state", "open"), query.get("head"), query.get("base"))
            return _page(found, query, url)
        if method == "POST":
            return 201, s.create_pull(p.get("title"), p.get("body"), p["head"], p["base"], login), {}
    if (g := m(f"/pulls/{_N}")) and method == "PATCH":
        return 200, s.edit_pull(int(g[1]), p), {}
    if (g := m(f"/pulls/{_N}")) and method == "GET":
        return 200, s.get_pull(int(g[1])), {}
    raise ApiError(404, "Not Found")


def _public(comment: dict) -> dict:
    return {k: v for k, v in comment.items() if not k.startswith("_")}
