"""The registry shape (Code, CodedError) and the report codes QJ0xx-QJ2xx; imports none of our packages."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning")


@dataclass(frozen=True)
class Code:
    code: str
    severity: str  # "error" | "warning"
    title: str
    hint: str


_CODES = (
    # QJ0xx: reading the text into a JSON object.
    Code("QJ001", "error", "report is empty",
         "Paste the whole energy.json written by `python -m measure run`."),
    Code("QJ002", "error", "report is too large",
         "A report must be at most 60,000 bytes so it fits in one issue; run fewer trials."),
    Code("QJ003", "error", "report is not UTF-8 text",
         "Save the file as UTF-8 JSON text; binary or other encodings cannot be read."),
    Code("QJ004", "error", "NaN or Infinity literal",
         "JSON has no NaN/Infinity; write null for a value that is not available."),
    Code("QJ005", "error", "not valid JSON",
         "Fix the syntax at the line and column shown (a missing comma, quote or bracket is typical)."),
    Code("QJ006", "error", "duplicate key",
         "Each key may appear once per object; parsers disagree on which copy wins."),
    Code("QJ007", "error", "nesting too deep",
         "A report nests a few levels deep; remove the deeply nested value."),
    Code("QJ008", "error", "top level is not an object",
         "The report must be one JSON object `{...}`, not a list or a bare value."),
    Code("QJ009", "error", "schema_version missing",
         "Add \"schema_version\": \"quantjoule-energy/2.0\" (or the legacy version of the file)."),
    Code("QJ010", "error", "unknown schema_version",
         "Readable versions: quantjoule-energy/2.0, ecocompute-energy/1.0, ecocompute-energy/1.1."),
    Code("QJ011", "error", "file cannot be read",
         "Check the path: it must name an existing, readable file (not a directory)."),
    Code("QJ012", "error", "number outside the range every reader agrees on",
         "Integers must lie within +/-9,007,199,254,740,991 (2^53 - 1) and non-zero numbers be at least "
         "2.2e-308 in magnitude, so Python and a browser read the same value; check the units."),
    # QJ1xx: JSON Schema violations (energy-2.0.schema.json, or the legacy draft-07 schema).
    Code("QJ101", "error", "required field missing",
         "Add the field; write null where the schema allows a value to be unavailable."),
    Code("QJ102", "error", "wrong type",
         "Use the JSON type the schema names (number, integer, string, object, array, null)."),
    Code("QJ103", "error", "value not allowed",
         "Use one of the values listed in the message (names are case-sensitive)."),
    Code("QJ104", "error", "fixed value differs",
         "This field has one allowed value (e.g. certified_benchmark_result is always false)."),
    Code("QJ105", "error", "number out of range",
         "Energies, powers, durations and token counts must lie in the range shown in the message."),
    Code("QJ106", "error", "unexpected field",
         "Remove the field or fix its spelling; free-form extras belong in provenance."),
    Code("QJ107", "error", "text has the wrong form",
         "Match the form shown (e.g. timestamps like 2026-12-02T13:00:00Z, sha256 as 64 hex digits)."),
    Code("QJ108", "error", "wrong number of items",
         "Check the list or object size against the message (e.g. each block runs each arm once)."),
    Code("QJ109", "error", "matches none of the allowed shapes",
         "Use one of the shapes listed in schema/README.md for this block."),
    # QJ2xx: semantic checks on schema-valid reports.
    Code("QJ201", "error", "basis and measurement_source disagree",
         "basis measured needs an NVML source (nvml-energy-counter, nvml-power-trace; legacy direct-nvml)."),
    Code("QJ202", "error", "not a measurement but claims basis measured",
         "Illustrative, synthetic, simulated or dataset values are never measurements; fix the basis."),
    Code("QJ203", "error", "energy change disagrees with the two energies",
         "vs_fp16_energy_pct must equal (energy_per_token_mj - fp16_energy_per_token_mj) / fp16 * 100."),
    Code("QJ204", "error", "energy per token disagrees with total energy / tokens",
         "energy_per_token_mj must equal total_energy_joules / tokens_generated * 1000."),
    Code("QJ205", "error", "average power x duration disagrees with total energy",
         "avg_power_watts * duration_s must match total_energy_joules; check the units (W, s, J)."),
    Code("QJ206", "error", "number is not finite",
         "A number overflowed to infinity; write a finite value or null."),
    Code("QJ207", "error", "energy, power, duration or tokens not positive",
         "Energies, powers, durations and token counts of a run are greater than zero."),
    Code("QJ208", "error", "physically implausible value",
         "The value is beyond what the card can do; check the units and the GPU's power limit."),
    Code("QJ209", "warning", "power / throughput disagrees with energy per token",
         "avg_power_watts / throughput_tokens_per_s * 1000 should be close to energy_per_token_mj."),
    Code("QJ210", "warning", "energy counter and power trace disagree",
         "The two NVML readings differ beyond the threshold; the sampler may have missed samples."),
    Code("QJ211", "error", "params_b disagrees with the named model",
         "params_b is the parameter count in billions of the model named; count it from the loaded model."),
    Code("QJ212", "error", "unknown GPU architecture",
         "gpu_arch is one of: ampere, ada, blackwell, hopper, turing, volta (lower case)."),
    Code("QJ213", "error", "statistics disagree with the trials",
         "n_pairs, protocol.trials and the complete blocks in trials must agree; low <= median <= high."),
    Code("QJ214", "error", "FP16 baseline fields disagree with the precision",
         "An FP16 report has null fp16_*/vs_fp16_* fields; a quantized one carries its FP16 baseline."),
    Code("QJ215", "error", "per-trial records disagree with the results",
         "results totals are sums over the ok trials of the report's precision; the FP16 baseline likewise."),
    Code("QJ216", "error", "arms block disagrees with the results",
         "arms.<PRECISION> and arms.FP16 energies per token must match the results fields."),
    Code("QJ217", "error", "a value the basis needs is null",
         "A measured report carries its energies, tokens and power; a reference one its value."),
    Code("QJ218", "error", "gpu_arch disagrees with the GPU name",
         "gpu_arch follows from system_under_test.gpu by the table `measure` uses (schema/gpus.py); write "
         "the architecture of the card that was measured."),
    Code("QJ219", "error", "energies too coarse to check the energy change",
         "Give energy_per_token_mj and fp16_energy_per_token_mj with the digits `measure` writes, so their "
         "rounding fixes vs_fp16_energy_pct to within 1 percentage point."),
    Code("QJ220", "error", "legacy report claims measured without a measurement's evidence",
         "A measured legacy report carries its total energy, tokens, average power, throughput, a power "
         "sample rate and the software it ran on, all agreeing; otherwise set basis to what it is."),
    Code("QJ221", "error", "timestamp is not a real time or lies in the future",
         "timestamp_utc is when the run finished: a valid UTC date and time (2026-12-02T13:00:00Z), no "
         "later than the submission."),
    Code("QJ222", "error", "energy counter and power trace disagree beyond 5 %",
         "In a measured report each trial's counter and trace energies agree within 5 %; a larger gap "
         "means a broken sampler or counter. Run the measurement again."),
)


def codes() -> tuple[Code, ...]:
    """The report codes owned here (QJ0xx, QJ1xx, QJ2xx), in order."""
    return _CODES


def lookup(registry: tuple[Code, ...], code: str) -> Code:
    """The code `code` of one package's registry; KeyError when it is not there."""
    for c in registry:
        if c.code == code:
            return c
    raise KeyError(code)


def get(code: str) -> Code:
    """The registered report code `code`; KeyError when it is not one of this module's."""
    return lookup(_CODES, code)


class CodedError(Exception):
    """A bad input carrying its problem code and a hint (CLIs print `render()`, never a traceback).
    Subclasses name the registry their codes come from."""

    registry: tuple[Code, ...] = ()

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint if hint is not None else lookup(self.registry, code).hint

    def render(self) -> str:
        return f"{self.code}: {self.message}\n  hint: {self.hint}"
