"""Command-line entry for `python -m bot`."""

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Validate, grade and file replication submissions."""


def _register() -> None:
    from curves.cli import fit, grade

    main.add_command(fit)
    main.add_command(grade)


_register()
