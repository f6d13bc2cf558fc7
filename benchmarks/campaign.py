"""Resumable measurement campaign: runs the not-yet-measured cells of a manifest within a time budget.

    python benchmarks/campaign.py measurements/hopper-campaign/campaign.json --budget-s 560 --out $OUT

A cell is done when its folder holds `energy-raw.json.gz`; a device call runs the undone cells in
manifest order, each only while its `need_s` still fits the budget, so the call ends with whole runs
and the next call (on a checkout holding the committed results) resumes where this one stopped.
Each finished cell is packed into OUT/<cell>.tar at once (what a cut-short call leaves still comes
back). Beside the reports the cell keeps what may confound them: the host CPU, the card's power
limit, persistence mode and clocks before and after, and its clocks once a second during the run
(read with nvidia-smi; nothing is ever set).
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

QUERY = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"


def undone(manifest: dict, root: Path) -> list[dict]:
    """Cells whose folder has no raw record yet, in manifest order."""
    return [c for c in manifest["cells"] if not (root / c["id"] / "energy-raw.json.gz").exists()]


def command(manifest: dict, cell: dict, out_dir: Path) -> list[str]:
    """The `measure run` command line of one cell."""
    args = [*manifest["common_args"], *manifest["protocols"][cell["protocol"]]]
    return [sys.executable, "-m", "measure", "run", "--synthetic", cell["synthetic"],
            "--seed", str(cell["seed"]), *args, "--out", str(out_dir)]


def _capture(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]}: {exc}\n"


def context(path: Path) -> None:
    """Host CPU and the card's power, clock and persistence state, as the tools print them."""
    parts = [
        "$ lscpu", _capture(["lscpu"]),
        "$ nproc", _capture(["nproc"]),
        "$ nvidia-smi -q -d POWER,CLOCK,PERFORMANCE",
        _capture(["nvidia-smi", "-q", "-d", "POWER,CLOCK,PERFORMANCE"]),
        "$ nvidia-smi --query-gpu=name,pci.bus_id,persistence_mode,power.limit,driver_version --format=csv",
        _capture(["nvidia-smi", "--query-gpu=name,pci.bus_id,persistence_mode,power.limit,driver_version",
                  "--format=csv"]),
    ]
    path.write_text("\n".join(parts))


def run_cell(manifest: dict, cell: dict, root: Path, log) -> int:
    """Measure one cell into root/<id>/ with its context, clock log and console output."""
    d = root / cell["id"]
    d.mkdir(parents=True, exist_ok=True)
    argv = command(manifest, cell, d)
    context(d / "context-before.txt")
    t0 = time.time()
    with open(d / "clocks.csv", "w") as clocks, open(d / "log.txt", "w") as console:
        logger = None
        with contextlib.suppress(OSError):  # no nvidia-smi: the run goes on without the clock log
            logger = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv", "-l", "1"],
                                      stdout=clocks, stderr=subprocess.DEVNULL)
        try:
            rc = subprocess.run(argv, stdout=console, stderr=subprocess.STDOUT,
                                timeout=cell["need_s"] + 90).returncode
        except subprocess.TimeoutExpired:
            rc = 124
        if logger:
            logger.terminate()
            logger.wait()
    wall = time.time() - t0
    context(d / "context-after.txt")
    (d / "cell.json").write_text(json.dumps({
        "id": cell["id"], "argv": ["python", *argv[1:-1], d.name], "rc": rc, "wall_s": round(wall, 1),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
    }, indent=1) + "\n")
    print(f"{cell['id']}: rc {rc} in {wall:.0f} s", file=log, flush=True)
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("--budget-s", type=float, default=560.0)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "campaign-out")))
    ap.add_argument("--dry-run", action="store_true", help="list what would run, run nothing")
    a = ap.parse_args(argv)
    manifest = json.loads(a.manifest.read_text())
    root = a.manifest.parent
    start = time.time()
    todo = undone(manifest, root)
    print(f"{len(todo)} of {len(manifest['cells'])} cells to measure", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    for cell in todo:
        left = a.budget_s - (time.time() - start)
        if cell["need_s"] > left:
            print(f"{cell['id']}: needs {cell['need_s']} s, {left:.0f} s left; next call", flush=True)
            continue
        line = " ".join(command(manifest, cell, root / cell["id"]))
        print(f"== {time.strftime('%H:%M:%S')} {cell['id']}: {line}", flush=True)
        if a.dry_run:
            continue
        run_cell(manifest, cell, root, sys.stdout)
        with tarfile.open(a.out / f"{cell['id']}.tar", "w") as tar:
            tar.add(root / cell["id"], arcname=cell["id"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
