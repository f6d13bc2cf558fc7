"""QJ3xx problem codes of grading and curve fitting, in the shared registry shape."""

from __future__ import annotations

from schema.codes import Code, CodedError

CODES: tuple[Code, ...] = (
    Code(
        "QJ301",
        "warning",
        "no reference curve for this GPU architecture",
        "Submit it anyway: it is recorded ungraded and can seed a curve for this architecture.",
    ),
    Code(
        "QJ302",
        "warning",
        "no reference curve for this backend",
        "Reference curves are measured with the eager backend; rerun with --backend eager to be graded.",
    ),
    Code(
        "QJ303",
        "warning",
        "not a measurement, so not graded",
        "Only results.basis 'measured' from an NVML measurement_source is graded; run `measure run` on a GPU",
    ),
    Code(
        "QJ304",
        "warning",
        "FP16-only baseline, nothing to grade",
        "Grading compares a quantized precision with its FP16 baseline; measure NF4 or INT8 as well.",
    ),
    Code(
        "QJ305",
        "warning",
        "model size missing or not positive",
        "Set workload.params_b to the parameter count of the loaded model, in billions.",
    ),
    Code(
        "QJ306",
        "warning",
        "energy change vs FP16 missing or not finite",
        "results.vs_fp16_energy_pct must hold the measured ΔE% against the same session's FP16 run.",
    ),
    Code(
        "QJ307",
        "warning",
        "report has validation errors, so not graded",
        "Fix the error problems listed above, then check the file again.",
    ),
    Code(
        "QJ308",
        "warning",
        "precision has no reference curve",
        "Reference curves exist for NF4 and INT8 (bitsandbytes) only.",
    ),
    Code(
        "QJ309",
        "warning",
        "measured under another condition than the curve",
        "Curves grade batch-1 greedy decoding of whole 256-token generations; measure with the defaults "
        "(--tokens 256, --block-tokens 256, batch 1).",
    ),
    Code(
        "QJ310",
        "error",
        "curves file unreadable",
        "Regenerate it with `python -m bot fit`, or pass --curves PATH to a valid curves.json.",
    ),
    Code(
        "QJ311",
        "error",
        "curves file is not current",
        "Run `python -m bot fit` and commit reference/curves.json.",
    ),
    Code(
        "QJ312",
        "error",
        "anchors file unreadable",
        "Pass --anchors PATH to a CSV with the columns of reference/anchors.csv.",
    ),
    Code(
        "QJ313",
        "error",
        "anchors row invalid",
        "Each row needs gpu, arch, model, a positive params_b, precision and two positive energies.",
    ),
)

def codes() -> tuple[Code, ...]:
    """Every QJ3xx code, gathered by problem_codes.all_codes() into the shared table."""
    return CODES


class CurvesError(CodedError):
    """A bad input to fitting or grading, carrying its code and a hint (rendered, never a traceback)."""

    registry = CODES
