"""QJ4xx problem codes of the measurement CLI, its coded error, and its findings as schema Problems."""

from __future__ import annotations

from measure.packages import SHADOWED_HINT
from schema.codes import Code, CodedError, lookup
from schema.problem import Problem, problem_in

_CODES = (
    Code(
        "QJ401",
        "error",
        "no CUDA GPU visible",
        "Install a CUDA build of torch and an NVIDIA driver; a reference report was written instead.",
    ),
    Code(
        "QJ402",
        "error",
        "NVML not available",
        "Install nvidia-ml-py and make sure the NVIDIA driver is loaded (nvidia-smi works).",
    ),
    Code(
        "QJ403",
        "error",
        "an arm failed to load or run",
        "Often out of memory: try fewer precisions at once or a smaller model; other arms were kept.",
    ),
    Code(
        "QJ404",
        "error",
        "interrupted",
        "The run was stopped; what was completed was written but is not a measurement. Run it again.",
    ),
    Code(
        "QJ405",
        "warning",
        "cooldown timed out",
        "The GPU did not return to its loaded-idle power in time; close other GPU work and retry.",
    ),
    Code(
        "QJ406",
        "warning",
        "power sampler fell behind",
        "Samples were dropped; lower --sample-rate or free CPU cores.",
    ),
    Code(
        "QJ407",
        "warning",
        "counter and trace energies disagree",
        "The NVML energy counter and the power trace differ by more than the threshold on some block.",
    ),
    Code(
        "QJ408",
        "error",
        "unknown GPU architecture",
        "This GPU name is not in the table; pass --gpu-arch (hopper, ada, ampere, blackwell, turing, volta).",
    ),
    Code("QJ409", "error", "bad option", "Check the option values with `python -m measure run --help`."),
    Code(
        "QJ410",
        "error",
        "model could not be loaded",
        "Check the Hugging Face id or local path, or use --synthetic NAME for a random-init model.",
    ),
    Code(
        "QJ411",
        "warning",
        "energy counter not supported",
        "This GPU has no NVML total-energy counter; energies come from the power trace.",
    ),
    Code(
        "QJ412",
        "warning",
        "instant power field not supported",
        "nvmlDeviceGetPowerUsage was used instead; it may be a 1 s average on this GPU.",
    ),
    Code(
        "QJ413",
        "error",
        "report too large",
        "Use fewer trials (--trials) so the report fits in an issue body.",
    ),
    Code(
        "QJ414",
        "error",
        "power source failed mid-run",
        "NVML stopped answering (driver reset, GPU lost, sampler died); completed blocks were kept but "
        "the report is not a measurement. Check nvidia-smi and run again.",
    ),
    Code(
        "QJ415",
        "warning",
        "energy counter stopped advancing",
        "Windows where the NVML energy counter did not move use the power trace instead; if it persists, "
        "update the driver or report the GPU model.",
    ),
    Code(
        "QJ416",
        "error",
        "raw record unreadable",
        "Pass the energy-raw.json.gz that `measure run` wrote next to its reports, unmodified.",
    ),
    Code(
        "QJ417",
        "warning",
        "raw record not written",
        "The reports were still computed from the samples in memory; free disk space or fix permissions "
        "in --out to keep the raw record next time.",
    ),
    Code(
        "QJ418",
        "error",
        "another package shadows one of quantjoule's",
        SHADOWED_HINT,
    ),
    Code(
        "QJ419",
        "error",
        "sweep grid cannot be planned",
        "Check the grid options (`python -m measure sweep --help`): known sizes, nf4/int8 groups, eager or "
        "static, positive batch sizes, and exactly one of --cell-duration or --trials.",
    ),
    Code(
        "QJ420",
        "warning",
        "sweep cells not measured yet",
        "The budget ran out, a cell was interrupted or its run did not finish; run the same sweep again: "
        "done cells are kept and only the others run.",
    ),
    Code(
        "QJ421",
        "warning",
        "ΔE% interval wider than its target",
        "The report is valid, but a verdict from it detects less (its detectable difference says how much). "
        "More blocks narrow it (a longer --duration, or more --trials); where the message says FP16's time "
        "per token moved between trials, the host's launch speed did, which batch-1 eager decode waits on: "
        "an idle host, or --backend static (CUDA graphs do not wait on launches), keeps it steadier.",
    ),
)


def codes() -> tuple[Code, ...]:
    """Every QJ4xx code, in order."""
    return _CODES


def get(code: str) -> Code:
    return lookup(_CODES, code)


class MeasureError(CodedError):
    """A measurement failure with a QJ4xx code; the CLI prints code, message and hint."""

    registry = _CODES

    def __str__(self) -> str:
        return self.render()


def problem(code: str, message: str, path: str = "") -> Problem:
    """A finding of a run (QJ4xx) as a Problem with the code's registered severity and hint. `path` is
    "" for the run as a whole, or `FILE#POINTER` for a place in a report the run wrote."""
    return problem_in(_CODES, code, message, path)


def line(p: Problem) -> str:
    """A finding as the run's summary prints it: `QJ406: message`, or `FILE: QJ201 /pointer: message`."""
    if not p.path:
        return f"{p.code}: {p.message}"
    file, _, pointer = p.path.partition("#")
    return f"{file}: {p.code} {pointer}: {p.message}"
