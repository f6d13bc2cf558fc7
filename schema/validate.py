"""validate(report): the one validator (version, schema, then semantic checks) and is_measurement."""

from __future__ import annotations

from schema.claims import coarse_energy_problems, legacy_evidence_problems, timestamp_problems
from schema.parse import MAX_DEPTH, SCHEMA_V2, unsafe_values, version_problems
from schema.problem import Problem, has_errors, pointer, problem, sort_problems
from schema.semantic import (
    NVML_SOURCE_LEGACY,
    NVML_SOURCES_V2,
    arithmetic_problems,
    baseline_problems,
    identity_problems,
    non_finite_paths,
    source_problems,
    value_problems,
)
from schema.structure import structure_problems
from schema.trials import v2_problems

_JSON_SCALARS = (str, int, float, bool, type(None))


def _shape_problems(report) -> list[Problem]:
    """Depth and JSON types of a report built in Python (parse_report already guarantees both for text)."""
    stack = [(report, (), 1)]
    while stack:
        node, parts, depth = stack.pop()
        if isinstance(node, (dict, list)) and depth > MAX_DEPTH:
            return [problem("QJ007", f"nesting deeper than {MAX_DEPTH} levels", pointer(parts))]
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str):
                    return [problem("QJ102", f"key {key!r} is not a string", pointer(parts))]
                stack.append((value, (*parts, key), depth + 1))
        elif isinstance(node, list):
            stack.extend((v, (*parts, i), depth + 1) for i, v in enumerate(node))
        elif not isinstance(node, _JSON_SCALARS):
            return [problem("QJ102", f"a {type(node).__name__} is not a JSON value", pointer(parts))]
    return []


def validate(report, now: str | None = None) -> list[Problem]:
    """Every problem of a parsed report: version, JSON Schema, then semantic checks on schema-valid data.

    `now` (an ISO UTC time, e.g. the submission's) also refuses a report timestamped after it (QJ221)."""
    if not isinstance(report, dict):
        return [problem("QJ008", f"the report is a {type(report).__name__}, not an object")]
    found = _shape_problems(report) or unsafe_values(report) or version_problems(report)
    if found:
        return found
    found = [problem("QJ206", f"{pointer(p)} is not a finite number", pointer(p))
             for p in non_finite_paths(report)]
    # A non-finite number also breaks range rules; its one problem is that it is not finite.
    located = {p.path for p in found}
    found += [p for p in structure_problems(report, report["schema_version"]) if p.path not in located]
    if not has_errors(found):
        sources = source_problems(report)
        found += sources + arithmetic_problems(report) + value_problems(report)
        found += identity_problems(report) + baseline_problems(report)
        found += coarse_energy_problems(report) + timestamp_problems(report, now)
        if not sources:  # a report whose source already disowns it needs no further evidence checks
            found += legacy_evidence_problems(report)
        if report["schema_version"] == SCHEMA_V2:
            found += v2_problems(report)
    return sort_problems(found)


def claims_measurement(report) -> bool:
    """basis measured from an NVML source (v2: nvml-energy-counter or nvml-power-trace; legacy: direct-nvml),
    before any other check: the one measurement rule, which is_measurement adds validity to."""
    if not isinstance(report, dict) or not isinstance(report.get("results"), dict):
        return False
    nvml = NVML_SOURCES_V2 if report.get("schema_version") == SCHEMA_V2 else (NVML_SOURCE_LEGACY,)
    return report["results"].get("basis") == "measured" and report.get("measurement_source") in nvml


def is_measurement(report, problems=None) -> bool:
    """True only for basis measured from an NVML source with no error problem: what may be graded.
    `problems` are the report's validation problems when already known (then it is not validated again)."""
    if not claims_measurement(report):
        return False
    return not has_errors(validate(report) if problems is None else problems)
