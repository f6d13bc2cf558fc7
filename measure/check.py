"""`measure check`: validate (and later grade) energy.json files."""

import click


@click.command()
@click.argument("files", nargs=-1, type=click.Path())
def check(files: tuple[str, ...]) -> None:
    """Validate energy.json FILES (not yet implemented)."""
    raise click.ClickException("check is not implemented yet")
