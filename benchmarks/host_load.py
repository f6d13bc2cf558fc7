"""How much of a cell's host CPU time a hypervisor took (steal) and how busy the host was (no GPU needed).

Batch-1 eager decode waits on the host's kernel launches, so a host that loses CPU time makes each
generation slower and, when the loss comes and goes, jittery (benchmarks.block_noise measures that jitter).
A virtual machine's kernel counts the time its vCPUs were ready but not run as `steal` in the first line
of /proc/stat (proc(5): user nice system idle iowait irq softirq steal guest guest_nice, in USER_HZ ticks).
benchmarks.campaign writes that line into each cell's `context-before.txt` and `context-after.txt`; the
difference over the cell gives, as a share of all CPU time of all cores in between, steal and busy (user +
nice + system + irq + softirq), and the elapsed seconds the counters span. Cells from before the line was
recorded say so. Beside them, each run's FP16 per-generation jitter from benchmarks.block_noise, so that a
reader can see whether the jittery hosts are the ones whose CPU was stolen.

    python -m benchmarks.host_load measurements/hopper-campaign measurements/hopper-batch
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.block_noise import collect as jitter_rows
from benchmarks.campaign import NPROC_HEADER, STAT_HEADER

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
BUSY = ("user", "nice", "system", "irq", "softirq")
USER_HZ = 100  # the tick /proc/stat counts in on Linux (sysconf(_SC_CLK_TCK))


def _after(text: str, header: str) -> str | None:
    """The line after a context file's `header` line (what that command printed first), or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == header:
            return lines[i + 1]
    return None


def cpu_counters(text: str) -> dict[str, int] | None:
    """The aggregate `cpu` line's counters from a context file's `$ head -1 /proc/stat` section, or None."""
    parts = (_after(text, STAT_HEADER) or "").split()
    if len(parts) >= 1 + len(FIELDS) and parts[0] == "cpu" and all(p.isdigit() for p in parts[1:]):
        return dict(zip(FIELDS, (int(p) for p in parts[1:]), strict=False))
    return None


def share(before: dict[str, int], after: dict[str, int], cpus: int) -> dict | None:
    """Steal, busy and iowait as % of all CPU time between two snapshots, and the seconds between them."""
    delta = {k: after[k] - before[k] for k in FIELDS}
    total = sum(delta.values())
    if total <= 0 or min(delta.values()) < 0:
        return None  # a counter went backwards: not one boot, or not one host
    return {
        "steal_pct": round(100 * delta["steal"] / total, 2),
        "busy_pct": round(100 * sum(delta[k] for k in BUSY) / total, 2),
        "iowait_pct": round(100 * delta["iowait"] / total, 2),
        "elapsed_s": round(total / USER_HZ / max(cpus, 1), 1),
    }


def _cpus(text: str) -> int:
    line = (_after(text, NPROC_HEADER) or "").strip()
    return int(line) if line.isdigit() else 1


def collect(folders: list[Path]) -> list[dict]:
    """One row per cell that has both context files, with the FP16 jitter of its quantized arms."""
    jitter: dict[str, list[str]] = {}
    for row in jitter_rows(folders):
        jitter.setdefault(row["run"], []).append(f"{row['fp16_jitter_pct']} ({row['arm']})")
    rows = []
    for folder in folders:
        for before_path in sorted(folder.glob("*/context-before.txt")):
            cell = before_path.parent
            after_path = cell / "context-after.txt"
            if not after_path.exists():
                continue
            before_text, after_text = before_path.read_text(), after_path.read_text()
            before, after = cpu_counters(before_text), cpu_counters(after_text)
            got = share(before, after, _cpus(before_text)) if before and after else None
            run = f"{folder.name}/{cell.name}"
            rows.append({"run": run, **(got or {"not_recorded": True}),
                         "fp16_jitter_pct": ", ".join(jitter.get(run, [])) or "—"})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| run | steal % | busy % | iowait % | s between | FP16 jitter % |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r.get("not_recorded"):
            lines.append(f"| {r['run']} | not recorded | | | | {r['fp16_jitter_pct']} |")
        else:
            lines.append(f"| {r['run']} | {r['steal_pct']} | {r['busy_pct']} | {r['iowait_pct']} | "
                         f"{r['elapsed_s']} | {r['fp16_jitter_pct']} |")
    return "\n".join(lines)


def footer(rows: list[dict]) -> str:
    recorded = [r for r in rows if not r.get("not_recorded")]
    if not recorded:
        return (f"{len(rows)} cell(s); none has /proc/stat in both context files (cells measured before "
                "the campaign recorded it)")
    worst = max(recorded, key=lambda r: r["steal_pct"])
    return (f"{len(recorded)} of {len(rows)} cell(s) recorded; most steal: {worst['run']} "
            f"{worst['steal_pct']} % of its CPU time")


def main(argv: list[str] | None = None) -> int:
    from benchmarks.folder_table import run

    return run(__doc__.split("\n\n")[0], argv, collect, table, footer)


if __name__ == "__main__":
    raise SystemExit(main())
