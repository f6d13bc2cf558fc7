"""From a raw record to the written reports, each validated: what `run` and `replay` both end with."""

from __future__ import annotations

from pathlib import Path

from measure.codes import problem
from measure.core import record as raw
from measure.core.analysis import analyse, subset
from measure.core.notes import condition_text, findings, note
from measure.core.report import build_report, dumps
from measure.run.options import EXIT_OK, EXIT_PARTIAL, RunResult, out_paths
from schema.parse import MAX_REPORT_BYTES
from schema.problem import Problem
from schema.validate import validate


def write_report(path: Path, report: dict) -> list[Problem]:
    """Write one report; its size over the issue limit (QJ413) and any validation error are returned."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(report)
    path.write_text(text, encoding="utf-8")
    size = len(text.encode())
    found = []
    if size > MAX_REPORT_BYTES:
        found.append(problem("QJ413", f"{path.name} is {size} bytes, over {MAX_REPORT_BYTES}"))
    for p in validate(report):
        if p.severity == "error":
            found.append(Problem(p.code, p.severity, f"{path.name}#{p.path}", p.message, p.hint))
    return found


def reports_from_record(record: dict, out_dir: Path, warnings: list[Problem] | None = None) -> RunResult:
    """Replay the record and write one report per precision."""
    out = raw.replay(record)
    ctx = dict(record["context"])
    source = ctx["measurement_source"]
    warnings = [*(warnings or []), *findings(record, out, analyse(out))]
    ctx["notes"] = {
        p: note(out, p, source, ctx.get("int8_outlier_threshold"), ctx["workload"], ctx.get("int8_outliers"))
        for p in out.arms
    }
    precisions = list(record["options"]["precisions"]) or ["FP16"]
    paths, rows = [], []
    for prec, path in out_paths(out_dir, precisions).items():
        part = subset(out, prec)
        rep = build_report(ctx, part, analyse(part), prec)
        warnings += write_report(path, rep)
        paths.append(path)
        st = (rep.get("statistics") or {}).get("delta_e_pct") or {}
        rows.append(
            {
                "precision": prec,
                "basis": rep["results"]["basis"],
                "energy_per_token_mj": rep["results"]["energy_per_token_mj"],
                "fp16_energy_per_token_mj": rep["results"]["fp16_energy_per_token_mj"],
                "delta_e_pct": st.get("mean", rep["results"]["vs_fp16_energy_pct"]),
                "ci95_half_width_pp": st.get("ci95_half_width_pp"),
                "n_pairs": (rep.get("statistics") or {}).get("n_pairs"),
                "agreement_max_pct": rep["agreement"]["counter_vs_trace_max_pct"],
                "time_split_s": out.time_split_s,
                "note": rep["results"]["note"],
                "condition": condition_text(rep),
            }
        )
    partial = out.interrupted or bool(out.failed) or out.power_error is not None
    return RunResult(EXIT_PARTIAL if partial else EXIT_OK, paths, rows, warnings)
