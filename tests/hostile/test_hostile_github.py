"""A sample of the hostile corpus through the github forge (PyGithub over HTTP against the fake server),
and faults injected on every call the forge makes, in the first-filing, update and withdrawal paths."""

import pytest

from bot.forge import Retrier, apply_plan
from bot.intake import read_event
from bot.plan import PlanContext, build_plan
from tests.support.fake_github import FakeGitHub, Fault, rate_limit_fault
from tests.support.hostile.corpus import HOPPER, VOLTA, cases
from tests.support.hostile.harness import (
    WRITABLE,
    codes_in,
    event,
    fake_changed,
    fake_snapshot,
    github_forge,
    leaks,
    run_case,
    seed_fake,
)
from tests.support.webhooks import form_body

SAMPLE = (
    "truncated-half",
    "nesting-10000-arrays",
    "body-65537",
    "measured-from-simulated",
    "three-reports-one-bad",
    "traversal-model-name",
    "injection-form-fields",
    "injection-title",
    "edit-good-to-bad",
    "consent-missing",
)
BY_NAME = {c.name: c for c in cases()}


@pytest.fixture
def fake(base_gallery):
    with FakeGitHub() as server:
        seed_fake(server, base_gallery)
        yield server


@pytest.mark.parametrize("name", SAMPLE)
def test_hostile_sample_on_the_github_forge(fake, curves_data, checkout, name):
    case = BY_NAME[name]
    number = fake.state.add_issue(case.title, case.bodies[0], case.login, ("replication",))["number"]
    plan, result = run_case(
        case, number, checkout, curves_data, github_forge(fake), Retrier(sleep=lambda s: None), fake
    )
    assert result["ok"] and plan["status"] == case.status and set(case.codes) <= codes_in(plan)
    comments = fake.state.list_comments(number)
    assert comments and all(c["user"]["login"] == "github-actions[bot]" for c in comments)
    assert all(code in comments[0]["body"] for code in codes_in(plan))
    assert fake.state.files_at("main") == fake.state.files_at(fake.state.refs["refs/heads/main"])
    branch = f"replication/issue-{number}"
    if f"refs/heads/{branch}" in fake.state.refs:
        assert all(p.startswith(WRITABLE) for p in fake_changed(fake, branch))
    pulls = [p for p in fake.state.pulls.values() if p["head"]["ref"] == branch]
    assert [p["state"] for p in pulls] == (
        []
        if case.status == "refused" and len(case.bodies) == 1
        else ["closed"]
        if case.status == "refused"
        else ["open"]
    )
    texts = [c["body"] for c in comments] + [p["body"] for p in pulls]
    for text in texts:
        assert leaks(text, {number}) == []
    for p in pulls:
        assert leaks(p["title"], {number}, markdown=False) == []


# ---- faults on every call ------------------------------------------------------------------------------
STEPS = {
    # path: the events applied in order; faults go into the last one
    "file": (form_body(HOPPER),),
    "update": (form_body(HOPPER), form_body(VOLTA)),
    "withdraw": (form_body(HOPPER), form_body(HOPPER[:300])),
}
KINDS = ("500", "502", "503", "403-retry-after", "429-retry-after", "reset", "lost", "timeout")


def fault_of(kind: str, method: str, path: str) -> Fault:
    exact = "^" + path + "$"
    if kind == "422-exists":  # what a concurrent run that opened the PR first makes GitHub answer
        message = "Validation Failed: A pull request already exists for octo-org:replication/issue-1."
        return Fault(method, exact, status=422, message=message)
    if kind.isdigit():
        return Fault(method, exact, status=int(kind), message="Injected failure")
    if kind.endswith("retry-after"):
        return rate_limit_fault(status=int(kind[:3]), retry_after_s=3, method=method, path=exact)
    return Fault(method, exact, kind=kind, delay_s=1.5)


@pytest.fixture(scope="module")
def plans(curves_data, base_gallery):
    """Each path's plans, computed once (planning is pure; the faults are in applying)."""
    out = {}
    for name, bodies in STEPS.items():
        previous, chain = None, []
        for step in range(len(bodies)):
            case = type("C", (), {"bodies": bodies, "title": "[replication] x", "login": "octocat"})
            ctx = PlanContext(
                curves=curves_data, records={}, previous_comment=previous, gallery_base=dict(base_gallery)
            )
            chain.append(build_plan(read_event(event(case, 1, step), "issues"), ctx))
            previous = chain[-1]["comment"]["body"]
        out[name] = chain
    return out


def replay(fake, name, chain, last_fault=None, timeout_s=2):
    """Apply each plan of `chain` on a fresh issue; `last_fault` is injected before the last one. Before
    each, the issue shows the body its event carried (apply re-reads the live issue)."""
    sleeps = []
    forge, retrier = github_forge(fake, timeout_s=timeout_s), Retrier(sleep=sleeps.append)
    number = fake.state.add_issue("[replication] x", "", "octocat", ("replication",))["number"]
    assert number == 1
    result = None
    for i, plan in enumerate(chain):
        fake.state.edit_issue(1, body=STEPS[name][i])
        if i == len(chain) - 1 and last_fault is not None:
            fake.inject(last_fault)
        result = apply_plan(forge, plan, retrier)
    return result, sleeps


@pytest.fixture(scope="module")
def clean(plans, base_gallery):
    """Per path: the calls its last step makes, and the state it ends in, without any fault."""
    out = {}
    for name, chain in plans.items():
        with FakeGitHub() as fake:
            seed_fake(fake, base_gallery)
            replay(fake, name, chain[:-1])
            before = len(fake.log)
            result, _ = replay_more(fake, name, chain[-1])
            assert result["ok"]
            calls = sorted({(m, _shape(p)) for m, p, _ in fake.log[before:]})
            out[name] = (calls, fake_snapshot(fake, 1))
    return out


def replay_more(fake, name, plan):
    fake.state.edit_issue(1, body=STEPS[name][-1])
    forge = github_forge(fake)
    sleeps = []
    return apply_plan(forge, plan, Retrier(sleep=sleeps.append)), sleeps


def _shape(path: str) -> str:
    """A call's path as a pattern: ids and shas replaced, so a fault matches the same call in a rerun."""
    import re

    path = re.sub(r"/[0-9a-f]{40}$", "/[0-9a-f]{40}", path)
    return re.sub(r"/comments/\d+$", r"/comments/\\d+", path)


N_CALLS = {"file": 13, "update": 14, "withdraw": 9}  # distinct calls per path (checked below)
# The named faults of the issue, on the call where each happens: a 409 on the branch's ref update, a lost
# answer to the PR creation and to the ref creation, and 422 "A pull request already exists".
NAMED = [
    ("update", ("PATCH", "/git/refs/heads/"), "409"),
    ("file", ("POST", "/pulls"), "lost"),
    ("file", ("POST", "/pulls"), "422-exists"),
    ("file", ("POST", "/git/refs"), "lost"),
    ("update", ("PATCH", "/pulls/"), "lost"),
]


def matrix():
    """(path, call, kind): every call of every path, the kinds dealt round-robin, then the named faults."""
    out, k = [], 0
    for name, n_calls in N_CALLS.items():
        for i in range(n_calls):
            out.append((name, i, KINDS[k % len(KINDS)]))
            k += 1
    return out + NAMED


def select(calls, selector):
    if isinstance(selector, int):
        return calls[selector]
    (found,) = [c for c in calls if c[0] == selector[0] and selector[1] in c[1]]
    return found


def test_the_matrix_covers_every_call_of_every_path(clean):
    assert {n: len(clean[n][0]) for n in N_CALLS} == N_CALLS
    every = {c for calls, _ in clean.values() for c in calls}
    dealt = {}
    for name, selector, kind in matrix():
        dealt.setdefault(select(clean[name][0], selector), set()).add(kind)
    assert set(dealt) == every and {k for ks in dealt.values() for k in ks} == {*KINDS, "409", "422-exists"}


@pytest.mark.parametrize("name,selector,kind", matrix(), ids=lambda v: str(v))
def test_a_fault_on_any_call_converges_by_retrying(plans, clean, base_gallery, name, selector, kind):
    calls, expected = clean[name]
    method, path = select(calls, selector)
    if kind == "lost" and method == "GET":
        kind = "reset"  # a lost answer matters only for a write
    fault = fault_of(kind, method, path)
    with FakeGitHub() as fake:
        seed_fake(fake, base_gallery)
        result, sleeps = replay(fake, name, plans[name], fault, timeout_s=1)
        assert result["ok"], result
        assert fault.times == 0, "the fault was hit"
        assert fake_snapshot(fake, 1) == expected
        first_wait = 3.0 if "retry-after" in kind else 0.0 if kind == "422-exists" else 0.5
        assert sleeps and sleeps[0] == first_wait


@pytest.mark.parametrize("name", STEPS)
def test_a_persistent_failure_leaves_bot_error_and_a_comment_then_a_rerun_clears_it(
    plans, clean, base_gallery, name
):
    calls, expected = clean[name]
    writes = [c for c in calls if c[0] != "GET" and "/labels" not in c[1] and "/comments" not in c[1]]
    method, path = writes[0]
    fault = Fault(method, "^" + path + "$", status=503, times=100)
    with FakeGitHub() as fake:
        seed_fake(fake, base_gallery)
        result, sleeps = replay(fake, name, plans[name], fault)
        assert not result["ok"] and result["recorded"] and len(sleeps) == 5
        state = fake_snapshot(fake, 1)
        assert "bot-error" in state["labels"]
        assert any(b.startswith("<!-- quantjoule-bot:error -->") and "QJ510" in b for b in state["comments"])
        fault.times = 0
        assert replay_more(fake, name, plans[name][-1])[0]["ok"]
        after = fake_snapshot(fake, 1)
        assert "bot-error" not in after["labels"] and after["labels"] == expected["labels"]
        assert any("Resolved" in b for b in after["comments"])
