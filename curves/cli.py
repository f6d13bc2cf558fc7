"""`bot fit`: rebuild reference/curves.json from the anchors (or check it is current); a thin wrapper."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from curves.anchors import read_anchor_files
from curves.codes import CurvesError
from curves.fit import dumps
from curves.fit import fit as fit_curves
from curves.store import DEFAULT_ANCHOR_PATHS, DEFAULT_CURVES_PATH


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


# The name bot/cli.py registers.
fit = fit_command
