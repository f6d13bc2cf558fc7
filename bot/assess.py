"""assess: the bot's acceptance of one report (everything the plan decides but forge and issue state).

`bot.plan` and `measure check` both call it, so the verdict a contributor sees locally is the bot's: the
same parse, validation, measurement rule (QJ506) and grade. What depends on the issue or the repository
(licence consent, the form's GPU field, duplicates already on file) stays in the plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import schema
from bot.codes import problem
from schema.problem import Problem
from schema.validate import claims_measurement

NOT_A_MEASUREMENT = "QJ506"


@dataclass(frozen=True)
class Assessment:
    """The parsed report (None when unreadable), every problem (validation plus the acceptance rule),
    whether it is a measurement, and the verdict (None unless the report is accepted)."""

    report: dict | None
    problems: tuple[Problem, ...]
    is_measurement: bool
    verdict: object | None  # curves.Verdict

    @property
    def valid(self) -> bool:
        """Readable with no validation error (the acceptance rule's QJ506 aside)."""
        return self.report is not None and not any(
            p.severity == "error" and p.code != NOT_A_MEASUREMENT for p in self.problems
        )

    @property
    def accepted(self) -> bool:
        """What the bot would add to the gallery, issue and repository state permitting."""
        return self.valid and self.is_measurement


def assess(
    text_or_report: str | bytes | dict, curves: dict, grade: Callable | None = None, now: str | None = None
) -> Assessment:
    """Parse (unless given a dict), validate, apply the measurement rule and grade. Pure; never raises.
    `now` (an ISO UTC time: the event's for the bot, the clock's for `measure check`) also refuses a
    report dated after it (QJ221)."""
    if isinstance(text_or_report, dict):
        report, problems = text_or_report, list(schema.validate(text_or_report, now=now))
    else:
        report, found = schema.parse_report(text_or_report)
        problems = list(found)
        if report is not None:
            known = {(p.code, p.path, p.message) for p in problems}
            found = schema.validate(report, now=now)
            problems += [p for p in found if (p.code, p.path, p.message) not in known]
    valid = report is not None and not any(p.severity == "error" for p in problems)
    measurement = valid and claims_measurement(report)
    if valid and not measurement:
        problems.append(problem(NOT_A_MEASUREMENT, not_a_measurement_message(report), "/results/basis"))
    verdict = None
    if measurement:
        if grade is None:
            from curves import grade
        verdict = grade(report, curves)
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
