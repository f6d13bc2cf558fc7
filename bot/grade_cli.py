"""`bot grade`: energy.json files validated and graded by assess, printed as text, Markdown or JSON lines.

A grading tool: it prints the reading and validation problems and the verdict of every readable report
(ungraded, with its reason, when the bot would refuse it); `measure check` says whether the bot accepts it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from assess import Assessment, assess
from curves.codes import CurvesError
from curves.render import render_markdown, render_text
from curves.store import load_curves
from schema.escape import md_verdict
from schema.files import read_bytes
from schema.problem import Problem


def assess_file(path: str | Path, curves: dict) -> Assessment:
    """The assessment of one file; a file that cannot be read is an unreadable report (QJ011)."""
    data, problems = read_bytes(path)
    return Assessment(None, tuple(problems), False, None) if data is None else assess(data, curves)


def _problem_lines(problems: tuple[Problem, ...]) -> list[str]:
    return [f"{p.code} {p.severity} {p.path or '/'}: {p.message} (hint: {p.hint})" for p in problems]


def render_check_text(name: str, result: Assessment) -> str:
    """What `bot grade` prints for one file."""
    lines = [f"== {name}: {'valid' if result.valid else 'problems found'}"]
    lines += _problem_lines(result.validation_problems) or ["no problems"]
    out = "\n".join(lines) + "\n"
    if result.verdict is not None:
        out += render_text(result.verdict)
    return out


def render_check_markdown(name: str, result: Assessment) -> str:
    """The same content as Markdown (problems as a list, then the verdict table)."""
    lines = [f"{md_verdict(name)}: {'valid' if result.valid else 'problems found'}", ""]
    problems = _problem_lines(result.validation_problems)
    lines += [f"- {md_verdict(line)}" for line in problems] or ["- no problems"]
    out = "\n".join(lines) + "\n"
    if result.verdict is not None:
        out += "\n" + render_markdown(result.verdict)
    return out


@click.command(name="grade")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--curves",
    "curves_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="curves.json to grade against (default reference/curves.json).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file instead of text.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print Markdown instead of text.")
def grade(files: tuple[Path, ...], curves_path: Path | None, as_json: bool, as_markdown: bool) -> None:
    """Validate and grade energy.json FILES against the reference curves.

    Exit status: 0 all valid (warnings allowed; a contradiction is a valid result), 1 problems found,
    2 a file or the curves could not be read.
    """
    try:
        curves = load_curves(curves_path)
    except CurvesError as err:
        click.echo(err.render(), err=True)
        sys.exit(2)
    status = 0
    for path in files:
        result = assess_file(path, curves)
        if result.report is None and any(p.code == "QJ011" for p in result.problems):
            status = 2
        elif not result.valid:
            status = max(status, 1)
        if as_json:
            line = {"file": str(path), **result.graded_dict()}
            click.echo(json.dumps(line, sort_keys=True, ensure_ascii=False))
        elif as_markdown:
            click.echo(render_check_markdown(str(path), result))
        else:
            click.echo(render_check_text(str(path), result))
    sys.exit(status)
