"""Semantic checks shared by v2 and legacy reports: basis vs source, arithmetic, plausibility, model, arch."""

from __future__ import annotations

import math
import re

from schema import limits
from schema.gpus import arch_for
from schema.models import KNOWN_ARCHS, lookup_model
from schema.parse import SCHEMA_V2
from schema.problem import Problem, problem
from schema.text import skeleton

NVML_SOURCES_V2 = ("nvml-energy-counter", "nvml-power-trace")
NVML_SOURCE_LEGACY = "direct-nvml"
NOT_MEASURED_SOURCES_V2 = ("reference-dataset", "simulated")
# Free-text legacy sources that name something other than a measurement on this GPU. Matched against
# schema.text.skeleton of the text (NFKC, case folded, invisibles dropped, look-alike letters mapped), so a
# zero-width space or a Cyrillic letter does not hide a word.
NOT_MEASURED_WORDS = re.compile(
    r"illustrat|synthetic|simulat|dataset|example|fake|mock|estimat|demo|reference|no local gpu", re.I)
# Notes of a measured report that disown it. "synthetic" is not here: a random-init model is measured
# for real and may be described as synthetic.
DISOWNING_NOTE = re.compile(r"illustrative|not (a )?real|fabricated|made[- ]up|simulated", re.I)
_ENERGY_FIELDS = ("energy_per_token_mj", "fp16_energy_per_token_mj", "total_energy_joules")
POSITIVE_FIELDS = (*_ENERGY_FIELDS, "avg_power_watts", "throughput_tokens_per_s", "tokens_generated",
                   "duration_s", "fp16_throughput_tokens_per_s")
BASELINE_FIELDS = ("fp16_energy_per_token_mj", "vs_fp16_energy_pct", "fp16_dynamic_energy_per_token_mj",
                   "vs_fp16_dynamic_energy_pct", "fp16_throughput_tokens_per_s")


def num(block, key) -> float | None:
    """block[key] as a float when it is a JSON number a float holds, else None (absent, null, another
    type, or an integer beyond float range, which validate refuses first as QJ012)."""
    if not isinstance(block, dict):
        return None
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def obj(block, key) -> dict:
    value = block.get(key) if isinstance(block, dict) else None
    return value if isinstance(value, dict) else {}


def text(block, key) -> str:
    value = block.get(key) if isinstance(block, dict) else None
    return value if isinstance(value, str) else ""


def source_problems(report: dict) -> list[Problem]:
    """basis `measured` needs an NVML source; illustrative/synthetic/simulated/dataset ones never count."""
    results = obj(report, "results")
    basis, source = text(results, "basis"), text(report, "measurement_source")
    v2 = report.get("schema_version") == SCHEMA_V2
    nvml = source in NVML_SOURCES_V2 if v2 else source == NVML_SOURCE_LEGACY
    path = "/measurement_source"
    if basis == "measured":
        if source in NOT_MEASURED_SOURCES_V2 if v2 else NOT_MEASURED_WORDS.search(skeleton(source)):
            return [problem("QJ202", f"measurement_source {source[:80]!r} is not a measurement, "
                                     "yet results.basis is 'measured'",
                                     path)]
        if not nvml:
            return [problem("QJ201", f"results.basis is 'measured' but measurement_source "
                                     f"{source[:80]!r} is not an NVML source" if source else
                      "results.basis is 'measured' but measurement_source is missing",
                                     path)]
        for where, note in (("/results/note", text(results, "note")),
                            ("/measurement/method", text(obj(report, "measurement"), "method"))):
            if DISOWNING_NOTE.search(skeleton(note)):
                return [problem("QJ202", "the text says the values are not a real measurement, "
                                         "yet results.basis is 'measured'",
                                         where)]
    elif basis in ("interpolated", "extrapolated") and nvml:
        return [problem("QJ201", f"results.basis is {basis!r} but measurement_source {source!r} "
                                 "says it was measured on this GPU", path)]
    return []


def _delta_e(
    results: dict, energy: str, baseline: str, delta: str, problems: list[Problem], v2: bool
) -> None:
    q, f, d = num(results, energy), num(results, baseline), num(results, delta)
    if q is None or f is None or d is None or f <= 0 or q <= 0:
        return
    # the energies at the precision they were written with (as QJ219 reads them), the stated dE% as printed
    dq, df = (limits.written_half_unit(results[k], v2) for k in (energy, baseline))
    dd = limits.half_unit(results[delta])
    low = ((q - dq) / (f + df) - 1) * 100
    high = ((q + dq) / max(f - df, 1e-300) - 1) * 100
    if not limits.intervals_meet(d - dd, d + dd, low, high, limits.DELTA_E_SLACK_PP):
        computed = (q / f - 1) * 100
        problems.append(problem("QJ203",
                                f"{delta} is {d:g} but ({energy} - {baseline}) / {baseline} gives "
                                f"{computed:.2f} %", f"/results/{delta}"))


def arithmetic_problems(report: dict) -> list[Problem]:
    """dE% vs energies, energy per token vs total / tokens, power x time and power / throughput vs energy."""
    results, found = obj(report, "results"), []
    v2 = report.get("schema_version") == SCHEMA_V2
    _delta_e(results, "energy_per_token_mj", "fp16_energy_per_token_mj", "vs_fp16_energy_pct", found, v2)
    _delta_e(results, "dynamic_energy_per_token_mj", "fp16_dynamic_energy_per_token_mj",
             "vs_fp16_dynamic_energy_pct", found, v2)
    per_token, total, tokens = (num(results, k) for k in ("energy_per_token_mj", "total_energy_joules",
                                                           "tokens_generated"))
    if per_token and total and tokens and per_token > 0 and total > 0 and tokens > 0:
        computed = total / tokens * 1000
        spread = limits.half_unit(results["total_energy_joules"]) / tokens * 1000
        slack = limits.RATIO_SLACK * computed + limits.half_unit(results["energy_per_token_mj"]) + spread
        if abs(per_token - computed) > slack:
            found.append(problem("QJ204",
                                 f"energy_per_token_mj is {per_token:g} but total_energy_joules / "
                                 f"tokens_generated * 1000 is {computed:.4g}",
                                 "/results/energy_per_token_mj"))
    power, duration = num(results, "avg_power_watts"), num(results, "duration_s")
    if power and duration and total and abs(power * duration - total) > limits.POWER_TIME_REL * total:
        found.append(problem("QJ205",
                             f"avg_power_watts x duration_s is {power * duration:.4g} J but "
                             f"total_energy_joules is {total:g} J",
                             "/results/avg_power_watts"))
    throughput = num(results, "throughput_tokens_per_s")
    if power and throughput and per_token and min(power, throughput, per_token) > 0:
        implied = power / throughput * 1000
        if abs(implied - per_token) > limits.POWER_THROUGHPUT_REL * per_token:
            found.append(problem("QJ209",
                                 f"avg_power_watts / throughput_tokens_per_s gives {implied:.4g} mJ per "
                                 f"token but energy_per_token_mj is {per_token:g}",
                                 "/results/avg_power_watts"))
    return found


def power_cap_w(report: dict) -> float:
    """Highest plausible average power for the report's GPU(s)."""
    sut = obj(report, "system_under_test")
    cards = num(sut, "accelerator_count") or 1.0
    limit = num(sut, "power_limit_w")
    if limit and limit > 0:
        return limit * limits.POWER_LIMIT_FACTOR + limits.POWER_LIMIT_MARGIN_W
    return limits.POWER_CAP_UNKNOWN_W * max(cards, 1.0)


def value_problems(report: dict) -> list[Problem]:
    """Positive and physically plausible values of the results and workload."""
    results, workload, found = obj(report, "results"), obj(report, "workload"), []
    for key in POSITIVE_FIELDS:
        value = num(results, key)
        if value is not None and value <= 0:
            found.append(problem("QJ207", f"{key} is {value:g}; it must be above 0", f"/results/{key}"))
    params = num(workload, "params_b")
    if params is not None and params <= 0:
        found.append(problem("QJ207", f"params_b is {params:g}; it must be above 0", "/workload/params_b"))
    elif params is not None and params > limits.MAX_PARAMS_B:
        found.append(problem("QJ208", f"params_b is {params:g} billion; above the "
                                      f"plausible {limits.MAX_PARAMS_B:g}",
                                      "/workload/params_b"))
    power, cap = num(results, "avg_power_watts"), power_cap_w(report)
    if power is not None and power > cap:
        found.append(problem("QJ208",
                             f"avg_power_watts is {power:g} W, above the plausible {cap:g} W for this GPU",
                             "/results/avg_power_watts"))
    for key in ("energy_per_token_mj", "fp16_energy_per_token_mj"):
        value = num(results, key)
        if value is not None and value > limits.MAX_ENERGY_PER_TOKEN_MJ:
            found.append(problem("QJ208",
                                 f"{key} is {value:g} mJ, above the plausible "
                                 f"{limits.MAX_ENERGY_PER_TOKEN_MJ:g} mJ per token",
                                 f"/results/{key}"))
    return found


def identity_problems(report: dict) -> list[Problem]:
    """params_b against the named model; gpu_arch in the known set and the one its GPU name says."""
    workload, found = obj(report, "workload"), []
    model = lookup_model(text(workload, "model_name"), text(workload, "model_id"))
    params = num(workload, "params_b")
    sizes = (model.nominal_b, model.counted_b) if model else ()
    if sizes and params and not any(abs(params - ref) <= limits.PARAMS_REL * ref for ref in sizes):
        found.append(problem("QJ211",
                             f"params_b is {params:g} but {model.name} has {model.counted_b:g} billion "
                             f"parameters (nominal {model.nominal_b:g})",
                             "/workload/params_b"))
    sut = obj(report, "system_under_test")
    arch = text(sut, "gpu_arch")
    if arch not in KNOWN_ARCHS:
        found.append(problem("QJ212",
                             f"gpu_arch {arch[:40]!r} is not one of {', '.join(KNOWN_ARCHS)}",
                             "/system_under_test/gpu_arch"))
    else:
        table = arch_for(text(sut, "gpu"))
        if table is not None and table != arch:
            found.append(problem("QJ218",
                                 f"gpu_arch is {arch!r} but the GPU {text(sut, 'gpu')[:60]!r} is {table}",
                                 "/system_under_test/gpu_arch"))
    return found


def baseline_problems(report: dict) -> list[Problem]:
    """An FP16 report has no baseline fields; a quantized one carries them; the basis's values are present."""
    results, found = obj(report, "results"), []
    precision, basis = text(obj(report, "workload"), "precision"), text(results, "basis")
    if precision == "FP16":
        for key in BASELINE_FIELDS:
            if results.get(key) is not None:
                found.append(problem("QJ214", f"{key} must be null in an FP16 report", f"/results/{key}"))
        stats = report.get("statistics")
        if isinstance(stats, dict) and (num(stats, "n_pairs") or 0) > 0:
            found.append(problem("QJ214", "an FP16 baseline report has no paired statistics "
                                          "(statistics must be null)",
                                          "/statistics"))
    elif precision and basis != "unavailable":
        # A reference value read off a fitted curve has a dE% but no energies; a measurement has both.
        keys = ["vs_fp16_energy_pct"] + (["fp16_energy_per_token_mj"] if basis == "measured" else [])
        for key in keys:
            if results.get(key) is None:
                found.append(problem("QJ214", f"this {precision} report needs {key} from "
                                              "its FP16 baseline",
                                              f"/results/{key}"))
    needed = []
    if basis in ("interpolated", "extrapolated") and precision == "FP16":
        needed.append("energy_per_token_mj")
    if basis == "measured":
        # A measurement knows its energy, tokens, power and throughput, whatever the format.
        needed += ["energy_per_token_mj", "total_energy_joules", "tokens_generated", "avg_power_watts",
                   "throughput_tokens_per_s"]
        if report.get("schema_version") == SCHEMA_V2:
            needed += ["duration_s"]
    for key in needed:
        if results.get(key) is None:
            found.append(problem("QJ217", f"results.basis is {basis!r} but {key} is null "
                                          "or missing",
                                          f"/results/{key}"))
    return found


def non_finite_paths(node, parts=()) -> list[tuple]:
    """Paths of float values that are NaN or infinite (e.g. 1e999 in the text), found without recursion."""
    found, stack = [], [(node, parts)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            found.append(where)
        elif isinstance(current, dict):
            stack.extend((v, (*where, k)) for k, v in current.items())
        elif isinstance(current, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(current))
    return sorted(found, key=lambda p: [str(x) for x in p])
