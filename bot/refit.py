"""`python -m bot refit`: after new measured runs land, bring every derived file up to date in order
(anchor rows, curves.json, the curves table in curves/README.md, the gallery), or with --check say which
one is stale. Each step is the same code as its own command (`curves.measured`, `bot fit`,
`curves.table`, `gallery build`), on the files of the checkout at --root."""

from __future__ import annotations

import sys
from pathlib import Path

import click

TABLE_HEAD = "| curve | n | A % |"


def _settle(path: Path, text: str, check_only: bool, what: str) -> tuple[bool, str]:
    """Compare `path` with the fresh `text`; write it unless checking."""
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if current == text:
        return True, f"{what} is current"
    if check_only:
        return False, f"{what} is stale"
    path.write_text(text, encoding="utf-8")
    return True, f"{what} rewritten"


def rows_step(root: Path, check_only: bool) -> tuple[bool, str]:
    from curves.measured import DEFAULT_OUT, DEFAULT_REPORTS, DEFAULT_SOURCE, build_csv

    text, _skipped = build_csv(root / DEFAULT_REPORTS, DEFAULT_SOURCE, root=root)
    return _settle(root / DEFAULT_OUT, text, check_only, f"{DEFAULT_OUT} ({text.count(chr(10)) - 1} rows)")


def fit_step(root: Path, check_only: bool) -> tuple[bool, str]:
    from curves.anchors import read_anchor_files
    from curves.fit import dumps, fit
    from curves.store import DEFAULT_ANCHOR_PATHS

    # the checkout's own files, named as the committed fit names them (not the installed package's copy)
    text = dumps(fit(read_anchor_files([root / "reference" / p.name for p in DEFAULT_ANCHOR_PATHS])))
    return _settle(root / "reference" / "curves.json", text, check_only, "reference/curves.json")


def table_step(root: Path, check_only: bool) -> tuple[bool, str]:
    """The table of curves in curves/README.md, from reference/curves.json."""
    from curves.store import load_curves
    from curves.table import group_table

    readme = root / "curves" / "README.md"
    lines = readme.read_text(encoding="utf-8").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(TABLE_HEAD)), None)
    if start is None:
        return False, f"curves/README.md has no table starting {TABLE_HEAD!r}"
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    table = group_table(load_curves(root / "reference" / "curves.json")).rstrip("\n").split("\n")
    text = "\n".join(lines[:start] + table + lines[end:])
    return _settle(readme, text, check_only, "curves/README.md table")


def gallery_step(root: Path, check_only: bool) -> tuple[bool, str]:
    from gallery import build

    build(root)
    return True, "gallery rebuilt"


def refit(root: Path, check_only: bool, gallery: bool = True) -> list[tuple[str, bool, str]]:
    """Each step's (name, ok, what it found), in order; a stale or failed step stops the ones after it,
    which would read it. The gallery is rebuilt, never checked here (its own tests compare a fresh build)."""
    from curves.codes import CurvesError

    steps = [("anchor rows", rows_step), ("curves.json", fit_step), ("curves table", table_step)]
    if gallery and not check_only:
        steps.append(("gallery", gallery_step))
    results = []
    for name, step in steps:
        try:
            ok, said = step(root, check_only)
        except (CurvesError, OSError, ValueError) as err:
            ok, said = False, str(err)
        results.append((name, ok, said))
        if not ok:
            break
    return results


@click.command("refit", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The checkout (holding measurements/, reference/ and curves/).")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 when the anchor rows, curves.json or the table is stale.")
@click.option("--no-gallery", is_flag=True, help="Leave the gallery as it is.")
def main(root: Path, check_only: bool, no_gallery: bool) -> None:
    """Anchor rows from measurements/, refit curves.json, the curves table, then the gallery."""
    results = refit(root, check_only, gallery=not no_gallery)
    for name, ok, said in results:
        click.echo(f"{'ok ' if ok else 'NO '} {name}: {said}")
    if not all(ok for _, ok, _ in results):
        sys.exit(1)
