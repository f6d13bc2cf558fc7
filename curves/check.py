"""check_text: parse + validate + grade one report, the shared core of `bot grade` and `measure check`."""

from __future__ import annotations

from dataclasses import dataclass

from curves.grade import Verdict, grade, ungraded_verdict
from curves.render import md_escape, render_markdown, render_text
from schema import Problem, has_errors, parse_report, validate


@dataclass(frozen=True)
class CheckResult:
    """The parsed report (None when unreadable), every validation problem, and the verdict (None when
    there was no report to grade)."""

    report: dict | None
    problems: tuple[Problem, ...]
    verdict: Verdict | None

    @property
    def ok(self) -> bool:
        return self.report is not None and not has_errors(self.problems)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "problems": [p.to_dict() for p in self.problems],
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
        }


def verdict_for(report: dict, problems: list[Problem], curves: dict) -> Verdict:
    """The verdict of a report whose validation problems are known: errors make it ungraded (QJ307)."""
    if not has_errors(problems):
        return grade(report, curves)
    n = sum(p.severity == "error" for p in problems)
    return ungraded_verdict(
        "QJ307", f"the report has {n} validation error(s)", {"curves_version": curves.get("version")}, []
    )


def check_report(report: dict | None, problems: list[Problem], curves: dict) -> CheckResult:
    """Grade an already parsed report: validation errors make it ungraded (QJ307), never graded."""
    if report is None:
        return CheckResult(None, tuple(problems), None)
    found = list(problems) + list(validate(report))
    return CheckResult(report, tuple(found), verdict_for(report, found, curves))


def check_text(text: str | bytes, curves: dict) -> CheckResult:
    """Parse, validate and grade one energy.json text. Pure; never raises on bad input."""
    report, problems = parse_report(text)
    return check_report(report, problems, curves)


def _problem_lines(problems: tuple[Problem, ...]) -> list[str]:
    return [f"{p.code} {p.severity} {p.path or '/'}: {p.message} (hint: {p.hint})" for p in problems]


def render_check_text(name: str, result: CheckResult) -> str:
    """What `bot grade` and `measure check` print for one file."""
    lines = [f"== {name}: {'valid' if result.ok else 'problems found'}"]
    lines += _problem_lines(result.problems) or ["no problems"]
    out = "\n".join(lines) + "\n"
    if result.verdict is not None:
        out += render_text(result.verdict)
    return out


def render_check_markdown(name: str, result: CheckResult) -> str:
    """The same content as Markdown (problems as a list, then the verdict table)."""
    lines = [f"{md_escape(name)}: {'valid' if result.ok else 'problems found'}", ""]
    lines += [f"- {md_escape(line)}" for line in _problem_lines(result.problems)] or ["- no problems"]
    out = "\n".join(lines) + "\n"
    if result.verdict is not None:
        out += "\n" + render_markdown(result.verdict)
    return out
