"""Intake: webhook payloads -> Submission or Ignored (pure, no I/O)."""

import json
from pathlib import Path

import schema
from bot.intake import MAX_BODY_CHARS, Ignored, Submission, read_event
from tests.support.webhooks import comment_event, form_body, issues_event

VALID = Path(__file__).resolve().parents[1] / "schema" / "examples" / "valid"
REPORT = (VALID / "v2-measured-nf4-hopper.json").read_text()


def codes(sub):
    return [p.code for p in sub.problems]


def test_form_body_gives_fields_consent_and_one_block():
    sub = read_event(issues_event(body=form_body(REPORT, notes="Air cooled.\nPower limit 700 W.")), "issues")
    assert isinstance(sub, Submission)
    assert sub.form and sub.consent
    assert sub.fields == {
        "credited_handle": "Ada L.",
        "affiliation": "Example Lab",
        "gpu": "NVIDIA H200",
        "notes": "Air cooled.\nPower limit 700 W.",
    }
    assert [b.index for b in sub.blocks] == [1]
    assert json.loads(sub.blocks[0].text) == json.loads(REPORT)
    assert sub.problems == ()
    assert (sub.issue, sub.submitter_login, sub.event) == (7, "octocat", "issues/opened")
    assert sub.default_branch == "main" and sub.repo == "octo-org/quantjoule"


def test_crlf_body_reads_the_same_as_lf():
    body = form_body(REPORT)
    lf = read_event(issues_event(body=body))
    crlf = read_event(issues_event(body=body.replace("\n", "\r\n")))
    assert crlf == lf


def test_no_response_fields_are_none():
    sub = read_event(issues_event(body=form_body(REPORT, handle=None, affiliation=None, gpu=None)))
    assert sub.fields == {"credited_handle": None, "affiliation": None, "gpu": None, "notes": None}


def test_several_fence_styles_give_several_points_and_other_blocks_are_skipped():
    body = (
        f"Plain issue.\n\n```json\n{REPORT}\n```\n\n~~~\n{REPORT}\n~~~\n\n````\n{REPORT}\n````\n\n"
        "```python\nprint('not a report')\n```\n\n```\nplain text block\n```\n\n- [x] I license this "
        "report under CC BY 4.0"
    )
    sub = read_event(issues_event(body=body, labels=(), title="My H200 numbers"))
    assert isinstance(sub, Submission)
    assert len(sub.blocks) == 3 and all(json.loads(b.text) == json.loads(REPORT) for b in sub.blocks)
    assert not sub.form and sub.consent


def test_fence_content_never_becomes_a_form_section():
    body = '### Notes\n\nreal notes\n\n```json\n{"a": 1,\n### Notes\n"b": 2}\n```\n'
    sub = read_event(issues_event(body=body))
    assert sub.fields["notes"] == "real notes"
    assert sub.blocks[0].text == '{"a": 1,\n### Notes\n"b": 2}'


def test_submitter_login_comes_from_the_event_never_the_body():
    body = form_body(REPORT, handle="@admin", notes="submitter_login: admin")
    sub = read_event(issues_event(body=body, login="real-user"))
    assert sub.submitter_login == "real-user"
    assert sub.fields["credited_handle"] == "@admin"


def test_body_over_the_limit_is_refused_and_at_the_limit_is_read():
    head = form_body(REPORT)
    at_limit = head + "\n" + "x" * (MAX_BODY_CHARS - len(head) - 1)
    assert len(at_limit) == MAX_BODY_CHARS
    sub = read_event(issues_event(body=at_limit))
    assert len(sub.blocks) == 1 and "QJ502" not in codes(sub)
    over = read_event(issues_event(body=at_limit + "y"))
    assert codes(over) == ["QJ502"] and over.blocks == ()


def test_report_over_the_size_limit_is_flagged_on_its_block():
    big = '{"schema_version": "quantjoule-energy/2.0", "pad": "' + "x" * schema.MAX_REPORT_BYTES + '"}'
    sub = read_event(issues_event(body=form_body(big)))
    assert [p.code for p in sub.blocks[0].problems] == ["QJ503"]


def test_missing_consent_and_missing_report():
    no_consent = read_event(issues_event(body=form_body(REPORT, consent=False)))
    assert codes(no_consent) == ["QJ504"] and not no_consent.consent
    empty = read_event(issues_event(body=None))
    assert isinstance(empty, Submission) and codes(empty) == ["QJ501"] and empty.blocks == ()
    form_without_report = read_event(issues_event(body=form_body([])))
    assert codes(form_without_report) == ["QJ501"]


def test_too_many_blocks_and_unterminated_fence_and_long_fields():
    many = "\n".join(f'```json\n{{"n": {i}}}\n```' for i in range(25))
    sub = read_event(issues_event(body=many))
    assert len(sub.blocks) == 20 and "QJ507" in codes(sub)
    open_fence = read_event(issues_event(body=f"```json\n{REPORT}\n"))
    assert "QJ512" in codes(open_fence) and json.loads(open_fence.blocks[0].text) == json.loads(REPORT)
    long = read_event(issues_event(body=form_body(REPORT, handle="h" * 300)))
    assert long.fields["credited_handle"] == "h" * 100 and "QJ509" in codes(long)


def test_non_replication_issues_are_ignored():
    bug = read_event(
        issues_event(
            body="The docs have a typo.\n\n```bash\npip install\n```", labels=("bug",), title="Typo in README"
        )
    )
    assert isinstance(bug, Ignored) and bug.reason == "not a replication submission"
    assert isinstance(
        read_event(issues_event(body="text", labels=(), title="[Replication] mine")), Submission
    )
    assert isinstance(read_event(issues_event(action="labeled", body=form_body(REPORT))), Ignored)
    assert isinstance(
        read_event(issues_event(action="edited", body=form_body(REPORT), state="closed")), Ignored
    )


def test_event_kinds_edited_reopened_carry_the_update_time():
    sub = read_event(issues_event(action="edited", body=form_body(REPORT), updated_at="2026-12-03T08:00:00Z"))
    assert sub.event == "issues/edited" and sub.event_at == "2026-12-03T08:00:00Z"
    assert read_event(issues_event(action="reopened", body=form_body(REPORT))).event == "issues/reopened"


def test_recheck_only_from_maintainers_and_never_the_bots_own_comments():
    ok = read_event(comment_event(association="COLLABORATOR", body=" /recheck \nplease"), "issue_comment")
    assert isinstance(ok, Submission) and ok.event == "issue_comment/created"
    assert ok.event_at == "2026-12-02T14:00:00Z" and ok.submitter_login == "octocat"
    outsider = read_event(comment_event(association="CONTRIBUTOR"), "issue_comment")
    assert isinstance(outsider, Ignored) and "maintainers" in outsider.reason
    chatter = read_event(comment_event(body="nice result!", association="OWNER"), "issue_comment")
    assert isinstance(chatter, Ignored)
    own = read_event(
        comment_event(body="<!-- quantjoule-bot -->\n/recheck", login="github-actions[bot]", user_type="Bot"),
        "issue_comment",
    )
    assert isinstance(own, Ignored) and "own" in own.reason
    on_pr = comment_event(association="OWNER")
    on_pr["issue"]["pull_request"] = {"url": "https://api.github.com/repos/octo-org/quantjoule/pulls/7"}
    assert isinstance(read_event(on_pr, "issue_comment"), Ignored)


def test_garbage_payloads_are_ignored_not_raised():
    assert isinstance(read_event({}), Ignored)
    assert isinstance(read_event([]), Ignored)
    assert isinstance(read_event({"issue": "x"}), Ignored)
