"""The github forge: PyGithub over real HTTP against the fake GitHub server; idempotency and convergence."""

import json

from bot.pipeline import process
from tests.support.webhooks import form_body, issues_event, schema_example

HOPPER = schema_example("v2-measured-nf4-hopper.json")
VOLTA = schema_example("v2-volta-no-curve-int8.json")


def open_issue(fake, body):
    return fake.state.add_issue("[replication] TinyLlama NF4", body, "octocat", ("replication",))["number"]


def run(
    fake, forge, checkout, curves_data, retrier, number, body, action="opened", at="2026-12-02T13:00:00Z"
):
    payload = issues_event(action=action, number=number, body=body, updated_at=at)
    payload["repository"]["full_name"] = fake.slug
    fake.state.sync_with_event(payload)  # the API shows what the event says (apply re-reads it)
    return process(payload, "issues", checkout, curves_data, forge, retrier)


def bot_comments(fake, number):
    return [c for c in fake.state.list_comments(number) if c["user"]["login"] == "github-actions[bot]"]


def labels(fake, number):
    return [lb["name"] for lb in fake.state.issues[number]["labels"]]


def test_first_run_files_a_pr_with_the_record_and_the_plot(fake_gh, forge, checkout, curves_data, retrier):
    number = open_issue(fake_gh, form_body(HOPPER))
    plan, result = run(fake_gh, forge, checkout, curves_data, retrier, number, form_body(HOPPER))
    assert result["ok"], result
    assert plan["status"] == "accepted" and labels(fake_gh, number) == ["replication", "confirmation"]
    (pull,) = fake_gh.state.open_pulls()
    assert pull["head"]["ref"] == f"replication/issue-{number}" and "confirmation" in pull["title"]
    files = fake_gh.state.files_at(f"replication/issue-{number}")
    record = json.loads(files[f"replications/hopper/{number}-NF4-tinyllama-1.1b.json"])
    assert record["submitter_login"] == "octocat" and record["verdict"]["label"] == "confirmation"
    assert record["report"] == json.loads(HOPPER)
    changed = {p for p, b in files.items() if fake_gh.state.files_at("main").get(p) != b}
    assert changed == {
        f"replications/hopper/{number}-NF4-tinyllama-1.1b.json",
        "gallery/README.md",
        "gallery/plots/hopper-NF4.png",
        "gallery/plots/hopper-NF4.svg",
    }
    (comment,) = bot_comments(fake_gh, number)
    assert comment["body"].startswith("<!-- quantjoule-bot -->") and pull["html_url"] in comment["body"]


def test_same_event_three_times_leaves_one_comment_one_pr_one_record(
    fake_gh, forge, checkout, curves_data, retrier
):
    number = open_issue(fake_gh, form_body(HOPPER))
    for _ in range(3):
        _, result = run(fake_gh, forge, checkout, curves_data, retrier, number, form_body(HOPPER))
        assert result["ok"]
    assert len(bot_comments(fake_gh, number)) == 1
    assert len(fake_gh.state.pulls) == 1
    assert len(fake_gh.calls("POST", r"/git/commits$")) == 1  # reruns find the same tree and stop
    assert len(fake_gh.calls("PATCH", r"/issues/comments/")) == 0
    records = [
        p for p in fake_gh.state.files_at(f"replication/issue-{number}") if p.startswith("replications/")
    ]
    assert len(records) == 1


def test_edited_issue_updates_the_same_branch_and_pr_and_posts_one_notice(
    fake_gh, forge, checkout, curves_data, retrier
):
    number = open_issue(fake_gh, form_body(HOPPER))
    run(fake_gh, forge, checkout, curves_data, retrier, number, form_body(HOPPER))
    (first_pull,) = fake_gh.state.pulls.values()
    for _ in range(2):
        plan, result = run(
            fake_gh,
            forge,
            checkout,
            curves_data,
            retrier,
            number,
            form_body(VOLTA),
            action="edited",
            at="2026-12-02T15:00:00Z",
        )
        assert result["ok"]
    assert plan["points"][0]["label"] == "ungraded"
    assert list(fake_gh.state.pulls) == [first_pull["number"]] and first_pull["state"] == "open"
    assert "ungraded" in first_pull["title"]
    records = [
        p for p in fake_gh.state.files_at(f"replication/issue-{number}") if p.startswith("replications/")
    ]
    assert records == [f"replications/volta/{number}-INT8-tinyllama-1.1b.json"]
    comments = bot_comments(fake_gh, number)
    assert len(comments) == 2  # the edited summary and one short notice
    assert "confirmation → ungraded" in comments[1]["body"]
    assert labels(fake_gh, number) == ["replication", "ungraded"]


def test_swap_to_a_bad_report_closes_the_pr_and_labels_invalid(
    fake_gh, forge, checkout, curves_data, retrier
):
    number = open_issue(fake_gh, form_body(HOPPER))
    run(fake_gh, forge, checkout, curves_data, retrier, number, form_body(HOPPER))
    bad = form_body(HOPPER[: len(HOPPER) // 2])
    plan, result = run(
        fake_gh, forge, checkout, curves_data, retrier, number, bad, "edited", "2026-12-03T00:00:00Z"
    )
    assert result["ok"] and plan["pr"] is None and plan["status"] == "refused"
    assert fake_gh.state.open_pulls() == []
    assert labels(fake_gh, number) == ["replication", "invalid"]
    sticky = bot_comments(fake_gh, number)[0]["body"]
    assert "QJ005" in sticky and "Hint" in sticky


def test_duplicate_of_a_record_on_file_is_refused_with_a_link(fake_gh, forge, checkout, curves_data, retrier):
    number = open_issue(fake_gh, form_body(HOPPER))
    run(fake_gh, forge, checkout, curves_data, retrier, number, form_body(HOPPER))
    record_path = f"replications/hopper/{number}-NF4-tinyllama-1.1b.json"
    (checkout / record_path).parent.mkdir(parents=True)
    (checkout / record_path).write_bytes(fake_gh.state.files_at(f"replication/issue-{number}")[record_path])
    again = open_issue(fake_gh, form_body(HOPPER))
    plan, result = run(fake_gh, forge, checkout, curves_data, retrier, again, form_body(HOPPER))
    assert result["ok"] and plan["pr"] is None
    assert labels(fake_gh, again) == ["replication", "invalid", "duplicate"]
    sticky = bot_comments(fake_gh, again)[0]["body"]
    assert "QJ505" in sticky and f"issues/{number}" in sticky and record_path in sticky


def test_maintainer_labels_are_kept_and_bot_labels_converge(fake_gh, forge, checkout, curves_data, retrier):
    number = open_issue(fake_gh, form_body(HOPPER))
    fake_gh.state.set_labels(number, ["good first replication", "contradiction", "bot-error"])
    run(fake_gh, forge, checkout, curves_data, retrier, number, form_body(HOPPER))
    assert labels(fake_gh, number) == ["good first replication", "replication", "confirmation"]
