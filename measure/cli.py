"""Command-line entry for `python -m measure`."""

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="quantjoule", prog_name="measure")
def main() -> None:
    """Measure GPU energy per generated token, FP16 vs NF4/INT8, and check reports."""


def _register() -> None:
    from measure.check import check

    main.add_command(check)


_register()
