"""Every hostile case end to end on the local forge (real git): coded comment, no crash, no write outside
replications/ and gallery/, nothing that pings or injects in anything the bot publishes."""

import json

import pytest

from bot.forge_local import LocalForge
from bot.plan import decode_file
from tests.support.hostile.corpus import cases
from tests.support.hostile.harness import (
    WRITABLE,
    changed_paths,
    codes_in,
    git,
    leaks,
    make_repo,
    outbox_texts,
    plan_texts,
    run_case,
)

CASES = cases()


@pytest.fixture(scope="module")
def world(tmp_path_factory, base_gallery):
    root = tmp_path_factory.mktemp("hostile")
    repo = make_repo(root / "repo", base_gallery)
    return repo, root / "outbox", git(repo, "rev-parse", "main")


def test_the_corpus_is_big_enough_and_covers_every_outcome():
    assert len(CASES) >= 50
    assert {c.status for c in CASES} == {"accepted", "partial", "refused"}
    assert sum(len(c.bodies) > 1 for c in CASES) >= 3


@pytest.mark.parametrize("number,case", list(enumerate(CASES, 1)), ids=[c.name for c in CASES])
def test_hostile_case_on_the_local_forge(world, curves_data, number, case):
    repo, outbox, main_sha = world
    forge = LocalForge(repo, outbox)
    plan, result = run_case(case, number, repo, curves_data, forge)
    assert result["ok"], result
    assert plan["status"] == case.status, (plan["status"], codes_in(plan))
    assert set(case.codes) <= codes_in(plan), codes_in(plan)

    # the comment names every problem with its code and a hint
    (sticky,) = [c for c in forge.comments(number) if c["body"].startswith("<!-- quantjoule-bot -->")]
    n_problems = len(plan["problems"]) + sum(len(p["problems"]) for p in plan["points"])
    assert all(code in sticky["body"] for code in codes_in(plan))
    assert sticky["body"].count("*Hint:*") == n_problems

    # git: main untouched, the work tree clean, only the branch, only writable paths in its diff
    assert git(repo, "rev-parse", "main") == main_sha and git(repo, "status", "--porcelain") == ""
    branch = f"replication/issue-{number}"
    branches = git(
        repo, "for-each-ref", "--format=%(refname:short)", f"refs/heads/replication/issue-{number}"
    )
    labels = forge.get_labels(number)
    pulls = [p for p in forge.pulls().values() if p["head"] == branch]
    if case.status == "refused":
        assert "invalid" in labels and all(p["state"] == "closed" for p in pulls)
    else:
        assert branches == branch
        changed = changed_paths(repo, "main", branch)
        assert changed and all(p.startswith(WRITABLE) for p in changed), changed
        records = [p for p in changed if p.startswith("replications/")]
        accepted = [p for p in plan["points"] if p["status"] == "accepted"]
        assert sorted(records) == sorted(p["path"] for p in accepted)
        for point in accepted:
            record = json.loads(git(repo, "show", f"{branch}:{point['path']}"))
            assert record["submitter_login"] == case.login and record["report_sha256"] == point["sha256"]
        assert [p["state"] for p in pulls] == ["open"]
        assert ("invalid" in labels) == (case.status == "partial")

    # nothing published pings, links or injects
    texts = {**plan_texts(plan), **outbox_texts(outbox, number)}
    gallery_readme = texts.pop("gallery README", None)
    for name, text in texts.items():
        assert leaks(text, {number}, markdown="title" not in name) == [], name
    if gallery_readme is not None:
        found = leaks(decode_file(plan["files"]["gallery/README.md"]).decode(), {number})
        assert found == [], "gallery README"
