"""The plan (pure): determinism, JSON shape, refusals with codes, duplicates, paths, escaping."""

import json
import re

import pytest

from bot.intake import read_event
from bot.plan import PlanContext, build_plan, read_state
from schema.escape import md_block, md_inline
from schema.records import UnsafePath, canonical_sha256, check_path, slug
from tests.support.webhooks import comment_event, form_body, issues_event, schema_example

HOPPER = schema_example("v2-measured-nf4-hopper.json")
REFERENCE = schema_example("v2-reference-interpolated.json")
HOSTILE = (
    "@octocat #1 octo-org/quantjoule#2 <img src=x onerror=alert(1)> "
    "[x](https://evil.example) \u202eevil\u200b"
)


@pytest.fixture
def plan_of(curves_data, base_gallery):
    def make(body, records=None, previous=None, **event_kw):
        ctx = PlanContext(
            curves=curves_data,
            records=records or {},
            previous_comment=previous,
            gallery_base=dict(base_gallery),
        )
        return build_plan(read_event(issues_event(body=body, **event_kw), "issues"), ctx)

    return make


def test_plan_is_deterministic_and_json_serialisable(plan_of):
    a, b = plan_of(form_body(HOPPER)), plan_of(form_body(HOPPER))
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.loads(json.dumps(a)) == a
    assert a["branch"] == "replication/issue-7" and a["status"] == "accepted"
    record = json.loads(a["files"]["replications/hopper/7-NF4-tinyllama-1.1b.json"]["content"])
    assert record["report_sha256"] == canonical_sha256(json.loads(HOPPER))
    assert record["record_version"] == "quantjoule-record/1" and record["curves_version"]
    assert set(a["files"]) == {
        "replications/hopper/7-NF4-tinyllama-1.1b.json",
        "gallery/README.md",
        "gallery/plots/hopper-NF4.png",
        "gallery/plots/hopper-NF4.svg",
    }
    assert a["files"]["gallery/plots/hopper-NF4.png"]["encoding"] == "base64"


def test_non_measurement_and_malformed_reports_are_refused_with_codes(plan_of):
    plan = plan_of(form_body([REFERENCE, HOPPER[:500]]))
    assert plan["status"] == "refused" and plan["pr"] is None and plan["files"] == {}
    assert [p["code"] for p in plan["points"][0]["problems"]] == ["QJ506"]
    assert plan["points"][1]["problems"][0]["code"] == "QJ005"
    assert plan["labels"]["target"] == ["replication", "invalid"]
    body = plan["comment"]["body"]
    assert "QJ506" in body and "QJ005" in body and body.count("*Hint:*") >= 2


def test_several_reports_one_bad_gives_a_partial_plan(plan_of):
    plan = plan_of(form_body([HOPPER, '{"schema_version": 1}']))
    assert plan["status"] == "partial" and plan["pr"] is not None
    assert [p["status"] for p in plan["points"]] == ["accepted", "refused"]
    assert plan["labels"]["target"] == ["replication", "confirmation", "invalid"]


def test_duplicates_within_an_issue_and_against_records_on_file(plan_of):
    twice = plan_of(form_body([HOPPER, HOPPER]))
    assert [p["status"] for p in twice["points"]] == ["accepted", "refused"]
    assert twice["points"][1]["problems"][0]["code"] == "QJ505"
    first = plan_of(form_body(HOPPER), number=3)
    path = "replications/hopper/3-NF4-tinyllama-1.1b.json"
    on_file = {path: json.loads(first["files"][path]["content"])}
    dup = plan_of(form_body(HOPPER), records=on_file, number=8)
    assert dup["status"] == "refused" and "duplicate" in dup["labels"]["target"]
    assert dup["points"][0]["duplicate_of"] == {"path": path, "issue_url": on_file[path]["issue_url"]}
    same_issue = plan_of(form_body(HOPPER), records=on_file, number=3)
    assert same_issue["points"][0]["status"] == "already-recorded"
    assert path not in same_issue["files"]


def test_missing_consent_refuses_the_whole_submission(plan_of):
    plan = plan_of(form_body(HOPPER, consent=False))
    assert plan["status"] == "refused" and "QJ504" in plan["comment"]["body"]
    assert plan["pr"] is None and plan["files"] == {} and plan["points"][0]["status"] == "refused"
    assert "invalid" in plan["labels"]["target"]


def test_record_paths_are_sanitised_and_checked():
    report = json.loads(HOPPER)
    report["workload"]["model_name"] = "../../.github/workflows/x\u0000"
    assert slug(report["workload"]["model_name"]) == "github-workflows-x"
    for bad in (
        "../x",
        "replications/../x",
        "/etc/passwd",
        ".github/workflows/a.yml",
        "gallery/.hidden",
        "replications/a//b",
        "replications\\a",
        "README.md",
        "gallery/a b",
    ):
        with pytest.raises(UnsafePath):
            check_path(bad)
    assert check_path("replications/hopper/7-NF4-x.json")


def test_hostile_text_is_escaped_in_comment_and_pr(plan_of):
    body = form_body(HOPPER, handle=HOSTILE, affiliation=HOSTILE, gpu=HOSTILE, notes=HOSTILE + "\n" + HOSTILE)
    plan = plan_of(body)
    for text in (plan["comment"]["body"], plan["pr"]["body"], plan["pr"]["title"]):
        assert "\u202e" not in text and "\u200b" not in text
        assert not re.search(r"@octocat|#1\b|quantjoule#2|https://evil", text)
        assert "](https://evil" not in text
    for text in (plan["comment"]["body"], plan["pr"]["body"]):  # Markdown: every < is escaped
        assert not re.search(r"(?<!\\)<(?!!--|sub>|/sub>)", text)
    assert "U\\+202E" in plan["pr"]["body"]  # shown, not obeyed


def test_markdown_helpers_neutralise_pings_links_and_html():
    assert md_inline("@team") == "\\@\u200dteam"
    assert md_inline("a|b") == "a\\|b"
    assert md_inline("x" * 500, 10) == "x" * 9 + "…"
    assert md_block("<script>\n@x") == "> \\<script\\>\n> \\@\u200dx"


def test_verdict_change_gives_one_notice_and_no_change_gives_none(plan_of):
    first = plan_of(form_body(HOPPER))
    assert first["notice"] is None and read_state(first["comment"]["body"])["points"] == [[1, "confirmation"]]
    same = plan_of(form_body(HOPPER), previous=first["comment"]["body"])
    assert same["notice"] is None
    changed = plan_of(
        form_body(schema_example("v2-volta-no-curve-int8.json")),
        previous=first["comment"]["body"],
        action="edited",
        updated_at="2026-12-03T00:00:00Z",
    )
    assert "confirmation → ungraded" in changed["notice"]["body"]
    assert changed["notice"]["marker"].startswith("<!-- quantjoule-bot:notice ")


def test_ignored_events_give_an_ignored_plan(curves_data):
    plan = build_plan(read_event(comment_event(body="great!"), "issue_comment"), PlanContext(curves_data, {}))
    assert plan == {"plan_version": "quantjoule-plan/1", "ignored": True, "reason": "comment is not /recheck"}


def test_gpu_named_in_the_form_is_checked_against_the_report(plan_of):
    plan = plan_of(form_body(HOPPER, gpu="RTX 4090"))
    assert plan["status"] == "accepted"
    assert [p["code"] for p in plan["points"][0]["problems"]] == ["QJ511"]
    assert plan_of(form_body(HOPPER, gpu="H200"))["points"][0]["problems"] == []


def test_the_pr_body_shows_the_login_unescaped_in_a_code_span(plan_of):
    plan = plan_of(form_body(HOPPER), login="demo-contributor")
    body = plan["pr"]["body"]
    assert "`demo-contributor`" in body and "demo\\-contributor" not in body


def test_md_code_cannot_be_closed_by_the_text():
    from schema.escape import md_code

    assert md_code("a-b_c*d") == "`a-b_c*d`"
    assert md_code("x`y") == "``x`y``" and md_code("`x") == "`` `x ``"
