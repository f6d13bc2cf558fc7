"""`measure sweep`: its options, the plan printed, one progress bar for the whole grid, the cell table."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from measure.codes import MeasureError
from measure.core.design import QUANTIZED
from measure.run.options import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from measure.sweep import plan as grid_plan
from measure.sweep.execute import SweepResult
from measure.sweep.execute import sweep as run_grid


def plan_lines(plan: grid_plan.Plan) -> list[str]:
    """One line per cell in grid order: state, id, time it needs, its `measure run` arguments."""
    state = {c.id: ("done", "") for c in plan.done} | {c.id: ("to run", "") for c in plan.run}
    state |= {c.id: ("later", f"  ({why})") for c, why in plan.later}
    cells = sorted(plan.done + plan.run + [c for c, _ in plan.later], key=lambda c: plan.order[c.id])
    return [f"{state[c.id][0]:6s} {c.id}  {c.need_s:g} s  measure run {' '.join(c.argv)}{state[c.id][1]}"
            for c in cells]


def result_table(result: SweepResult) -> Table:
    table = Table(title="quantjoule sweep")
    for col in ("cell", "state", "exit", "wall s", "note"):
        table.add_column(col)
    for r in result.rows:
        table.add_row(r.id, r.state, "" if r.rc is None else str(r.rc),
                      "" if r.wall_s is None else f"{r.wall_s:.0f}", r.reason)
    return table


class _Bar:
    """One bar for the grid: cells done out of all cells, with the running cell's id."""

    def __init__(self, progress: Progress):
        self.p, self.task = progress, None

    def __call__(self, kind: str, **kw) -> None:
        if kind == "plan":
            plan = kw["plan"]
            self.task = self.p.add_task("grid", total=plan.cells, completed=len(plan.done))
        elif kind == "start":
            self.p.update(self.task, description=f"grid: {kw['cell'].id}")
        elif kind == "end" and kw["row"].state == "measured":
            self.p.advance(self.task)


def execute(cells: list[grid_plan.Cell], root: Path, budget_s: float, dry_run: bool = False,
            console: Console | None = None, runner=None) -> int:
    """Plan (and unless DRY_RUN, run) the grid; returns the exit status."""
    console = console or Console(stderr=True)
    for warning in grid_plan.warnings(cells):
        console.print(f"[yellow]{warning}[/yellow]")
    if dry_run:
        plan = grid_plan.plan(cells, root, budget_s)
        console.print(f"sweep plan: {len(plan.done)} of {plan.cells} cells done, {len(plan.run)} to run "
                      f"within {budget_s:g} s, {len(plan.later)} for a later call", soft_wrap=True)
        for line in plan_lines(plan):
            console.print(line, soft_wrap=True, highlight=False)
        return EXIT_OK
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*cols, console=console, transient=False) as progress:
        result = run_grid(cells, root, budget_s, runner=runner, progress=_Bar(progress))
    console.print(result_table(result))
    left = [r for r in result.rows if r.state in ("later", "incomplete")]
    if left:
        console.print(f"[yellow]QJ420: {len(left)} cell(s) not measured yet; run the same command again "
                      "to resume (done cells are kept)[/yellow]")
    return EXIT_OK if result.complete else EXIT_PARTIAL


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--synthetic", "synthetic_sizes", help="Sizes: synthetic model names, comma-separated.")
@click.option("--model", "model_ids", help="Sizes: Hugging Face ids or local paths, comma-separated.")
@click.option(
    "--precisions",
    multiple=True,
    default=(",".join(p.lower() for p in QUANTIZED),),
    show_default=True,
    help="A precision group per cell (repeat for several): nf4, int8, or nf4,int8 for one run of both.",
)
@click.option("--backends", default="eager", show_default=True, help="eager, static or eager,static.")
@click.option("--batch-sizes", default="1", show_default=True, help="Comma-separated, e.g. 1,8,32.")
@click.option("--cell-duration", "duration_s", type=click.FloatRange(1, 36000), help="Each run's --duration.")
@click.option("--trials", type=click.IntRange(1, 5000), help="--trials of each run (instead of a duration).")
@click.option(
    "--cell-need-s",
    type=click.FloatRange(1, 86400),
    help="Seconds one cell is given [default: --cell-duration + --overhead-s].",
)
@click.option(
    "--overhead-s",
    default=grid_plan.DEFAULT_OVERHEAD_S,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="A run's time beyond its blocks (load, warmup, idle, prefill, quality).",
)
@click.option("--budget", "budget_s", default=3600.0, show_default=True, type=click.FloatRange(1, 10**6))
@click.option("--seed", default=0, show_default=True, type=int, help="Base of the cells' own seeds.")
@click.option("--root", default="sweep", show_default=True, type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Print the plan (done, to run, later) and run nothing.")
@click.argument("run_args", nargs=-1, type=click.UNPROCESSED)
def sweep(synthetic_sizes, model_ids, precisions, backends, batch_sizes, duration_s, trials, cell_need_s,
          overhead_s, budget_s, seed, root, dry_run, run_args) -> None:
    """Measure a grid (sizes x precisions x backends x batch sizes), one `measure run` and one raw record
    per cell under --root, within --budget seconds; run it again to resume. Arguments after `--` go to
    every `measure run` (e.g. -- --block-tokens 256 --tokens 256)."""
    if bool(synthetic_sizes) == bool(model_ids):
        raise click.UsageError("QJ419: pass exactly one of --synthetic or --model")
    try:
        if synthetic_sizes:
            from measure.gpu.synthetic import UnknownSyntheticModel, get_spec

            try:
                sizes = [get_spec(name).name for name in _csv(synthetic_sizes)]
            except UnknownSyntheticModel as exc:
                raise grid_plan.GridError(str(exc)) from exc
        else:
            sizes = _csv(model_ids)
        try:
            batches = [int(b) for b in _csv(batch_sizes)]
        except ValueError as exc:
            raise grid_plan.GridError(f"batch sizes must be integers: {batch_sizes!r}") from exc
        cells = grid_plan.grid(sizes, precisions, _csv(backends), batches, synthetic=bool(synthetic_sizes),
                               duration_s=duration_s, trials=trials, overhead_s=overhead_s,
                               need_s=cell_need_s, seed=seed, run_args=run_args)
    except grid_plan.GridError as exc:
        click.echo(f"{MeasureError('QJ419', str(exc))}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(execute(cells, Path(root), budget_s, dry_run=dry_run))
