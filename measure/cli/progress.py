"""`measure run`'s console: a progress bar per arm and for the run, the summary table, and what Ctrl-C and
SIGTERM do."""

from __future__ import annotations

import os
import signal
import threading
import time

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from measure.codes import line
from measure.run.options import RunResult

LOG_EVERY_S = 10.0


class Bars:
    """One bar per arm (loading, then the blocks it ran) and one for the run (blocks of --trials, or
    percent of the --duration budget), each with an ETA."""

    def __init__(self, progress: Progress, arms: list[str], trials: int | None, duration_s: float | None,
                 log: Console | None = None):
        self.p = progress
        # a console that is not a terminal (a log file, a pipe) shows no live bars: plain lines instead,
        # each arm's first block and then at most one line per LOG_EVERY_S
        self.log = log
        self.logged_at: float | None = None
        self.logged_arms: set[str] = set()
        self.trials = trials
        self.duration_s = duration_s
        self.n_quant = len(arms) - 1
        self.tasks = {a: progress.add_task(f"{a:5s} loading", total=None) for a in arms}
        self.counts = dict.fromkeys(arms, 0)
        label = "blocks" if trials else "budget %"
        self.blocks = progress.add_task(label, total=trials * self.n_quant if trials else 100)

    def _arm_total(self, arm: str) -> int | None:
        # with a --duration budget an arm's block count is not known in advance (allocation decides)
        if not self.trials:
            return None
        return self.trials * (self.n_quant if arm == "FP16" else 1)

    def __call__(self, kind: str, **kw) -> None:
        if kind == "loaded":
            arm = kw["arm"]
            total = self._arm_total(arm)
            self.p.update(self.tasks[arm], description=f"{arm:5s} blocks", total=total, completed=0)
        elif kind == "load_failed":
            self.p.update(self.tasks[kw["arm"]], description=f"{kw['arm']:5s} FAILED", total=1, completed=1)
        elif kind == "block":
            planned = kw.get("trials") or (self.trials * self.n_quant if self.trials else None)
            if planned:
                done, total = kw["block"], planned
            else:
                done, total = min(100.0, 100 * kw["elapsed_s"] / self.duration_s), 100
            self.p.update(self.blocks, completed=done, total=total)
            self._log_block(kw, done, total, planned)
            for arm in kw.get("arms", ()):
                if arm in self.tasks and self.p.tasks[self.tasks[arm]].description.endswith("blocks"):
                    self.counts[arm] += 1
                    self.p.update(self.tasks[arm], completed=self.counts[arm])

    def _log_block(self, kw: dict, done, total, planned) -> None:
        now = time.monotonic()
        first = set(kw.get("arms", ())) - self.logged_arms  # each arm's first block is always shown
        recent = self.logged_at is not None and now - self.logged_at < LOG_EVERY_S
        if self.log is None or (recent and not first):
            return
        self.logged_at = now
        self.logged_arms |= set(kw.get("arms", ()))
        where = f"{done}/{total} blocks" if planned else f"{done:.0f} % of the {self.duration_s:.0f} s budget"
        arms = " vs ".join(kw.get("arms", ()))
        line = f"block {kw['block']} done ({arms}, {kw['elapsed_s']:.0f} s): {where}"
        self.log.print(line, highlight=False)


def summary(console: Console, result: RunResult) -> None:
    if not result.rows:
        for w in result.warnings:
            console.print(f"[yellow]{line(w)}[/yellow]")
        return
    table = Table(title="quantjoule run")
    for col in ("arm", "basis", "mJ/tok", "FP16 mJ/tok", "dE% paired", "CI95 pp", "blocks", "ctr-trace %"):
        table.add_column(col)
    for r in result.rows:

        def f(v, fmt="{:.2f}"):
            return "-" if v is None else fmt.format(v)

        table.add_row(
            r["precision"],
            r["basis"],
            f(r.get("energy_per_token_mj")),
            f(r.get("fp16_energy_per_token_mj")),
            f(r.get("delta_e_pct"), "{:+.1f}"),
            f(r.get("ci95_half_width_pp"), "{:.1f}"),
            f(r.get("n_pairs"), "{}"),
            f(r.get("agreement_max_pct")),
        )
    console.print(table)
    for r in result.rows:
        if r.get("condition"):
            console.print(f"condition: {r['condition']}")
    if result.rows and result.rows[0].get("time_split_s"):
        split = ", ".join(f"{k} {v:.0f} s" for k, v in result.rows[0]["time_split_s"].items())
        console.print(f"time: {split}")
    for w in result.warnings:
        console.print(f"[yellow]{line(w)}[/yellow]")
    for p in result.paths:
        console.print(f"wrote {p}")
    if result.record:
        console.print(f"wrote {result.record} (raw record: `python -m measure replay` rebuilds the reports)")


STILL_WRITING = (b"QJ404: stopping; still writing the partial report of what was measured. "
                 b"Interrupt once more to abandon it (nothing more is written).\n")


class Interrupts:
    """Inside `with`: the first Ctrl-C or SIGTERM raises KeyboardInterrupt, so the blocks stop, the sampler
    is stopped and what was completed is written as a partial report. A second one while that happens is
    noted and ignored (people press Ctrl-C twice, and a second KeyboardInterrupt would lose the raw
    record); a third raises again and abandons the writing. Outside the main thread it does nothing."""

    def __init__(self):
        self.count = 0
        self._previous: dict[int, object] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> bool:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
        return False

    def _handle(self, signum, frame) -> None:
        self.count += 1
        if self.count == 2:
            os.write(2, STILL_WRITING)  # not the rich console: its lock may be held by the code interrupted
            return
        raise KeyboardInterrupt

    @property
    def abandoned(self) -> bool:
        return self.count >= 3
