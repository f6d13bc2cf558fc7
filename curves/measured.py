"""Anchor rows from the project's own measured reports (measurements/<campaign>/ -> reference/anchors-*.csv).

Only reports of the reference condition become rows: eager, batch 1, whole 256-token greedy generations
measured directly (what the published anchors measured), with no planted outlier features. One row per
run: repeats of a size are kept apart, so the fit can weigh each by its own interval and estimate how far
runs scatter beyond it."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import click

from curves.condition import LLM_INT8_THRESHOLD, REFERENCE_CONDITION
from curves.values import get_path
from schema import read_report_file
from schema.records import canonical_sha256
from schema.validate import is_measurement

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED_COLUMNS = (
    "gpu", "arch", "vram_gb", "model", "params_b", "precision", "energy_fp16_j1k", "energy_quant_j1k",
    "n_runs", "n_trials", "energy_quant_std_j1k", "note",
)
EXTRA_COLUMNS = (
    "source", "date", "tool_version", "trials", "weights", "backend", "ci95_half_width_pp", "report",
    "report_sha256", "report_id", "gpu_uuid_sha256",
)
REFERENCE_TOKENS = REFERENCE_CONDITION["generation_tokens"]
BACKENDS = ("eager", "static")
REFERENCE_BATCH = REFERENCE_CONDITION["batch_size"]
COLUMNS = PUBLISHED_COLUMNS + EXTRA_COLUMNS


def _text(value) -> str:
    return "" if value is None else repr(float(value)) if isinstance(value, float) else str(value)


def report_id(report: dict) -> str:
    """Identity of one measured arm of one run: its start time, precision and card. The grader flags a
    report that carries an anchor's identity as self-anchored (the same key in Python and in the browser)."""
    return "|".join(
        str(v or "")
        for v in (
            get_path(report, "timestamp_utc"),
            str(get_path(report, "workload", "precision") or "").upper(),
            get_path(report, "system_under_test", "gpu_uuid_sha256"),
        )
    )


def candidate(report: dict, rel_path: str, backend: str) -> tuple[dict | None, str | None]:
    """(row, None) for a report that can be an anchor of the `backend` curve, else (None, why not)."""
    if not is_measurement(report):
        return None, "not a measurement (basis or source, or validation errors)"
    precision = str(get_path(report, "workload", "precision") or "").upper()
    if precision == "FP16":
        return None, "FP16-only baseline"
    if str(get_path(report, "workload", "backend") or "eager").lower() != backend:
        found = get_path(report, "workload", "backend")
        return None, f"backend {found!r}: only {backend} rows feed the {backend} curve"
    tokens = get_path(report, "measurement", "tokens_per_run")
    if tokens != REFERENCE_TOKENS:
        return None, (
            f"{tokens}-token generations: the curve fits whole {REFERENCE_TOKENS}-token generations "
            "measured directly (a reconstruction from shorter ones is not what the anchors measured)"
        )
    if get_path(report, "workload", "outlier_plant") is not None:
        return None, (
            "planted outlier features (--outlier-dims): a sensitivity condition, not the weights the curve's "
            "anchors measured"
        )
    threshold = get_path(report, "workload", "int8_outlier_threshold")
    if precision == "INT8" and threshold is not None and float(threshold) != LLM_INT8_THRESHOLD:
        return None, (
            f"llm_int8_threshold {threshold}: the curve fits LLM.int8() (threshold "
            f"{LLM_INT8_THRESHOLD:g}, with its outlier decomposition)"
        )
    chunk = get_path(report, "protocol", "chunk_tokens")
    if chunk is not None:
        # the same quantity by design; the GPU check so far (three cells, |z| <= 1.41) rules out a
        # chunking bias only down to about 10 pp, too coarse to let these runs move the reference
        return None, (
            f"generations made in {chunk}-token chunks: not an anchor; chunked runs agree with whole ones "
            "only to about 10 pp so far (measure/README.md, \"Chunked pairing\")"
        )
    batch = get_path(report, "workload", "batch_size")
    if batch not in (None, REFERENCE_BATCH):
        return None, f"batch {batch}: the curve fits batch {REFERENCE_BATCH}"
    stats = get_path(report, "statistics", "delta_e_pct") or {}
    n_pairs = get_path(report, "statistics", "n_pairs")
    weights = get_path(report, "workload", "weights")
    row = {
        "gpu": get_path(report, "system_under_test", "gpu"),
        "arch": str(get_path(report, "system_under_test", "gpu_arch") or "").lower(),
        "vram_gb": get_path(report, "system_under_test", "memory_total_gb"),
        "model": get_path(report, "workload", "model_name"),
        "params_b": get_path(report, "workload", "params_b"),
        "precision": precision,
        # The report's own per-token energies, so the row's ΔE% is the report's vs_fp16_energy_pct.
        "energy_fp16_j1k": get_path(report, "results", "fp16_energy_per_token_mj"),
        "energy_quant_j1k": get_path(report, "results", "energy_per_token_mj"),
        "n_runs": n_pairs,
        "n_trials": n_pairs,
        "energy_quant_std_j1k": None,
        "note": (
            f"{weights} weights; {n_pairs} paired blocks, paired-block mean dE {stats.get('mean')} % "
            f"(CI95 {stats.get('ci95_low')} to {stats.get('ci95_high')}); row dE is the ratio of totals"
        ),
        "source": None,
        "date": str(get_path(report, "timestamp_utc") or "")[:10],
        "tool_version": get_path(report, "tool", "version"),
        "trials": n_pairs,
        "weights": weights,
        "backend": backend,
        "ci95_half_width_pp": stats.get("ci95_half_width_pp"),
        "report": rel_path,
        "report_sha256": canonical_sha256(report),
        "report_id": report_id(report),
        "gpu_uuid_sha256": get_path(report, "system_under_test", "gpu_uuid_sha256"),
    }
    return row, None


def order_rows(candidates: list[dict]) -> list[dict]:
    """Every run is a row, in a fixed order (repeats are not pooled: the fit weighs each by its interval)."""
    return sorted(candidates, key=lambda r: (float(r["params_b"]), r["model"], r["precision"], r["report"]))


def build_csv(
    folder: Path, source: str, backend: str = "eager", root: Path = ROOT, pattern: str = "*/energy*.json"
) -> tuple[str, list]:
    """(CSV text, [(report path, why skipped)]) from the reports under `folder` matching `pattern`."""
    candidates, skipped = [], []
    for path in sorted(Path(folder).glob(pattern)):
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        report, _problems = read_report_file(path)
        found = str(get_path(report, "workload", "backend") or "eager").lower()
        # every fitted backend feeds its own curve; `backend` is the one a report of no stated backend means
        as_backend = found if found in BACKENDS else backend
        row, why = (None, "unreadable report") if report is None else candidate(report, rel, as_backend)
        if row is None:
            skipped.append((rel, why))
            continue
        candidates.append({**row, "source": source})
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in order_rows(candidates):
        writer.writerow({k: _text(v) for k, v in row.items()})
    return buf.getvalue(), sorted(skipped)


# the project's own measured source: its reports, its label and the anchor file it writes (checkout paths)
DEFAULT_REPORTS = "measurements/hopper-campaign"
DEFAULT_SOURCE = "quantjoule-hopper"
DEFAULT_OUT = "reference/anchors-quantjoule-hopper.csv"


@click.command()
@click.option("--reports", "folder", default=DEFAULT_REPORTS, show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Folder of measured reports.")
@click.option("--pattern", default="*/energy*.json", show_default=True, help="Reports under --reports.")
@click.option("--source", default=DEFAULT_SOURCE, show_default=True, help="Source label of the rows.")
@click.option("--out", "out_path", default=DEFAULT_OUT, show_default=True,
              type=click.Path(dir_okay=False, path_type=Path), help="CSV to write.")
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 when --out is not current.")
def main(folder: Path, pattern: str, source: str, out_path: Path, check_only: bool) -> None:
    """Write the anchor rows of the project's own measured reports (one row per run and precision)."""
    if not folder.is_dir():
        click.echo(f"QJ312 error: no report folder {folder}\n  hint: pass --reports PATH", err=True)
        sys.exit(2)
    try:  # the report paths in the rows are relative to the checkout it runs in, as --reports and --out are
        text, skipped = build_csv(folder, source, root=Path.cwd(), pattern=pattern)
    except ValueError:
        click.echo(f"QJ312 error: {folder} is outside this folder ({Path.cwd()}), so its reports have no "
                   "path in the checkout\n  hint: run python -m curves.measured from the checkout's root",
                   err=True)
        sys.exit(2)
    for rel, why in skipped:
        click.echo(f"skipped {rel}: {why}")
    if check_only:
        current = out_path.read_text(encoding="utf-8") if out_path.is_file() else None
        if current != text:
            click.echo(f"QJ311 error: {out_path} differs from the reports in {folder}\n"
                       "  hint: run python -m curves.measured, then python -m bot fit", err=True)
            sys.exit(1)
        click.echo(f"{out_path} is current ({text.count(chr(10)) - 1} rows)")
        return
    out_path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {out_path} ({text.count(chr(10)) - 1} rows)")


if __name__ == "__main__":
    main()
