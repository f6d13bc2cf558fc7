"""assess: one report validated once and judged as the bot judges it (parse, validation, the measurement
rule, the verdict). `bot plan`, `bot grade` and `measure check` call it, so the verdict a contributor sees
locally is the bot's.

It sits above schema and curves and below measure, gallery and bot. What depends on the issue or the
repository (licence consent, the form's GPU field, duplicates already on file) stays in the bot's plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import schema
from assess.codes import problem
from schema.problem import Problem, has_errors

NOT_A_MEASUREMENT = "QJ506"


@dataclass(frozen=True)
class Assessment:
    """The parsed report (None when unreadable), every problem (reading and validation, then QJ506 when a
    valid report is not a measurement), whether it is a measurement, and its verdict: the grade when it is
    accepted, else the ungraded verdict saying why (QJ307 validation errors, QJ303 not a measurement), None
    when there was no report to grade."""

    report: dict | None
    problems: tuple[Problem, ...]
    is_measurement: bool
    verdict: object | None  # curves.Verdict

    @property
    def validation_problems(self) -> tuple[Problem, ...]:
        """The reading and validation problems, without the acceptance rule's QJ506."""
        return tuple(p for p in self.problems if p.code != NOT_A_MEASUREMENT)

    @property
    def valid(self) -> bool:
        """Readable with no validation error (the acceptance rule's QJ506 aside)."""
        return self.report is not None and not has_errors(self.validation_problems)

    @property
    def accepted(self) -> bool:
        """What the bot would add to the gallery, issue and repository state permitting."""
        return self.valid and self.is_measurement

    def graded_dict(self) -> dict:
        """What `bot grade --json` prints for the report (and the site's check panel computes in the
        browser): whether it is valid, its reading and validation problems, and its verdict."""
        return {
            "ok": self.valid,
            "problems": [p.to_dict() for p in self.validation_problems],
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
        }


def assess(
    text_or_report: str | bytes | dict, curves: dict, grade: Callable | None = None, now: str | None = None
) -> Assessment:
    """Parse (unless given a dict), validate once, apply the measurement rule and grade. Pure; never raises.
    `grade` is curves.grade unless given; `now` (an ISO UTC time: the event's for the bot, the clock's for
    `measure check`) also refuses a report dated after it (QJ221)."""
    if isinstance(text_or_report, dict):
        report, found = text_or_report, schema.validate(text_or_report, now=now)
    else:
        report, found = schema.check_report(text_or_report, now=now)
    problems = list(found)
    if report is None:
        return Assessment(None, tuple(problems), False, None)
    from curves.grade import grade as curves_grade
    from curves.grade import ungraded_verdict

    valid = not has_errors(problems)
    measurement = schema.is_measurement(report, problems)
    if valid and not measurement:
        problems.append(problem(NOT_A_MEASUREMENT, not_a_measurement_message(report), "/results/basis"))
    if valid:
        verdict = (grade or curves_grade)(report, curves)
    else:
        n = sum(p.severity == "error" for p in problems)
        verdict = ungraded_verdict("QJ307", f"the report has {n} validation error(s)",
                                   {"curves_version": curves.get("version")}, [])
    return Assessment(report, tuple(problems), measurement, verdict)


def not_a_measurement_message(report: dict) -> str:
    """Why a valid report is not a measurement, and what to do about it, in one line."""
    results = report.get("results") if isinstance(report.get("results"), dict) else {}
    basis, source = results.get("basis"), report.get("measurement_source")
    head = f"results.basis is {_raw(basis)} from source {_raw(source)}"
    if source == "simulated":
        return f"{head}: a simulated power source (tests and demos) measures nothing"
    if source in ("reference-dataset",) or basis in ("interpolated", "extrapolated"):
        return f"{head}: a reference value read off the curves, not a run on a GPU; run `measure run` on one"
    if basis == "unavailable" and source in ("nvml-energy-counter", "nvml-power-trace"):
        note = results.get("note") if isinstance(results.get("note"), str) else ""
        why = f" ({note[:120]})" if note else ""
        return f"{head}: the run did not complete{why}; run it again until every arm finishes"
    return f"{head}: not an NVML measurement"


def _raw(value: object) -> str:
    """A short plain rendering of a report value for a message (escaped later, when rendered)."""
    return repr(value)[:60] if not isinstance(value, str) else value[:60]
