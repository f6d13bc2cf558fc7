"""`python -m measure`: the command group; each command lives in its own module of this package."""

from __future__ import annotations

import click

# the command modules, kept as modules: `measure.cli.run` is the module, its command is `run.run`
from measure.cli import check, env, run, submit, sweep


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="quantjoule", prog_name="measure")
def main() -> None:
    """Measure GPU energy per generated token, FP16 vs NF4/INT8, and check reports."""


for _command in (run.run, sweep.sweep, run.replay, env.env, submit.submit, check.check):
    main.add_command(_command)

__all__ = ["main"]
