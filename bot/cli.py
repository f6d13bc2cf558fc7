"""Command-line entry for `python -m bot`."""

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Validate, grade and file replication submissions."""
