"""`measure check`: the bot's own acceptance of energy.json files (assess), each problem, the verdict."""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import dataclass

import click
from rich.console import Console
from rich.text import Text

from assess import assess
from curves import load_curves
from curves.codes import CurvesError
from curves.grade import Verdict
from curves.render import render_text
from schema.files import read_bytes
from schema.parse import MAX_REPORT_BYTES
from schema.problem import Problem

EXIT_VALID, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2
_UNREADABLE_CODES = ("QJ011",)


@dataclass(frozen=True)
class FileCheck:
    """What checking one file found: its problems (the bot's acceptance rule included) and the verdict the
    bot would give it (None when the bot would refuse it)."""

    path: str
    report: dict | None
    problems: tuple[Problem, ...]
    verdict: Verdict | None = None
    measurement: bool = False

    @property
    def unreadable(self) -> bool:
        return any(p.code in _UNREADABLE_CODES for p in self.problems)

    @property
    def errors(self) -> int:
        return sum(p.severity == "error" for p in self.problems)

    @property
    def warnings(self) -> int:
        return sum(p.severity == "warning" for p in self.problems)

    @property
    def is_measurement(self) -> bool:
        """schema.is_measurement, as assess found it."""
        return self.measurement

    @property
    def accepted(self) -> bool:
        """The bot would accept it (repository state permitting: consent, duplicates)."""
        return self.report is not None and not self.errors

    @property
    def status(self) -> str:
        if self.unreadable:
            return "unreadable"
        return "problems" if self.errors else "valid"

    def to_dict(self) -> dict:
        report = self.report or {}
        version = report.get("schema_version") if isinstance(report.get("schema_version"), str) else None
        return {"file": self.path, "status": self.status, "schema_version": version,
                "is_measurement": self.is_measurement, "accepted": self.accepted,
                "errors": self.errors, "warnings": self.warnings,
                "problems": [p.to_dict() for p in self.problems],
                "verdict": None if self.verdict is None else self.verdict.to_dict()}


def check_data(
    path: str, data: bytes | None, read_problems: list[Problem], curves: dict, now: str | None = None
) -> FileCheck:
    """Pure core: the bot's assessment of one file's bytes (None with read_problems when it could not be
    read): the same parse, validation, measurement rule and grade as the bot's plan. `now` (ISO UTC) is
    the submission time the bot would see: a report dated after it is refused (QJ221)."""
    if data is None:
        return FileCheck(path, None, tuple(read_problems))
    found = assess(data, curves, now=now)
    # The bot gives a verdict only to what it accepts; a refused report's reasons are its problems.
    verdict = found.verdict if found.accepted else None
    return FileCheck(path, found.report, found.problems, verdict, found.is_measurement)


def exit_status(results: list[FileCheck]) -> int:
    """2 when a file could not be read, else 1 when the bot would refuse any file (an error problem), else
    0 (warnings allowed)."""
    if any(r.unreadable for r in results):
        return EXIT_UNREADABLE
    return EXIT_PROBLEMS if any(r.errors for r in results) else EXIT_VALID


def _read(path: str) -> tuple[bytes | None, list[Problem]]:
    if path == "-":
        return sys.stdin.buffer.read(MAX_REPORT_BYTES + 1), []
    return read_bytes(path)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _headline(result: FileCheck) -> Text:
    line = Text(f"{result.path}: ", style="bold")
    report = result.report or {}
    if result.status == "valid":
        source = report.get("measurement_source")
        line.append(f"valid {report.get('schema_version')}, basis measured from {source}; the bot would "
                    "accept it", style="green")
    elif result.unreadable:
        line.append("cannot be read", style="red")
    else:
        line.append(_count(result.errors, "error"), style="red")
        if result.report is not None and not result.is_measurement and result.errors == 1 and any(
                p.code == "QJ506" for p in result.problems):
            basis = (report.get("results") or {}).get("basis")
            line.append(f": valid {report.get('schema_version')} but not a measurement (basis {basis}, "
                        f"source {report.get('measurement_source')})", style="red")
        line.append("; the bot would refuse it", style="red")
    if result.warnings:
        line.append(f", {_count(result.warnings, 'warning')}", style="yellow")
    return line


def render(results: list[FileCheck], console: Console) -> None:
    """Human-readable report: per file a headline, then code, severity, path, message and hint per problem."""
    for result in results:
        console.print(_headline(result))
        for p in result.problems:
            colour = "red" if p.severity == "error" else "yellow"
            head = Text("  ")
            head.append(p.code, style=f"bold {colour}")
            head.append(f" {p.severity:<7} ", style=colour)
            head.append(p.path or "(whole report)", style="cyan")
            console.print(head)
            console.print(Text(f"      {p.message}"))
            console.print(Text(f"      hint: {p.hint}", style="dim"))
        if result.verdict is not None:
            console.print(Text(render_text(result.verdict).rstrip("\n")))
    if len(results) > 1:
        counts = {s: sum(r.status == s for r in results) for s in ("valid", "problems", "unreadable")}
        console.print(Text(f"{len(results)} files: {counts['valid']} valid, {counts['problems']} with "
                           f"errors, {counts['unreadable']} unreadable"))


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list of results instead of text.")
def check(files: tuple[str, ...], as_json: bool) -> None:
    """Check energy.json FILES as the bot will (use - for standard input): each problem with a hint, then
    the verdict the bot would give.

    Exit status: 0 the bot would accept every file (warnings allowed), 1 the bot would refuse a file
    (validation errors, or not a measurement: QJ506), 2 a file could not be read or the command was used
    wrongly.
    """
    try:
        curves = load_curves()
    except CurvesError as err:
        click.echo(err.render(), err=True)
        sys.exit(EXIT_UNREADABLE)
    # A report submitted now is checked against now, as the bot checks it against the time.
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    results = [check_data(path, *_read(path), curves, now) for path in files]
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in results], indent=2, ensure_ascii=False))
    else:
        render(results, Console(highlight=False, soft_wrap=True))
    sys.exit(exit_status(results))
