"""Resumable measurement campaign: runs the not-yet-measured cells of a manifest within a time budget.

    python -m benchmarks.campaign measurements/hopper-campaign/campaign.json --budget-s 560 --out $OUT
    python -m benchmarks.campaign first.json then.json ...   # the next manifest fills what the first leaves

A manifest names its cells one by one (id, synthetic model, protocol, seed, need_s); everything else is
`measure sweep`'s executor (measure/sweep/execute.py), so the rules are the sweep's: a cell is done when its
folder holds `energy-raw.json.gz`, a device call runs the undone cells in manifest order, each only
while its `need_s` still fits the budget, and a run is renamed into its folder only once its record
shows a finished protocol (a cut-short one stays `<id>.incomplete` and runs again next call). Each cell
is packed into OUT/<cell>.tar as soon as it ends (OUT/<cell>.incomplete.tar for one that did not
finish), so what a cut-short call leaves still comes back. Beside the reports the cell keeps what may
confound them: the host CPU, the card's power limit, persistence mode and clocks before and after, and
its clocks once a second during the run (read with nvidia-smi; nothing is ever set).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from benchmarks.nf4_dispatch import describe
from measure.core.record import RAW_NAME
from measure.sweep.execute import Hooks, record_state, sweep
from measure.sweep.plan import Cell, plan

QUERY = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"
SMI_GPU = "name,pci.bus_id,persistence_mode,power.limit,driver_version"
# section headers of the context files that benchmarks.host_load reads back
NPROC_HEADER = "$ nproc"
STAT_HEADER = "$ head -1 /proc/stat"


def check_protocols(protocols: tuple[str, ...], manifests: list[dict]) -> None:
    """Exit with the known names when a protocol asked for is in none of the manifests."""
    known = {name for m in manifests for name in m["protocols"]}
    unknown = sorted(set(protocols) - known)
    if unknown:
        raise SystemExit(f"unknown protocol(s) {', '.join(unknown)}; "
                         f"the manifest(s) have {', '.join(sorted(known))}")


def cells(manifest: dict, protocols: tuple[str, ...] = ()) -> list[Cell]:
    """The manifest's cells as sweep cells: `measure run` arguments and the time each needs.

    `protocols`, when given, keeps only the cells of those protocols (in manifest order), so a call with
    little time left can run the short static cells before the long eager ones.
    """
    check_protocols(protocols, [manifest])
    return [
        Cell(c["id"], ("--synthetic", c["synthetic"], "--seed", str(c["seed"]), *manifest["common_args"],
                       *manifest["protocols"][c["protocol"]]), float(c["need_s"]))
        for c in manifest["cells"] if not protocols or c["protocol"] in protocols
    ]


def _capture(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]}: {exc}\n"


def _proc(name: str) -> str:
    try:
        return Path(name).read_text()
    except OSError as exc:
        return f"{name}: {exc}\n"


def context(path: Path) -> None:
    """Host CPU and the card's power, clock and persistence state, as the tools print them, and the host's
    CPU time counters, so that before and after tell how much of the cell's CPU time the hypervisor took
    (steal) and how busy the host was (benchmarks.host_load reads them)."""
    parts = [
        "$ lscpu", _capture(["lscpu"]),
        NPROC_HEADER, _capture(["nproc"]),
        STAT_HEADER, _proc("/proc/stat").split("\n", 1)[0] + "\n",
        "$ cat /proc/loadavg", _proc("/proc/loadavg"),
        "$ nvidia-smi -q -d POWER,CLOCK,PERFORMANCE",
        _capture(["nvidia-smi", "-q", "-d", "POWER,CLOCK,PERFORMANCE"]),
        f"$ nvidia-smi --query-gpu={SMI_GPU} --format=csv",
        _capture(["nvidia-smi", f"--query-gpu={SMI_GPU}", "--format=csv"]),
    ]
    path.write_text("\n".join(parts))


CARD_PROBE = ("import torch; p = torch.cuda.get_device_properties(0); "
              "print(p.multi_processor_count, f'{p.major}.{p.minor}')")


def card_props() -> tuple[int, str] | None:
    """(SM count, compute capability) of GPU 0, from torch in a child process (this one never touches
    CUDA), or None without a GPU."""
    try:
        out = subprocess.run([sys.executable, "-c", CARD_PROBE], capture_output=True, text=True, timeout=120)
        sms, cc = out.stdout.split()
        return int(sms), cc
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None


def _last(argv: tuple[str, ...], flag: str, default: str) -> str:
    """The value click keeps for a repeated option: the last one given."""
    values = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]
    return values[-1] if values else default


def nf4_dispatch(cell: Cell, props: tuple[int, str] | None) -> str | None:
    """What bitsandbytes' rule does with this NF4 cell's layers at its batch on this card (the table of
    benchmarks.nf4_dispatch), or None for a cell without NF4 or a host without a GPU."""
    if props is None or "nf4" not in _last(cell.argv, "--precisions", "nf4,int8").split(","):
        return None
    model, batch = _last(cell.argv, "--synthetic", ""), _last(cell.argv, "--batch-size", "1")
    command = f"-m benchmarks.nf4_dispatch --model {model} --batch {batch} --sms {props[0]} --cc {props[1]}"
    try:
        return f"$ {command}\n" + describe([model], [int(batch)], props[0], props[1]) + "\n"
    except (SystemExit, KeyError, ValueError) as exc:  # no bitsandbytes here, or another dispatch
        return f"$ {command}\n{exc}\n"


class CampaignHooks(Hooks):
    """Context before and after each run, a clock log during it, and a tar of the cell once it ends.

    `card` gives the GPU's (SM count, compute capability) once per campaign, for the NF4 dispatch table
    each NF4 cell keeps (`nf4-dispatch.txt`): which layers bitsandbytes dequantizes at that batch."""

    def __init__(self, out: Path, card=card_props):
        self.out = out
        self._card, self._props, self._asked = card, None, False
        self._logger = self._clocks = None

    def before(self, cell: Cell, work: Path) -> None:
        context(work / "context-before.txt")
        if not self._asked:
            self._props, self._asked = self._card(), True
        table = nf4_dispatch(cell, self._props)
        if table is not None:
            (work / "nf4-dispatch.txt").write_text(table, encoding="utf-8")
        self._clocks = open(work / "clocks.csv", "w")  # noqa: SIM115 (closed in after())
        with contextlib.suppress(OSError):
            self._logger = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv", "-l", "1"],
                                            stdout=self._clocks, stderr=subprocess.DEVNULL)

    def after(self, cell: Cell, work: Path, rc: int | None) -> None:
        if self._logger:
            self._logger.terminate()
            self._logger.wait()
            self._logger = None
        self._clocks.close()
        context(work / "context-after.txt")
        print(f"{cell.id}: rc {rc}", flush=True)
        # A run stopped at its limit still writes its raw record (marked interrupted): pack it too.
        if rc == 124 or record_state(work / RAW_NAME) is not None:
            self._pack(work, f"{cell.id}.incomplete")

    def finished(self, cell: Cell, final: Path) -> None:
        self._pack(final, cell.id)

    def _pack(self, folder: Path, name: str) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        with tarfile.open(self.out / f"{name}.tar", "w") as tar:
            tar.add(folder, arcname=name)


def _progress(kind: str, **kw) -> None:
    if kind == "plan":
        p = kw["plan"]
        print(f"{len(p.run) + len(p.later)} of {p.cells} cells to measure", flush=True)
    elif kind == "start":
        print(f"== {kw['cell'].id}: measure run {' '.join(kw['cell'].argv)}", flush=True)
    elif kind == "later":
        print(f"{kw['cell'].id}: {kw['reason']}; next call", flush=True)
    elif kind == "end" and kw["row"].state != "measured":
        print(f"{kw['cell'].id}: {kw['row'].state}: {kw['row'].reason}", flush=True)


def run_manifests(manifests: list[Path], budget_s: float, out: Path, protocols: tuple[str, ...] = (),
                  dry_run: bool = False, runner=None, clock=time.monotonic, progress=_progress,
                  card=card_props) -> list:
    """Each manifest in turn, with what the ones before it left of the budget: a call whose next cell of
    the first manifest does not fit spends the rest on the shorter cells of the next (one budget, one OUT).

    `protocols` keeps, in each manifest, only the named ones it has; a name no manifest has is an error."""
    loaded = [(path, json.loads(path.read_text())) for path in manifests]
    check_protocols(protocols, [m for _, m in loaded])
    start, planned, results = clock(), 0.0, []
    hooks = CampaignHooks(out, card=card)  # one for every manifest: the card is asked once per call
    for path, manifest in loaded:
        own = tuple(p for p in protocols if p in manifest["protocols"])
        if protocols and not own:
            continue
        todo = cells(manifest, own)
        if dry_run:
            p = plan(todo, path.parent, budget_s - planned)
            planned += sum(c.need_s for c in p.run)
            for cell in p.run:
                print(f"would run {cell.id}: measure run {' '.join(cell.argv)}")
            for cell, why in p.later:
                print(f"{cell.id}: {why}; next call")
            continue
        left = budget_s - (clock() - start)
        results.append(sweep(todo, path.parent, left, runner=runner, progress=progress,
                             hooks=hooks, clock=clock))
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", type=Path, nargs="+",
                    help="one or more manifests, run in order within the one budget")
    ap.add_argument("--budget-s", type=float, default=560.0)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "campaign-out")))
    ap.add_argument("--dry-run", action="store_true", help="list what would run, run nothing")
    ap.add_argument("--protocol", action="append", default=[],
                    help="run only the cells of this protocol (repeatable); default: every cell")
    a = ap.parse_args(argv)
    run_manifests(a.manifest, a.budget_s, a.out, tuple(a.protocol), dry_run=a.dry_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
