"""#13 classes 8-10 (and 2's refresh) on the github forge: real PyGithub over HTTP against the fake server.

Consent and lifecycle races (a stale plan never writes; closing the issue withdraws; bot accounts are
refused), the maintainer's verbs (closing the PR rejects for good until a maintainer reopens it; a pushed
commit on the bot's branch is kept), no event lost when a queued run is replaced, and a refresh after a
merge that plans every open PR even when one issue holds a big integer and another cannot be read.
"""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

import bot.refresh
from bot.cli import main as bot_main
from bot.forge import Retrier, apply_plan
from bot.forge_local import LocalForge
from bot.pipeline import process
from bot.refresh import refresh_plans
from tests.support.fake_github import FakeGitHub, Fault
from tests.support.hostile.corpus import raw
from tests.support.hostile.corpus_13 import HOPPER, LEGACY, plain
from tests.support.hostile.harness import git, github_forge, make_repo, seed_fake
from tests.support.session import write_tree
from tests.support.webhooks import comment_event, form_body, issues_event, schema_example

VOLTA = schema_example("v2-volta-no-curve-int8.json")
UNTICKED = form_body(HOPPER, consent=False)
NO_SLEEP = Retrier(sleep=lambda s: None)


@pytest.fixture
def checkout(tmp_path, base_gallery):
    """A base-branch checkout of this test's own (some tests merge into it)."""
    return write_tree(tmp_path / "checkout", base_gallery)


@pytest.fixture
def fake(base_gallery):
    with FakeGitHub() as server:
        seed_fake(server, base_gallery)
        yield server


def open_issue(fake, body: str, login: str = "octocat") -> int:
    return fake.state.add_issue("[replication] run", body, login, ("replication",))["number"]


def send(fake, checkout, curves, number: int, action: str = "edited", **changes):
    """Change the issue as GitHub would (body, title, state), then deliver the matching event."""
    at = f"2026-12-02T15:{len(fake.log) % 60:02d}:00Z"
    issue = fake.state.edit_issue(number, updated_at=at, **changes)
    payload = issues_event(
        action=action,
        number=number,
        body=issue["body"],
        title=issue["title"],
        login=issue["user"]["login"],
        state=issue["state"],
        updated_at=at,
    )
    payload["issue"]["user"] = issue["user"]
    payload["repository"]["full_name"] = fake.slug
    return process(payload, "issues", checkout, curves, github_forge(fake), NO_SLEEP)


def pulls_of(fake, number: int) -> list[dict]:
    return [p for p in fake.state.pulls.values() if p["head"]["ref"] == f"replication/issue-{number}"]


def sticky(fake, number: int) -> str:
    return next(
        c["body"] for c in fake.state.list_comments(number) if c["body"].startswith("<!-- quantjoule-bot -->")
    )


def labels(fake, number: int) -> list[str]:
    return sorted(lb["name"] for lb in fake.state.issues[number]["labels"])


# ---- 8: consent and lifecycle --------------------------------------------------------------------------
def test_a_plan_made_before_consent_is_withdrawn_writes_nothing_after_it(fake, checkout, curves_data):
    number = open_issue(fake, form_body(HOPPER))
    plan, result = send(fake, checkout, curves_data, number, action="opened")
    assert result["ok"] and plan["status"] == "accepted" and len(pulls_of(fake, number)) == 1
    (stale,) = refresh_plans(github_forge(fake), checkout, curves_data, "main", NO_SLEEP).values()
    head = fake.state.refs[f"refs/heads/replication/issue-{number}"]
    fake.state.edit_issue(number, body=UNTICKED)  # the edit is made; its run has not started yet
    late = apply_plan(github_forge(fake), stale, NO_SLEEP)
    assert (
        late["ok"] and late.get("stale") and fake.state.refs[f"refs/heads/replication/issue-{number}"] == head
    )
    plan, result = send(fake, checkout, curves_data, number, body=UNTICKED)  # the edit's own run
    assert plan["status"] == "refused" and [p["state"] for p in pulls_of(fake, number)] == ["closed"]
    again = apply_plan(github_forge(fake), stale, NO_SLEEP)  # the old plan once more, after the edit
    assert again.get("stale") and [p["state"] for p in pulls_of(fake, number)] == ["closed"]
    assert "QJ504" in sticky(fake, number)


def test_closing_the_issue_withdraws_it_and_reopening_files_it_again(fake, checkout, curves_data):
    number = open_issue(fake, form_body(HOPPER))
    send(fake, checkout, curves_data, number, action="opened")
    plan, result = send(fake, checkout, curves_data, number, action="closed", state="closed")
    assert result["ok"] and plan["status"] == "withdrawn" and plan["files"] == {} and plan["pr"] is None
    (pull,) = pulls_of(fake, number)
    assert pull["state"] == "closed" and "<!-- quantjoule-bot:closed -->" in pull["body"]
    assert "QJ520" in sticky(fake, number) and labels(fake, number) == ["replication"]
    # an edit of the closed issue changes nothing; reopening files it again (the bot's close is no rejection)
    assert send(fake, checkout, curves_data, number, body=form_body(HOPPER) + "\n")[0]["ignored"]
    plan, result = send(fake, checkout, curves_data, number, action="reopened", state="open")
    assert plan["status"] == "accepted" and [p["state"] for p in pulls_of(fake, number)] == ["closed", "open"]


def test_a_closed_issue_whose_record_is_merged_is_left_alone(fake, checkout, curves_data, tmp_path):
    number = open_issue(fake, form_body(HOPPER))
    send(fake, checkout, curves_data, number, action="opened")
    (pull,) = pulls_of(fake, number)
    fake.state.merge_pull(pull["number"])
    for path, content in fake.state.files_at("main").items():  # the checkout of the merged main
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_bytes(content)
    before = [c["body"] for c in fake.state.list_comments(number)]
    plan, _ = send(fake, checkout, curves_data, number, action="closed", state="closed")
    assert plan["ignored"] and [c["body"] for c in fake.state.list_comments(number)] == before


def test_an_issue_opened_by_a_bot_account_is_refused(fake, checkout, curves_data):
    number = open_issue(fake, form_body(HOPPER), login="renovate[bot]")
    plan, result = send(fake, checkout, curves_data, number, action="opened")
    assert result["ok"] and plan["status"] == "refused" and pulls_of(fake, number) == []
    assert "QJ519" in sticky(fake, number) and "invalid" in labels(fake, number)


@pytest.mark.parametrize(
    "consent",
    [
        "- [x] I do not license this report under CC BY 4.0",
        "<!-- - [x] I license this report under CC BY 4.0 -->",
        "```\n- [x] I license this report under CC BY 4.0\n```",
    ],
)
def test_consent_that_github_does_not_show_as_ticked_files_nothing(fake, checkout, curves_data, consent):
    number = open_issue(fake, plain(HOPPER, consent=consent))
    plan, _ = send(fake, checkout, curves_data, number, action="opened")
    assert plan["status"] == "refused" and pulls_of(fake, number) == [] and "QJ504" in sticky(fake, number)


# ---- 9: the maintainer's verbs ---------------------------------------------------------------------------
def test_closing_the_pr_rejects_for_good_until_a_maintainer_reopens_it(fake, checkout, curves_data):
    number = open_issue(fake, form_body(HOPPER))
    send(fake, checkout, curves_data, number, action="opened")
    (pull,) = pulls_of(fake, number)
    fake.state.edit_pull(pull["number"], {"state": "closed"})  # a maintainer closes it, unmerged
    plan, _ = send(fake, checkout, curves_data, number, body=form_body(HOPPER, notes="more context"))
    assert plan["status"] == "refused" and "QJ521" in sticky(fake, number)
    send(fake, checkout, curves_data, number, title="[replication] renamed")  # a title-only edit
    payload = comment_event(number=number)  # a maintainer's /recheck; the issue is read live
    payload["repository"]["full_name"] = fake.slug
    process(payload, "issue_comment", checkout, curves_data, github_forge(fake), NO_SLEEP)
    assert [p["state"] for p in pulls_of(fake, number)] == ["closed"] and "invalid" in labels(fake, number)
    fake.state.edit_pull(pull["number"], {"state": "open"})  # the maintainer reconsiders
    plan, _ = send(fake, checkout, curves_data, number, body=form_body(HOPPER, notes="final"))
    assert plan["status"] == "accepted" and [p["state"] for p in pulls_of(fake, number)] == ["open"]
    assert "final" in pulls_of(fake, number)[0]["body"] and "QJ521" not in sticky(fake, number)


def test_a_maintainers_commit_on_the_bot_branch_is_kept(fake, checkout, curves_data):
    number = open_issue(fake, form_body(HOPPER))
    send(fake, checkout, curves_data, number, action="opened")
    branch = f"replication/issue-{number}"
    fixed = fake.state.commit_files({"gallery/README.md": b"a maintainer's fix\n"}, "Fix the table", branch)
    (pull,) = pulls_of(fake, number)
    body_before = pull["body"]
    plan, result = send(fake, checkout, curves_data, number, body=form_body(HOPPER, notes="edited"))
    assert result["ok"] and plan["status"] == "accepted"
    assert (
        fake.state.refs[f"refs/heads/{branch}"] == fixed and pulls_of(fake, number)[0]["body"] == body_before
    )
    assert "QJ522" in sticky(fake, number)
    # even when nothing in the issue is acceptable any more, the maintainer's pull request stays open
    send(fake, checkout, curves_data, number, body=UNTICKED)
    assert fake.state.refs[f"refs/heads/{branch}"] == fixed and pulls_of(fake, number)[0]["state"] == "open"


def test_a_maintainers_commit_is_kept_on_the_local_forge_too(tmp_path, base_gallery, curves_data):
    repo = make_repo(tmp_path / "repo", base_gallery)
    forge = LocalForge(repo, tmp_path / "outbox")
    payload = issues_event(number=3, body=form_body(HOPPER))
    process(payload, "issues", repo, curves_data, forge)
    git(repo, "checkout", "-q", "replication/issue-3")
    (repo / "gallery" / "README.md").write_text("fixed by hand\n")
    git(repo, "-c", "user.name=m", "-c", "user.email=m@example.invalid", "commit", "-qam", "hand fix")
    fixed = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    edited = issues_event(
        action="edited", number=3, body=form_body(HOPPER, notes="x"), updated_at="2026-12-02T16:00:00Z"
    )
    _, result = process(edited, "issues", repo, curves_data, forge)
    assert result["ok"] and git(repo, "rev-parse", "replication/issue-3") == fixed
    assert any("QJ522" in c["body"] for c in forge.comments(3))


# ---- 10: no event lost ------------------------------------------------------------------------------------
def test_a_run_that_replaced_a_pending_one_plans_the_latest_issue(fake, checkout, curves_data):
    number = open_issue(fake, form_body(HOPPER))
    send(fake, checkout, curves_data, number, action="opened")
    fake.state.edit_issue(number, body=form_body(VOLTA))  # an edit whose queued run was replaced
    stale = issues_event(
        action="edited", number=number, body=form_body(HOPPER), updated_at="2026-12-02T15:59:00Z"
    )
    stale["repository"]["full_name"] = fake.slug
    plan, result = process(stale, "issues", checkout, curves_data, github_forge(fake), NO_SLEEP)
    assert result["ok"] and [p["path"] for p in plan["points"]] == [
        f"replications/volta/{number}-INT8-tinyllama-1.1b.json"
    ]
    assert f"replications/volta/{number}-INT8-tinyllama-1.1b.json" in fake.state.files_at(
        f"replication/issue-{number}"
    )


def test_only_a_maintainers_recheck_queues_behind_an_edit():
    from pathlib import Path

    flow = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / ".github/workflows/replication-bot.yml").read_text()
    )
    group = flow["concurrency"]["group"]
    assert flow["concurrency"]["cancel-in-progress"] is False and "closed" in flow[True]["issues"]["types"]
    # an ordinary comment runs in a group of its own (its run id), so it never replaces a queued edit
    assert "github.run_id" in group and "startsWith(github.event.comment.body, '/recheck')" in group
    assert group.startswith("replication-bot-issue-${{ github.event.issue.number }}")
    assert flow["jobs"]["plan"]["permissions"]["pull-requests"] == "read"


# ---- 2: a refresh after a merge plans every open PR ------------------------------------------------------
def test_refresh_survives_a_big_integer_edit_and_an_unreadable_issue(
    fake, checkout, curves_data, tmp_path, monkeypatch
):
    numbers = []
    for report in (HOPPER, VOLTA, LEGACY):
        number = open_issue(fake, form_body(report))
        send(fake, checkout, curves_data, number, action="opened")
        numbers.append(number)
    big, good, unreadable = numbers
    fake.state.edit_issue(
        big, body=form_body(raw(HOPPER, "results.tokens_generated", "1" + "0" * 399))
    )
    fake.inject(Fault("GET", f"/issues/{unreadable}/comments$", status=500, times=1000))
    monkeypatch.setenv("GITHUB_TOKEN", "read-token")
    # The CLI's retrier backs off for real (1 + 2 + 4 + 8 + 16 s on a 500 that never clears): record
    # the delays instead of sleeping them.
    delays: list[float] = []
    monkeypatch.setattr(bot.refresh, "Retrier", lambda: Retrier(sleep=delays.append))
    common = ["--repo", fake.slug, "--api-url", fake.base_url, "--repo-dir", str(checkout)]
    out = CliRunner().invoke(bot_main, ["refresh-plan", *common, "--out-dir", str(tmp_path / "plans")])
    assert out.exit_code == 0 and "Traceback" not in out.output and "QJ518" in out.output
    assert len(delays) == Retrier.attempts - 1 and delays == sorted(delays) and delays[0] < delays[-1]
    plans = {n: json.loads((tmp_path / "plans" / f"issue-{n}.json").read_text()) for n in numbers}
    assert plans[big]["status"] == "refused" and "QJ012" in plans[big]["comment"]["body"]
    assert plans[good]["status"] == "accepted" and plans[unreadable]["failed"]
    fake.faults.clear()
    monkeypatch.setenv("GITHUB_TOKEN", "write-token")
    for n in numbers:
        applied = CliRunner().invoke(
            bot_main,
            [
                "apply",
                str(tmp_path / "plans" / f"issue-{n}.json"),
                "--forge",
                "github",
                "--repo",
                fake.slug,
                "--api-url",
                fake.base_url,
            ],
        )
        assert "Traceback" not in applied.output
    assert [p["state"] for p in pulls_of(fake, big)] == ["closed"] and "QJ012" in sticky(fake, big)
    assert [p["state"] for p in pulls_of(fake, good)] == ["open"]
    assert "bot-error" in labels(fake, unreadable)
    assert any("QJ518" in c["body"] for c in fake.state.list_comments(unreadable))
