"""`measure sweep` presentation: the plan, one progress bar for the whole grid, and the cell table."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from measure import sweep as grid_plan
from measure.sweep_run import SweepResult, sweep

EXIT_OK, EXIT_USAGE, EXIT_PARTIAL = 0, 2, 4


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
        result = sweep(cells, root, budget_s, runner=runner, progress=_Bar(progress))
    console.print(result_table(result))
    left = [r for r in result.rows if r.state in ("later", "incomplete")]
    if left:
        console.print(f"[yellow]QJ420: {len(left)} cell(s) not measured yet; run the same command again "
                      "to resume (done cells are kept)[/yellow]")
    return EXIT_OK if result.complete else EXIT_PARTIAL
