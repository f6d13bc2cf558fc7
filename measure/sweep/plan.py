"""`measure sweep` planning (pure): a grid of `measure run` cells, which are done, which fit the budget.

A grid is sizes × precision groups × backends × batch sizes. A precision group is the quantized arms one
run measures against its own FP16 (`nf4`, `int8`, or `nf4,int8` for both in one run, sharing FP16
blocks). Every cell is one `measure run` into ``ROOT/<cell id>/``; **a cell is done when
``ROOT/<id>/energy-raw.json.gz`` exists**. The executor (``measure.sweep.execute``) writes a cell into
``ROOT/<id>.incomplete/`` and renames it only once its run completed, so a cut-short run never looks done
and the next call measures it again. Cell ids depend only on the cell, never on the grid around it, so
a grid can grow between calls and keep what is measured. Seeds do too (a hash of the id), so a cell
measured again after an interruption reruns the same block orders.

Time: each cell declares what it needs (``need_s``: the block budget plus the fixed cost of loading,
warmup, idle and prefill measurements); the executor starts a cell only while its ``need_s`` fits what
is left of the call's budget, and moves on to later, smaller cells that still fit (as
``benchmarks/campaign.py`` does with its manifest: it is a manifest reader over these functions).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from measure.core.design import BACKENDS, QUANTIZED
from measure.core.record import RAW_NAME

INCOMPLETE = ".incomplete"
DEFAULT_OVERHEAD_S = 60.0  # a run's time beyond its blocks: load, warmup, idle, prefill bursts, quality


@dataclass(frozen=True)
class Cell:
    """One `measure run`: its id (the folder name), arguments (without --out) and time it needs."""

    id: str
    argv: tuple[str, ...]
    need_s: float
    labels: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass
class Plan:
    """What a call would do: cells already done, cells to run in order, cells left for a later call."""

    done: list[Cell]
    run: list[Cell]
    later: list[tuple[Cell, str]]  # with the reason

    order: dict = field(default_factory=dict)  # cell id -> position in the grid

    @property
    def cells(self) -> int:
        return len(self.done) + len(self.run) + len(self.later)


class GridError(ValueError):
    """A grid that cannot be planned (QJ419); the message says which value and why."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-") or "model"


def precision_group(value: str) -> tuple[str, ...]:
    """'nf4,int8' -> ('NF4', 'INT8'); refuses unknown or repeated names."""
    out: list[str] = []
    for name in (p.strip().upper() for p in value.split(",") if p.strip()):
        if name not in QUANTIZED:
            raise GridError(f"unknown precision {name!r} in {value!r}; use nf4, int8 or nf4,int8")
        if name in out:
            raise GridError(f"precision {name} twice in {value!r}")
        out.append(name)
    if not out:
        raise GridError(f"empty precision group {value!r}")
    return tuple(out)


def cell_seed(cell_id: str, base: int = 0) -> int:
    """A seed of the cell alone (stable across grids and calls), offset by the sweep's base seed."""
    return base + int(hashlib.sha256(cell_id.encode()).hexdigest()[:6], 16) % 100_000


def grid(
    sizes: Iterable[str],
    precisions: Iterable[str],
    backends: Iterable[str],
    batch_sizes: Iterable[int],
    *,
    synthetic: bool = True,
    duration_s: float | None = None,
    trials: int | None = None,
    overhead_s: float = DEFAULT_OVERHEAD_S,
    need_s: float | None = None,
    seed: int = 0,
    run_args: Iterable[str] = (),
) -> list[Cell]:
    """The cells of a grid, sizes outermost and batch innermost (so one size's cells run together).

    Each cell runs for --duration DURATION_S, or exactly --trials TRIALS blocks per arm; NEED_S is the
    time one cell is given (default: duration + overhead; required with trials, whose time depends on
    the model). RUN_ARGS are passed to every `measure run` unchanged (e.g. --block-tokens 256)."""
    sizes, groups = list(sizes), [precision_group(p) for p in precisions]
    backends, batches, extra = list(backends), list(batch_sizes), tuple(run_args)
    axes = (("sizes", sizes), ("precisions", groups), ("backends", backends), ("batch sizes", batches))
    for name, axis in axes:
        if not axis:
            raise GridError(f"no {name} given")
    for b in backends:
        if b not in BACKENDS:
            raise GridError(f"unknown backend {b!r}; use eager or static")
    for b in batches:
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise GridError(f"batch size must be a positive integer, not {b!r}")
    if (duration_s is None) == (trials is None):
        raise GridError("give exactly one of a cell duration or a number of trials per cell")
    if need_s is None:
        if duration_s is None:
            raise GridError("with --trials the time a cell needs is not known: give --cell-need-s")
        need_s = duration_s + overhead_s
    for flag in ("--out", "--batch-size", "--backend", "--precisions", "--seed", "--synthetic", "--model"):
        if flag in extra:
            raise GridError(f"{flag} is set by the sweep for every cell; leave it out of the run arguments")
    budget = ("--duration", f"{duration_s:g}") if duration_s is not None else ("--trials", str(trials))
    cells, seen = [], set()
    for size in sizes:
        for group in groups:
            for backend in backends:
                for batch in batches:
                    cid = f"{_slug(size)}-{'+'.join(p.lower() for p in group)}-{backend}-b{batch}"
                    if cid in seen:
                        raise GridError(f"cell {cid} appears twice in the grid")
                    seen.add(cid)
                    argv = ("--synthetic" if synthetic else "--model", size,
                            "--precisions", ",".join(p.lower() for p in group), "--backend", backend,
                            "--batch-size", str(batch), "--seed", str(cell_seed(cid, seed)), *budget, *extra)
                    labels = {"size": size, "precisions": list(group), "backend": backend,
                              "batch_size": batch}
                    cells.append(Cell(cid, argv, float(need_s), labels))
    return cells


def is_done(cell: Cell, root: Path) -> bool:
    return (root / cell.id / RAW_NAME).exists()


def plan(cells: list[Cell], root: Path, budget_s: float,
         done: Callable[[Cell, Path], bool] = is_done) -> Plan:
    """Done cells, then the undone ones in grid order that fit the budget one after another; the rest
    are left for a later call with the reason."""
    out = Plan([], [], [], {c.id: i for i, c in enumerate(cells)})
    left = budget_s
    for cell in cells:
        if done(cell, root):
            out.done.append(cell)
        elif cell.need_s <= left:
            out.run.append(cell)
            left -= cell.need_s
        else:
            out.later.append((cell, f"needs {cell.need_s:g} s, {max(left, 0.0):.1f} s of the budget left"))
    return out


def warnings(cells: list[Cell]) -> list[str]:
    """What a cell will not measure as asked, known before it runs."""
    out = []
    for cell in cells:
        lab = cell.labels
        static_int8 = lab.get("backend") == "static" and "INT8" in lab.get("precisions", ())
        if static_int8 and "--int8-threshold" not in cell.argv:
            out.append(
                f"{cell.id}: LLM.int8() cannot be captured as a CUDA graph, so its INT8 arm will be "
                "unavailable (add --int8-threshold 0 to the run arguments for the capturable INT8, which is "
                "not LLM.int8())"
            )
    return out
