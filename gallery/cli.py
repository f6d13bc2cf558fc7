"""Command-line entry for `python -m gallery`."""

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Build the replication gallery (plots, Markdown, static site)."""
