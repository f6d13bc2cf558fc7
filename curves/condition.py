"""The condition a ΔE% was measured under (batch, tokens per generation, INT8 variant, planted
outliers) and why a report's condition is not its curve's: like with like only (pure)."""

from __future__ import annotations

from curves.values import get_path, int_or_none, number

# What every anchor measured; a group without a `condition` (older curves files) means this one.
REFERENCE_CONDITION = {"batch_size": 1, "generation_tokens": 256}
# INT8 curves are LLM.int8() (bitsandbytes' default outlier threshold); threshold 0 is another INT8.
LLM_INT8_THRESHOLD = 6.0


def report_condition(report: dict) -> dict:
    """Batch size and tokens per measured generation as the report states them (None: not stated)."""
    return {
        "batch_size": int_or_none(get_path(report, "workload", "batch_size")),
        "generation_tokens": int_or_none(get_path(report, "measurement", "tokens_per_run")),
    }


def condition_text(backend: str, condition: dict) -> str:
    batch = condition.get("batch_size")
    tokens = condition.get("generation_tokens")
    return (f"{backend}, batch {batch if batch is not None else 'not stated'}, "
            f"{tokens if tokens is not None else 'unstated'}-token generations")


def condition_mismatch(found: dict, wanted: dict) -> str | None:
    """Why a report's condition is not the curve's, or None when they match. An unstated field is taken
    as the reference's (older and legacy reports state no batch or say 256 tokens)."""
    why = []
    for name, label in (("generation_tokens", "token generations"), ("batch_size", "batch")):
        have, want = found.get(name), wanted.get(name)
        if have is not None and have != want:
            why.append(f"{have}-{label}" if name == "generation_tokens" else f"{label} {have}")
    return " and ".join(why) or None


def report_mismatch(report: dict, found: dict, precision: str | None, wanted: dict) -> str | None:
    """Everything that makes the report another condition than the curve's `wanted` one, or None: its
    batch or generation length (`found`, its `report_condition`), an INT8 that is not LLM.int8(), or
    planted outlier features."""
    mismatch = condition_mismatch(found, wanted)
    threshold = number(get_path(report, "workload", "int8_outlier_threshold"))
    if precision == "INT8" and threshold is not None and threshold != LLM_INT8_THRESHOLD:
        other = (
            f"INT8 outlier threshold {threshold:g} "
            f"(not LLM.int8(), whose threshold is {LLM_INT8_THRESHOLD:g})"
        )
        mismatch = f"{mismatch} and {other}" if mismatch else other
    plant = get_path(report, "workload", "outlier_plant")
    if isinstance(plant, dict):  # a sensitivity run's weights, for any precision: no curve measured them
        dims, scale = number(plant.get("dims")), number(plant.get("scale"))
        other = "planted outlier features" + (
            f" ({dims:g} hidden dims at scale {scale:g})" if dims is not None and scale is not None else ""
        )
        mismatch = f"{mismatch} and {other}" if mismatch else other
    return mismatch
