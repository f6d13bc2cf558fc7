"""After one replication PR is merged, the others are re-planned on the new main and stop conflicting.

Real PyGithub over HTTP against the fake GitHub server; the CLI's `refresh-plan` then `apply`, as the
gallery workflow runs them."""

import json

from click.testing import CliRunner

from bot.cli import main
from bot.pipeline import process
from tests.support.session import write_tree
from tests.support.webhooks import form_body, issues_event, schema_example

HOPPER = schema_example("v2-measured-nf4-hopper.json")
VOLTA = schema_example("v2-volta-no-curve-int8.json")


def _file(fake, checkout, curves_data, forge, retrier, report: str) -> int:
    body = form_body(report)
    number = fake.state.add_issue("[replication] run", body, "octocat", ("replication",))["number"]
    payload = issues_event(number=number, body=body, updated_at="2026-12-02T13:00:00Z")
    payload["repository"]["full_name"] = fake.slug
    _, result = process(payload, "issues", checkout, curves_data, forge, retrier)
    assert result["ok"], result
    return number


def _conflicts(state, branch: str) -> list[str]:
    """Files a squash merge of `branch` would conflict on: changed by the PR and, since its base, by main."""
    head = state.commits[state.refs[f"refs/heads/{branch}"]]
    parent, main, mine = state.files_at(head["parents"][0]), state.files_at("main"), state.files_at(branch)
    return sorted(p for p, b in mine.items() if parent.get(p) != b and main.get(p) != parent.get(p))


def _checkout_of_main(state, root):
    return write_tree(root, state.files_at("main"))


def test_refresh_rebuilds_open_prs_on_the_merged_main(
    fake_gh, forge, checkout, curves_data, retrier, tmp_path, monkeypatch
):
    first = _file(fake_gh, checkout, curves_data, forge, retrier, HOPPER)
    second = _file(fake_gh, checkout, curves_data, forge, retrier, VOLTA)
    state = fake_gh.state
    pull_one = next(p for p in state.open_pulls() if p["head"]["ref"] == f"replication/issue-{first}")
    state.merge_pull(pull_one["number"])
    branch = f"replication/issue-{second}"
    assert "gallery/README.md" in _conflicts(state, branch)  # the problem: both PRs rebuilt the gallery
    record_path = next(p for p in state.files_at(branch) if p.startswith(f"replications/volta/{second}-"))
    record_before = json.loads(state.files_at(branch)[record_path])
    comments_before = len(state.list_comments(second))

    monkeypatch.setenv("GITHUB_TOKEN", "read-token")  # planning reads only: a read-only token suffices
    main_dir = _checkout_of_main(state, tmp_path / "main")
    common = ["--repo", fake_gh.slug, "--api-url", fake_gh.base_url, "--repo-dir", str(main_dir)]
    out = CliRunner().invoke(main, ["refresh-plan", *common, "--out-dir", str(tmp_path / "plans")])
    assert out.exit_code == 0, out.output
    plans = sorted((tmp_path / "plans").glob("*.json"))
    assert [p.name for p in plans] == [f"issue-{second}.json"]  # the merged PR is no longer open
    monkeypatch.setenv("GITHUB_TOKEN", "write-token")
    applied = CliRunner().invoke(main, ["apply", str(plans[0]), "--forge", "github", *common])
    assert applied.exit_code == 0, applied.output

    head = state.commits[state.refs[f"refs/heads/{branch}"]]
    assert head["parents"] == [state.refs["refs/heads/main"]]  # rebuilt on the merged main
    assert _conflicts(state, branch) == []
    readme = state.files_at(branch)["gallery/README.md"].decode()
    assert f"{first}" in readme and f"{second}" in readme  # the gallery now holds both points
    record_after = json.loads(state.files_at(branch)[record_path])
    assert record_after["report"] == record_before["report"]
    assert record_after["verdict"] == record_before["verdict"]
    assert len(state.open_pulls()) == 1 and len(state.pulls) == 2  # the same PR, updated, not a new one
    assert len(state.list_comments(second)) == comments_before  # same verdict: the sticky is edited only


def test_refresh_with_nothing_open_says_so(fake_gh, tmp_path, monkeypatch, checkout):
    monkeypatch.setenv("GITHUB_TOKEN", "read-token")
    args = [
        "refresh-plan",
        "--repo",
        fake_gh.slug,
        "--api-url",
        fake_gh.base_url,
        "--repo-dir",
        str(checkout),
    ]
    out = CliRunner().invoke(main, [*args, "--out-dir", str(tmp_path / "plans")])
    assert out.exit_code == 0 and "no open replication pull requests" in out.output
