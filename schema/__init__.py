"""quantjoule report schemas (v2 and legacy), safe parsing, the validator and the problem codes."""

from schema.files import read_report_file
from schema.parse import KNOWN_VERSIONS, LEGACY_VERSIONS, MAX_DEPTH, MAX_REPORT_BYTES, SCHEMA_V2, parse_report
from schema.problem import Problem, has_errors
from schema.validate import is_measurement, validate


def check_report(data, now: str | None = None) -> tuple[dict | None, list[Problem]]:
    """parse_report then validate (with `now`, see validate): the report (None when unreadable) and every
    problem found. The validation step of `assess`."""
    report, problems = parse_report(data)
    if report is None:
        return None, problems
    return report, validate(report, now=now)


__all__ = [
    "KNOWN_VERSIONS", "LEGACY_VERSIONS", "MAX_DEPTH", "MAX_REPORT_BYTES", "SCHEMA_V2", "Problem",
    "check_report", "has_errors", "is_measurement", "parse_report", "read_report_file", "validate",
]
