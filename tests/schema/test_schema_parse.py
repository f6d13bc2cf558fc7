"""parse_report: every malformed input gives one coded problem and no report, never an exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schema import MAX_DEPTH, MAX_REPORT_BYTES, parse_report, validate
from tests.schema.schema_helpers import VALID, codes_of

GOOD = (VALID / "v2-measured-nf4-hopper.json").read_text(encoding="utf-8")


def test_text_and_bytes_parse_alike():
    from_text, problems_text = parse_report(GOOD)
    from_bytes, problems_bytes = parse_report(GOOD.encode())
    assert from_text == from_bytes == json.loads(GOOD)
    assert problems_text == problems_bytes == []


def test_byte_order_mark_is_dropped():
    report, problems = parse_report(b"\xef\xbb\xbf" + GOOD.encode())
    assert problems == [] and report["schema_version"] == "quantjoule-energy/2.0"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "QJ001"),
        ("   \n", "QJ001"),
        ("caf\udce9", "QJ003"),
        (b'{"a": "\xff"}', "QJ003"),
        ('{"a": NaN}', "QJ004"),
        ('{"a": -Infinity}', "QJ004"),
        ("[Infinity]", "QJ004"),
        ('{"a": 1,}', "QJ005"),
        ("{'a': 1}", "QJ005"),
        ('{"a": 1} {"b": 2}', "QJ005"),
        ("1" * 5000, "QJ005"),
        (12, "QJ005"),
        (None, "QJ005"),
        ('{"a": 1, "a": 2}', "QJ006"),
        ("[]", "QJ008"),
        ('"text"', "QJ008"),
        ("3.5", "QJ008"),
        ("null", "QJ008"),
        ("true", "QJ008"),
        ("{}", "QJ009"),
        ('{"schema_version": 2}', "QJ009"),
        ('{"schema_version": "ecocompute-energy/1.3"}', "QJ010"),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_malformed_input_gives_one_coded_problem(data, code):
    report, problems = parse_report(data)
    assert report is None
    assert codes_of(problems) == [code]


def test_syntax_error_names_line_and_column():
    _, problems = parse_report('{\n  "a": 1,\n  "b": ]\n}')
    assert problems[0].code == "QJ005"
    assert "line 3, column 8" in problems[0].message


def test_nan_literal_position_is_reported():
    _, problems = parse_report('{\n "x": 1,\n "y": NaN\n}')
    assert problems[0].message == "NaN literal at line 3 column 7"


def test_words_inside_strings_are_not_literals_or_brackets():
    text = json.dumps({"schema_version": "ecocompute-energy/1.0", "note": "NaN Infinity " + "[{" * 100})
    report, problems = parse_report(text)
    assert problems == [] and report["note"].startswith("NaN")


def test_escaped_quotes_do_not_end_a_string():
    text = '{"schema_version": "ecocompute-energy/1.0", "note": "say \\"[[[[\\" NaN"}'
    report, problems = parse_report(text)
    assert problems == [] and report["note"] == 'say "[[[[" NaN'


def test_depth_limit_is_exact():
    def nested(depth: int) -> str:
        inner = "[" * (depth - 1) + "]" * (depth - 1)
        return '{"schema_version": "ecocompute-energy/1.0", "x": ' + inner + "}"

    assert parse_report(nested(MAX_DEPTH))[1] == []
    assert codes_of(parse_report(nested(MAX_DEPTH + 1))[1]) == ["QJ007"]


def test_size_limit_is_exact():
    padded = GOOD.rstrip() + " " * (MAX_REPORT_BYTES - len(GOOD.rstrip().encode()))
    assert len(padded.encode()) == MAX_REPORT_BYTES
    assert parse_report(padded)[1] == []
    report, problems = parse_report(padded + " ")
    assert report is None and codes_of(problems) == ["QJ002"]


def test_size_is_counted_in_utf8_bytes_not_characters():
    text = '{"schema_version": "ecocompute-energy/1.0", "n": "' + "\u00e9" * 30_000 + '"}'
    assert len(text) < MAX_REPORT_BYTES < len(text.encode())
    assert codes_of(parse_report(text)[1]) == ["QJ002"]


def test_duplicate_keys_are_each_located():
    text = (
        '{"schema_version": "quantjoule-energy/2.0", "trials": [{"arm": "FP16", "arm": "NF4"}], '
        '"results": {"basis": 1, "basis": 2}}'
    )
    report, problems = parse_report(text)
    assert report is None
    assert [(p.code, p.path) for p in problems] == [("QJ006", "/results/basis"), ("QJ006", "/trials/0/arm")]


def test_overflowing_number_parses_then_fails_validation():
    text = GOOD.replace('"idle_window_s": 5.0', '"idle_window_s": -1e999')
    report, problems = parse_report(text)
    assert problems == []
    assert [(p.code, p.path) for p in validate(report)] == [("QJ206", "/protocol/idle_window_s")]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300)))
def test_arbitrary_input_never_raises(data):
    report, problems = parse_report(data)
    assert (report is None) == bool(problems)
    for p in problems:
        assert p.code.startswith("QJ0") and p.severity == "error"


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=len(GOOD)),
    st.sampled_from(["", "{", "]", '"', ",", "\\", "\x00", "NaN"]),
)
def test_corrupted_report_never_raises(cut, insert):
    text = GOOD[:cut] + insert + GOOD[cut:]
    report, problems = parse_report(text)
    if report is not None:
        assert all(p.code for p in validate(report))
