"""Faults injected in the fake GitHub server on every call the forge makes: retries converge, or the
failure is left on the issue (bot-error label + comment) and the next run clears it."""

import copy

import pytest

import gallery
from bot.forge import apply_plan
from bot.forge_github import GitHubForge
from bot.intake import read_event
from bot.plan import PlanContext, build_plan
from schema.records import read_records
from tests.support.fake_github import Fault, rate_limit_fault
from tests.support.session import write_tree
from tests.support.webhooks import form_body, issues_event, schema_example

NOW = 1_800_000_000.0
BODY = form_body(schema_example("v2-measured-nf4-hopper.json"))


@pytest.fixture(scope="module")
def plan(tmp_path_factory, base_gallery, curves_data):
    root = write_tree(tmp_path_factory.mktemp("checkout"), base_gallery, replications=False)
    payload = issues_event(number=1, body=BODY)
    payload["repository"]["full_name"] = "octo-org/quantjoule"
    records = read_records(root)[0]
    ctx = PlanContext(curves=curves_data, records=records, gallery_base=gallery.committed_files(root))
    return build_plan(read_event(payload, "issues"), ctx)


@pytest.fixture
def issue(fake_gh):
    return fake_gh.state.add_issue("[replication] x", BODY, "octocat", ("replication",))["number"]


def converged(fake, number):
    names = [lb["name"] for lb in fake.state.issues[number]["labels"]]
    comments = fake.state.list_comments(number)
    return (names, len(comments), len(fake.state.open_pulls()), len(fake.state.pulls))


DONE = (["replication", "confirmation"], 1, 1, 1)
R = "/repos/octo-org/quantjoule"
CALLS = [
    ("GET", f"{R}/issues/1$"),
    ("PUT", f"{R}/issues/1/labels$"),
    ("GET", f"{R}/issues/1/comments$"),
    ("POST", f"{R}/issues/1/comments$"),
    ("GET", f"{R}/git/ref/heads/main$"),
    ("GET", f"{R}/git/commits/"),
    ("POST", f"{R}/git/blobs$"),
    ("POST", f"{R}/git/trees$"),
    ("POST", f"{R}/git/commits$"),
    ("POST", f"{R}/git/refs$"),
    ("GET", f"{R}/pulls$"),
    ("POST", f"{R}/pulls$"),
]


# A lost answer (the write happened, the client never heard) only matters for writes.
KINDS = ("500", "502", "503", "reset", "lost")
CASES = [(m, p, k) for m, p in CALLS for k in KINDS if not (k == "lost" and m == "GET")]


@pytest.mark.parametrize("method,path,kind", CASES)
def test_every_call_recovers_from_server_errors_and_resets(
    fake_gh, forge, retrier, sleeps, plan, issue, method, path, kind
):
    fault = (
        Fault(method, path, kind="status", status=int(kind)) if kind.isdigit() else Fault(method, path, kind)
    )
    fake_gh.inject(fault)
    result = apply_plan(forge, plan, retrier)
    assert result["ok"], result
    assert fault.times == 0, "the fault was never hit"
    assert converged(fake_gh, issue) == DONE
    # one exponential-backoff step (backoff_s * 2**0); a lost write may also meet its own "already exists"
    assert sleeps == [0.5] if kind != "lost" else sleeps in ([0.5], [0.5, 0.0])


@pytest.mark.parametrize("status", [403, 429])
def test_secondary_rate_limit_waits_retry_after(fake_gh, forge, retrier, sleeps, plan, issue, status):
    fake_gh.inject(rate_limit_fault(status=status, retry_after_s=7, method="POST", path=r"/pulls$"))
    assert apply_plan(forge, plan, retrier)["ok"]
    assert sleeps == [7.0] and converged(fake_gh, issue) == DONE


def test_primary_rate_limit_waits_until_the_reset_header(fake_gh, forge, retrier, sleeps, plan, issue):
    fake_gh.clock = lambda: NOW
    fake_gh.inject(
        rate_limit_fault(
            status=403, retry_after_s=None, reset_in_s=30, clock=lambda: NOW, method="GET", path=r"/comments$"
        )
    )
    assert apply_plan(forge, plan, retrier)["ok"]
    assert sleeps == [31.0] and converged(fake_gh, issue) == DONE


def test_a_rate_limit_reset_too_far_away_is_left_for_the_next_run(
    fake_gh, forge, retrier, sleeps, plan, issue
):
    fake_gh.inject(
        rate_limit_fault(
            status=403,
            retry_after_s=None,
            reset_in_s=3600,
            clock=lambda: NOW,
            method="POST",
            path=r"/git/blobs$",
        )
    )
    result = apply_plan(forge, plan, retrier)
    assert not result["ok"] and result["recorded"] and sleeps == []
    assert "bot-error" in [lb["name"] for lb in fake_gh.state.issues[issue]["labels"]]


def test_timeout_is_retried(fake_gh, retrier, sleeps, plan, issue):
    quick = GitHubForge(
        fake_gh.slug, "write-token", api_url=fake_gh.base_url, throttle=False, timeout_s=1, backoff_s=0.5
    )
    fake_gh.inject(Fault("GET", r"/pulls$", kind="timeout", delay_s=3.0))
    assert apply_plan(quick, plan, retrier)["ok"]
    assert sleeps == [0.5] and converged(fake_gh, issue) == DONE


def test_409_on_the_ref_update_is_retried(fake_gh, forge, retrier, sleeps, plan, issue):
    assert apply_plan(forge, plan, retrier)["ok"]
    changed = copy.deepcopy(plan)
    path = next(p for p in changed["files"] if p.startswith("replications/"))
    changed["files"][path]["content"] += " "
    fake_gh.inject(
        Fault(
            "PATCH",
            r"/git/refs/heads/replication/issue-1$",
            status=409,
            message="Reference cannot be updated",
        )
    )
    assert apply_plan(forge, changed, retrier)["ok"]
    assert sleeps == [0.5]
    assert fake_gh.state.files_at("replication/issue-1")[path].endswith(b" ")


def test_lost_pr_creation_meets_422_already_exists_and_finds_the_pr(fake_gh, forge, retrier, plan, issue):
    fake_gh.inject(Fault("POST", r"/pulls$", kind="lost"))
    assert apply_plan(forge, plan, retrier)["ok"]
    assert converged(fake_gh, issue) == DONE


def test_persistent_failure_leaves_bot_error_and_the_next_run_clears_it(
    fake_gh, forge, retrier, sleeps, plan, issue
):
    fault = Fault("POST", r"/pulls$", status=502, times=100)
    fake_gh.inject(fault)
    result = apply_plan(forge, plan, retrier)
    assert not result["ok"] and result["step"] == "pull request" and result["recorded"]
    assert sleeps == [0.5, 1.0, 2.0, 4.0, 8.0]
    names = [lb["name"] for lb in fake_gh.state.issues[issue]["labels"]]
    assert names == ["replication", "bot-error"] and fake_gh.state.open_pulls() == []
    (error,) = fake_gh.state.list_comments(issue)
    assert error["body"].startswith("<!-- quantjoule-bot:error -->") and "QJ510" in error["body"]
    fault.times = 0
    assert apply_plan(forge, plan, retrier)["ok"]
    names = [lb["name"] for lb in fake_gh.state.issues[issue]["labels"]]
    assert names == ["replication", "confirmation"]
    bodies = [c["body"] for c in fake_gh.state.list_comments(issue)]
    assert "Resolved" in bodies[0] and bodies[1].startswith("<!-- quantjoule-bot -->")


def test_a_read_only_token_cannot_write_and_says_so(fake_gh, retrier, sleeps, plan, issue):
    reader = GitHubForge(fake_gh.slug, "read-token", api_url=fake_gh.base_url, throttle=False)
    result = apply_plan(reader, plan, retrier)
    assert not result["ok"] and not result["recorded"] and sleeps == []
    assert fake_gh.state.list_comments(issue) == [] and fake_gh.state.pulls == {}
