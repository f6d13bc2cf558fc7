"""`bot fit` and `bot grade`: rebuild curves.json, grade a report."""

import click


@click.command()
def fit() -> None:
    """Refit reference/curves.json from reference/anchors.csv (not yet implemented)."""
    raise click.ClickException("fit is not implemented yet")


@click.command()
@click.argument("files", nargs=-1, type=click.Path())
def grade(files: tuple[str, ...]) -> None:
    """Validate and grade energy.json FILES (not yet implemented)."""
    raise click.ClickException("grade is not implemented yet")
