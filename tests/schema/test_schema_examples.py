"""Every example report gives exactly the verdict its name promises; the examples are generated."""

from __future__ import annotations

import pytest

from curves import load_curves
from measure.cli.check import check_data, exit_status
from schema import check_report, is_measurement, validate
from schema.codes import codes, get
from schema.files import read_bytes, read_report_file
from tests.schema import make_examples
from tests.schema.schema_helpers import EXAMPLES, INVALID, VALID, codes_of, load

INVALID_FILES = sorted(INVALID.iterdir())
VALID_FILES = sorted(VALID.iterdir())

CURVES = load_curves()


def test_enough_examples():
    assert len(INVALID_FILES) >= 25
    assert len(VALID_FILES) >= 6


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda p: p.name)
def test_invalid_example_gives_exactly_its_code(path):
    expected = path.name[:5]
    result = check_data(str(path), *read_bytes(path), CURVES)
    assert codes_of(result.problems) == [expected]
    if get(expected).severity == "error":
        assert result.status in ("problems", "unreadable")
        assert exit_status([result]) == (2 if expected == "QJ011" else 1)
    else:
        # Warnings never block: the report is otherwise valid and check exits 0.
        assert result.status == "valid"
        assert exit_status([result]) == 0
    for p in result.problems:
        assert p.message and p.hint and "\n" not in p.message
        assert p.path == "" or p.path.startswith("/")


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.name)
def test_valid_example_has_no_problem(path):
    report, problems = read_report_file(path)
    assert report is not None
    assert validate(report) == []
    assert problems == []


def test_every_report_code_has_an_example():
    produced = {p.name[:5] for p in INVALID_FILES}
    assert produced == {c.code for c in codes()}


def test_examples_are_the_generator_output():
    expected = make_examples.outputs()
    on_disk = {str(p.relative_to(EXAMPLES)): p.read_bytes() for p in EXAMPLES.rglob("*") if p.is_file()}
    assert sorted(on_disk) == sorted(expected)
    for name, content in expected.items():
        assert on_disk[name] == content, name


def test_generator_is_deterministic():
    assert make_examples.outputs() == make_examples.outputs()


def test_valid_examples_say_they_are_fixtures():
    note = make_examples.FIXTURE_NOTE
    for path in VALID_FILES:
        assert note in path.read_text(encoding="utf-8"), path.name


def test_which_examples_claim_a_measurement():
    claims = {p.name: is_measurement(load(p.name)) for p in VALID_FILES}
    assert claims == {
        "legacy-1.0-interpolated.json": False,
        "legacy-1.1-measured-direct-nvml.json": True,
        "v2-fp16-only-baseline.json": True,
        "v2-measured-nf4-hopper.json": True,
        "v2-one-trial-failed.json": True,
        "v2-reference-interpolated.json": False,
        "v2-volta-no-curve-int8.json": True,
    }


def test_legacy_illustrative_report_is_refused_as_a_measurement():
    report, problems = read_report_file(INVALID / "QJ202-legacy-illustrative-claims-measured.json")
    assert report["schema_version"] == "ecocompute-energy/1.1"
    assert report["results"]["basis"] == "measured"
    assert codes_of(validate(report)) == ["QJ202"]
    assert not is_measurement(report)
    # The very same report with a direct NVML source is accepted: only the source made the difference.
    report["measurement_source"] = "direct-nvml"
    assert validate(report) == [] and is_measurement(report)


@pytest.mark.parametrize(
    "text",
    ["[" * 10_000 + "]" * 10_000, '{"":' * 10_000 + "1" + "}" * 10_000, "[" * 10_000],
    ids=["arrays", "objects", "unclosed"],
)
def test_ten_thousand_deep_is_a_coded_problem(text):
    report, problems = check_report(text)
    assert report is None
    assert codes_of(problems) == ["QJ007"]


def test_ten_thousand_deep_file_through_check(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 10_000 + "]" * 10_000)
    result = check_data(str(deep), *read_bytes(deep), CURVES)
    assert codes_of(result.problems) == ["QJ007"] and exit_status([result]) == 1
