"""`bot fit` and `bot grade`: rebuild curves.json, grade reports; thin wrappers over the core."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from curves.anchors import read_anchor_files
from curves.check import check_report, render_check_markdown, render_check_text
from curves.codes import CurvesError
from curves.fit import dumps
from curves.fit import fit as fit_curves
from curves.store import DEFAULT_ANCHOR_PATHS, DEFAULT_CURVES_PATH, load_curves
from schema import read_report_file


def _fail(err: CurvesError, status: int = 2) -> None:
    click.echo(err.render(), err=True)
    sys.exit(status)


@click.command(name="fit")
@click.option(
    "--anchors",
    "anchors_paths",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_ANCHOR_PATHS,
    show_default="reference/anchors.csv and reference/anchors-quantjoule-h200.csv",
    help="Anchor rows to fit (repeat for several files; they are read in the order given).",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_CURVES_PATH,
    show_default="reference/curves.json",
    help="Where to write curves.json.",
)
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; exit 1 (QJ311) when the file at --out differs from a fresh fit.",
)
def fit_command(anchors_paths: tuple[Path, ...], out_path: Path, check_only: bool) -> None:
    """Refit the reference crossover curves from the anchors (deterministic: same input, same bytes)."""
    try:
        text = dumps(fit_curves(read_anchor_files(anchors_paths)))
    except CurvesError as err:
        _fail(err)
    if check_only:
        try:
            current = out_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != text:
            sources = ", ".join(map(str, anchors_paths))
            _fail(CurvesError("QJ311", f"{out_path} differs from a fresh fit of {sources}"), status=1)
        click.echo(f"{out_path} is current (version {json.loads(text)['version']})")
        return
    out_path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {out_path} (version {json.loads(text)['version']})")


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
def grade_command(
    files: tuple[Path, ...], curves_path: Path | None, as_json: bool, as_markdown: bool
) -> None:
    """Validate and grade energy.json FILES against the reference curves.

    Exit status: 0 all valid (warnings allowed; a contradiction is a valid result), 1 problems found,
    2 a file or the curves could not be read.
    """
    try:
        curves = load_curves(curves_path)
    except CurvesError as err:
        _fail(err)
    status = 0
    for path in files:
        report, problems = read_report_file(path)
        result = check_report(report, problems, curves)
        if report is None and any(p.code == "QJ011" for p in problems):
            status = 2
        elif not result.ok:
            status = max(status, 1)
        if as_json:
            click.echo(
                json.dumps({"file": str(path), **result.to_dict()}, sort_keys=True, ensure_ascii=False)
            )
        elif as_markdown:
            click.echo(render_check_markdown(str(path), result))
        else:
            click.echo(render_check_text(str(path), result))
    sys.exit(status)


# Names bot/cli.py registers.
fit = fit_command
grade = grade_command
