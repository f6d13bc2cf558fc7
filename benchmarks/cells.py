"""One row per committed campaign report: the figures the measurement READMEs quote, read from the files.

For each cell folder under the given measurement folders and each report in it (`energy.json`, or
`energy-nf4.json` / `energy-int8.json` of a cell that ran both), the row holds: the quantized precision,
backend and batch, the card (first 8 hex digits of the GPU UUID's sha256) and its name, the report's
timestamp, the cell's wall time (`cell.json`), ΔE% with its 95 % interval and paired blocks, each arm's
tokens per second and mean power, FP16's share of its weight-read roofline, and the SM clock's median over
the `clocks.csv` samples taken while the card drew more than LOADED_W (eager batch-1 cells sit near
their ~125 W floor, so they often have none: the column then says so). A README table is then a command's
output, not a transcription:

    python -m benchmarks.cells measurements/hopper-batch
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

REPORTS = ("energy.json", "energy-nf4.json", "energy-int8.json")
LOADED_W = 180.0  # above every committed card's loaded-idle floor (~120-136 W), below any decode under load
SM_COLUMN, POWER_COLUMN = "clocks.current.sm [MHz]", "power.draw [W]"


def _number(text: str | None) -> float | None:
    """'1980 MHz' or '121.43 W' as a float; None for '[N/A]' or an empty field."""
    try:
        return float((text or "").split()[0])
    except (IndexError, ValueError):
        return None


def sm_median_mhz(clocks: Path, loaded_w: float = LOADED_W) -> float | None:
    """The SM clock's median over the samples drawn above `loaded_w`, or None without such samples."""
    if not clocks.exists():
        return None
    with clocks.open(newline="") as f:
        rows = list(csv.DictReader(f, skipinitialspace=True))
    sm = [_number(r.get(SM_COLUMN)) for r in rows if (_number(r.get(POWER_COLUMN)) or 0.0) > loaded_w]
    sm = [v for v in sm if v is not None]
    return statistics.median(sm) if sm else None


def cell_facts(cell: Path) -> dict:
    """What a cell's reports share: its wall time (`cell.json`) and the SM clock under load (`clocks.csv`)."""
    meta = json.loads((cell / "cell.json").read_text()) if (cell / "cell.json").exists() else {}
    return {"wall_s": meta.get("wall_s"), "sm_mhz_loaded": sm_median_mhz(cell / "clocks.csv")}


def row(report_path: Path, facts: dict) -> dict:
    """The figures of one report, with its cell's `cell_facts`."""
    rep = json.loads(report_path.read_text())
    cell = report_path.parent
    work, sut, arms = rep["workload"], rep["system_under_test"], rep["arms"]
    quant = work["precision"]
    stats = rep["statistics"]["delta_e_pct"]
    fp16, q = arms.get("FP16", {}), arms.get(quant, {})
    roofline = fp16.get("roofline_achieved_fraction")
    return {
        "run": f"{cell.parent.name}/{cell.name}",
        "report": report_path.name,
        "precision": quant,
        "int8_threshold": work.get("int8_outlier_threshold"),
        "backend": work.get("backend"),
        "batch": work.get("batch_size", 1),
        "chunk_tokens": rep.get("protocol", {}).get("chunk_tokens"),
        "card": (sut.get("gpu_uuid_sha256") or "")[:8] or None,
        "gpu": sut.get("gpu"),
        "timestamp_utc": rep.get("timestamp_utc"),
        "wall_s": facts["wall_s"],
        "delta_e_pct": rep["results"].get("vs_fp16_energy_pct"),
        "ci95_pp": stats.get("ci95_half_width_pp"),
        "blocks": rep["statistics"].get("n_pairs"),
        "fp16_tok_s": fp16.get("throughput_tokens_per_s"),
        "fp16_w": fp16.get("mean_power_w"),
        "quant_tok_s": q.get("throughput_tokens_per_s"),
        "quant_w": q.get("mean_power_w"),
        "fp16_roofline_pct": None if roofline is None else round(100 * roofline, 1),
        "sm_mhz_loaded": facts["sm_mhz_loaded"],
    }


def collect(folders: list[Path]) -> list[dict]:
    """Every report of every cell folder under `folders`, in folder and name order; each cell's shared
    files are read once, however many reports it holds."""
    rows = []
    for folder in folders:
        for cell in sorted(p for p in folder.iterdir() if p.is_dir()):
            reports = [cell / name for name in REPORTS if (cell / name).exists()]
            if reports:
                facts = cell_facts(cell)
                rows.extend(row(path, facts) for path in reports)
    return rows


def condition(r: dict) -> str:
    """A row's condition as the tables print it: "NF4 eager b1", with " t0" for LLM.int8() at threshold 0
    and " chunks of K" for chunked generations (shared with benchmarks.ci_budget)."""
    t0 = " t0" if r.get("int8_threshold") == 0 else ""
    chunks = f" chunks of {r['chunk_tokens']}" if r.get("chunk_tokens") else ""
    return f"{r['precision']}{t0} {r['backend']} b{r['batch']}{chunks}"


def _f(value, fmt: str) -> str:
    return "—" if value is None else fmt.format(value)


def table(rows: list[dict]) -> str:
    lines = ["| run | condition | card | wall s | dE% ± CI95 (blocks) | FP16 tok/s, W | quantized tok/s, W "
             "| FP16 roofline | SM MHz loaded |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        cond = condition(r)
        lines.append(
            f"| {r['run']} | {cond} | {r['card'] or '—'} | {_f(r['wall_s'], '{:.0f}')} | "
            f"{_f(r['delta_e_pct'], '{:+.1f}')} ± {_f(r['ci95_pp'], '{:.1f}')} ({_f(r['blocks'], '{}')}) | "
            f"{_f(r['fp16_tok_s'], '{:.0f}')}, {_f(r['fp16_w'], '{:.0f}')} | "
            f"{_f(r['quant_tok_s'], '{:.0f}')}, {_f(r['quant_w'], '{:.0f}')} | "
            f"{_f(r['fp16_roofline_pct'], '{:.1f} %')} | {_f(r['sm_mhz_loaded'], '{:.0f}')} |")
    return "\n".join(lines)


def footer(rows: list[dict]) -> str:
    cards = sorted({f"{r['card']} ({r['gpu']})" for r in rows if r["card"]})
    return f"{len(rows)} report(s) on {len(cards)} card(s): " + ", ".join(cards)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.folder_table import run

    return run(__doc__.split("\n\n")[0], argv, collect, table, footer)


if __name__ == "__main__":
    raise SystemExit(main())
