"""`measure sweep` execution: runs the planned cells one `measure run` process each, within the budget.

Each cell runs in its own process (a CUDA error or a refused capture cannot poison the next cell, and
every cell starts with free GPU memory) into ``ROOT/<id>.incomplete/``, its console output in
``log.txt`` and what ran in ``cell.json``. Once the run has ended, the cell is renamed to ``ROOT/<id>/``
only if its raw record exists and says the protocol finished (not interrupted, the power source kept
answering): that rename is what marks a cell done (``measure.sweep.plan.is_done``). Anything else stays
``<id>.incomplete`` and is moved aside as ``<id>.interrupted-N`` by the next call, which measures the
cell again; nothing is deleted.

Ctrl-C reaches the running `measure run` too (same process group): it writes its partial reports, the
sweep waits for that, keeps them aside, and stops.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from measure.core.record import RAW_NAME
from measure.sweep.plan import INCOMPLETE, Cell, plan

GRACE_S = 90.0  # past a cell's need_s before it is stopped: loading a large model can run long
STOP_WAIT_S = 60.0  # for a stopped `measure run` to write its partial reports


@dataclass
class CellResult:
    id: str
    state: str  # done (before this call) | measured | incomplete | later
    reason: str = ""
    rc: int | None = None
    wall_s: float | None = None


@dataclass
class SweepResult:
    rows: list[CellResult] = field(default_factory=list)
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        return not self.interrupted and all(r.state in ("done", "measured") for r in self.rows)


class Hooks:
    """What a caller adds around each cell (benchmarks/campaign.py: host context, clock log, packing)."""

    def before(self, cell: Cell, work: Path) -> None:
        """Before the run, in the cell's working folder."""

    def after(self, cell: Cell, work: Path, rc: int | None) -> None:
        """After the run ended (however), still in the working folder."""

    def finished(self, cell: Cell, final: Path) -> None:
        """Once the cell is done, in its final folder."""


def _stop(proc: subprocess.Popen, wait_s: float) -> int:
    """Ask a `measure run` to stop as Ctrl-C does (it keeps what it measured), then insist."""
    for sig, wait in ((signal.SIGINT, wait_s), (signal.SIGKILL, 10.0)):
        if proc.poll() is not None:
            break
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


class ProcessRunner:
    """Runs one cell as `python -m measure run ARGV --out DIR`, console output to LOG; returns the exit
    status (124 when it ran past LIMIT_S and was stopped)."""

    def __init__(self, python: str = sys.executable, env: dict | None = None, grace_s: float = GRACE_S):
        self.python, self.env, self.grace_s = python, env, grace_s

    def command(self, cell: Cell, out_dir: Path) -> list[str]:
        return [self.python, "-m", "measure", "run", *cell.argv, "--out", str(out_dir)]

    def __call__(self, cell: Cell, out_dir: Path, log: Path, limit_s: float) -> int:
        with open(log, "w", encoding="utf-8") as console:
            proc = subprocess.Popen(self.command(cell, out_dir), stdout=console, stderr=subprocess.STDOUT,
                                    env=self.env)
            try:
                return proc.wait(timeout=limit_s)
            except subprocess.TimeoutExpired:
                _stop(proc, STOP_WAIT_S)
                return 124
            except KeyboardInterrupt:  # the child got the same SIGINT: let it write what it has
                _stop(proc, STOP_WAIT_S)
                raise


def record_state(path: Path) -> str | None:
    """None when the raw record at PATH shows a finished protocol, else why the cell is not done."""
    if not path.exists():
        return "no raw record (see log.txt)"
    try:
        with gzip.open(path, "rb") as fh:
            outcome = json.loads(fh.read())["outcome"]
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        return f"raw record unreadable ({type(exc).__name__})"
    if outcome.get("interrupted"):
        return "interrupted"
    if outcome.get("power_error"):
        return f"power source failed: {outcome['power_error']}"
    return None


def _aside(path: Path, label: str) -> None:
    """Move PATH out of the way as PATH-LABEL-N (first free N): kept, never deleted."""
    n = 1
    while (target := path.with_name(f"{path.name.removesuffix(INCOMPLETE)}.{label}-{n}")).exists():
        n += 1
    path.rename(target)


def time_limit_s(cell: Cell, left_s: float, grace_s: float = GRACE_S) -> float:
    """How long a cell may run: what is left of the budget, so that a slower host than need_s assumed
    still finishes a cell it started, but never past the budget (a device call's limit is behind it),
    and never more than twice its need plus grace (a hung run is stopped)."""
    return max(0.0, min(left_s, 2 * cell.need_s + grace_s))


def run_cell(cell: Cell, root: Path, runner: Callable, hooks: Hooks | None = None,
             now=time.time, limit_s: float | None = None) -> CellResult:
    """Measure one cell into ROOT/<id>.incomplete, then rename it to ROOT/<id> if it completed."""
    hooks = hooks or Hooks()
    work = root / f"{cell.id}{INCOMPLETE}"
    if work.exists():
        _aside(work, "interrupted")
    work.mkdir(parents=True)
    hooks.before(cell, work)
    t0 = now()
    rc = None
    try:
        rc = runner(cell, work, work / "log.txt",
                    cell.need_s + GRACE_S if limit_s is None else limit_s)
    finally:
        wall = now() - t0
        meta = {"id": cell.id, "argv": ["python", "-m", "measure", "run", *cell.argv, "--out", cell.id],
                "rc": rc, "wall_s": round(wall, 1), "need_s": cell.need_s,
                "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)), **cell.labels}
        (work / "cell.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        hooks.after(cell, work, rc)
    why = "ran past its time and was stopped" if rc == 124 else record_state(work / RAW_NAME)
    if why is not None:
        return CellResult(cell.id, "incomplete", why, rc, round(wall, 1))
    final = root / cell.id
    if final.exists():  # a folder without a raw record (never a done cell): keep it aside
        _aside(final, "superseded")
    os.replace(work, final)
    hooks.finished(cell, final)
    note = "" if rc == 0 else f"exit {rc}: an arm failed, the others were measured (see log.txt)"
    return CellResult(cell.id, "measured", note, rc, round(wall, 1))


def sweep(
    cells: list[Cell],
    root: Path,
    budget_s: float,
    runner: Callable | None = None,
    progress: Callable[..., None] | None = None,
    hooks: Hooks | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SweepResult:
    """Run the undone cells in grid order, each only while its need_s fits what is left of BUDGET_S."""
    runner = runner or ProcessRunner()
    progress = progress or (lambda *a, **k: None)
    root.mkdir(parents=True, exist_ok=True)
    start = clock()
    first = plan(cells, root, budget_s)
    progress("plan", plan=first)
    result = SweepResult([CellResult(c.id, "done") for c in first.done])
    for cell in [c for c in cells if c not in first.done]:
        left = budget_s - (clock() - start)
        if result.interrupted or cell.need_s > left:
            why = "the sweep was interrupted" if result.interrupted else (
                f"needs {cell.need_s:g} s, {max(left, 0.0):.1f} s of the budget left")
            result.rows.append(CellResult(cell.id, "later", why))
            progress("later", cell=cell, reason=why)
            continue
        progress("start", cell=cell)
        try:
            row = run_cell(cell, root, runner, hooks, limit_s=time_limit_s(cell, left))
        except KeyboardInterrupt:
            result.interrupted = True
            row = CellResult(cell.id, "incomplete", "interrupted (kept as .incomplete; runs again next call)")
        result.rows.append(row)
        progress("end", cell=cell, row=row)
    return result
