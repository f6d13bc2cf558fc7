"""validate: schema mapping, each semantic check at its tolerance edge, and robustness on odd data."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schema import Problem, is_measurement, validate
from schema.codes import get
from schema.models import KNOWN_MODELS, lookup_model, model_key
from tests.schema.schema_helpers import VALID, codes_of, load

V2 = "v2-measured-nf4-hopper.json"
LEGACY = "legacy-1.1-measured-direct-nvml.json"


def edited(name: str, **changes) -> dict:
    """The example `name` with `changes` applied, keys written as pointer paths with '__' for '/'."""
    report = load(name)
    for key, value in changes.items():
        *parents, last = key.split("__")
        node = report
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return report


def test_problem_is_frozen_and_serialisable():
    problem = validate(edited(V2, workload__precision="nf4"))[0]
    assert problem.to_dict() == {
        "code": "QJ103",
        "severity": "error",
        "path": "/workload/precision",
        "message": problem.message,
        "hint": get("QJ103").hint,
    }
    with pytest.raises(AttributeError):
        problem.code = "QJ000"


def test_required_fields_are_reported_at_their_own_path():
    report = load(V2)
    del report["results"]["basis"], report["workload"]["weights"]
    assert [(p.code, p.path) for p in validate(report)] == [
        ("QJ101", "/results/basis"),
        ("QJ101", "/workload/weights"),
    ]


def test_unknown_arm_key_is_an_unexpected_field():
    report = load(V2)
    report["arms"]["FP8"] = report["arms"]["FP16"]
    assert [(p.code, p.path) for p in validate(report)] == [("QJ106", "/arms/FP8")]


def test_unavailable_arm_needs_a_reason():
    report = load(V2)
    report["arms"]["INT8"] = {
        "energy_per_token_mj": None,
        "throughput_tokens_per_s": None,
        "status": "unavailable",
        "reason": None,
    }
    assert codes_of(validate(report)) == ["QJ102"]
    report["arms"]["INT8"]["reason"] = "out of memory"
    assert validate(report) == []


def test_failed_trial_needs_a_reason():
    report = load("v2-one-trial-failed.json")
    report["trials"][5]["reason"] = ""
    assert [(p.code, p.path) for p in validate(report)] == [("QJ107", "/trials/5/reason")]


def test_free_form_blocks_accept_extras():
    report = load(V2)
    report["provenance"]["ci_run"] = {"id": 7}
    report["software"]["packages"]["flash-attn"] = "2.8.0"
    report["software"]["cuda_visible_devices"] = "0"
    assert validate(report) == []


def test_schema_problems_are_capped_with_a_count():
    report = load(V2)
    for trial in report["trials"]:
        trial.update({f"extra_{i}": i for i in range(10)})
    problems = validate(report)
    assert len(problems) == 50
    assert problems[-1].message.endswith("more schema problems not listed")


# ΔE%: interval over the rounding of the three printed numbers plus 0.2 pp.
@pytest.mark.parametrize(
    ("reported", "ok"), [(0.75, True), (0.9, True), (0.6, True), (1.2, False), (0.3, False)]
)
def test_delta_e_tolerance(reported, ok):
    assert ("QJ203" not in codes_of(validate(edited(LEGACY, results__vs_fp16_energy_pct=reported)))) is ok


def test_delta_e_accepts_coarse_printing_of_real_numbers():
    # A writer that rounds energies to integers and dE% to one decimal must pass.
    report = edited(
        LEGACY,
        results__energy_per_token_mj=3585,
        results__fp16_energy_per_token_mj=3558,
        results__vs_fp16_energy_pct=0.8,
        results__total_energy_joules=9177.6,
    )
    assert validate(report) == []


@pytest.mark.parametrize(("total_j", "ok"), [(9176.8, True), (9200.0, True), (9240.0, False)])
def test_per_token_tolerance(total_j, ok):
    assert ("QJ204" not in codes_of(validate(edited(LEGACY, results__total_energy_joules=total_j)))) is ok


@pytest.mark.parametrize(
    ("factor", "ok"), [(1.0, True), (1.09, True), (0.92, True), (1.12, False), (0.85, False)]
)
def test_power_times_duration_tolerance(factor, ok):
    report = load(V2)
    report["results"]["avg_power_watts"] = round(report["results"]["avg_power_watts"] * factor, 2)
    assert ("QJ205" not in codes_of(validate(report))) is ok


def test_power_over_throughput_is_only_a_warning():
    report = edited(V2, results__throughput_tokens_per_s=30.0)
    problems = validate(report)
    assert [(p.code, p.severity) for p in problems] == [("QJ209", "warning")]
    assert is_measurement(report)


def test_a_legacy_measurement_whose_power_and_throughput_miss_its_energy_is_refused():
    # Legacy reports have no trials: power x (tokens / throughput) = energy is their evidence (QJ205).
    report = edited(LEGACY, results__throughput_tokens_per_s=20.0)
    assert {(p.code, p.severity) for p in validate(report)} == {("QJ209", "warning"), ("QJ205", "error")}
    assert not is_measurement(report)


@pytest.mark.parametrize(("power_w", "ok"), [(1499.0, True), (1501.0, False)])
def test_power_cap_without_a_limit(power_w, ok):
    per_token = 3584.69
    report = edited(
        LEGACY,
        results__avg_power_watts=power_w,
        results__throughput_tokens_per_s=round(power_w / per_token * 1000, 3),
    )
    assert ("QJ208" not in codes_of(validate(report))) is ok


def test_power_cap_follows_the_power_limit():
    report = load(V2)  # trials run at up to 133.2 W; the cap is limit x 1.1 + 10 W
    report["system_under_test"]["power_limit_w"] = 112.0
    assert "QJ208" not in codes_of(validate(report))
    report["system_under_test"]["power_limit_w"] = 110.0
    assert [(p.code, p.path) for p in validate(report)] == [("QJ208", "/trials/6/mean_power_w")]


@pytest.mark.parametrize(
    ("params_b", "ok"), [(3.0, True), (3.086, True), (3.7, True), (3.8, False), (2.4, True), (2.3, False)]
)
def test_params_tolerance(params_b, ok):
    assert ("QJ211" not in codes_of(validate(edited(LEGACY, workload__params_b=params_b)))) is ok


def test_unknown_model_is_not_checked_for_size():
    assert validate(edited(LEGACY, workload__model_name="org/house-model-3B", workload__params_b=41.0)) == []


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b"),
        ("Qwen/Qwen2.5-14B-Instruct", "qwen2.5-14b"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("synthetic:qwen2-0.5b", "qwen2-0.5b"),
        ("01-ai/Yi-1.5-9B-Chat", "yi-1.5-9b"),
    ],
)
def test_model_names_and_ids_are_matched(name, key):
    assert model_key(name) == key and lookup_model(name) is not None


def test_every_known_model_matches_its_own_names():
    for model in KNOWN_MODELS:
        assert lookup_model(model.name) is model and lookup_model(model.hf_id) is model
        assert abs(model.counted_b - model.nominal_b) <= 0.2 * model.nominal_b


def test_counter_trace_threshold_comes_from_the_report():
    report = load(V2)
    trial = report["trials"][3]
    trial["trace_energy_j"] = round(trial["counter_energy_j"] * 1.04, 3)
    assert validate(report) == []
    report["agreement"]["threshold_pct"] = 3.0
    assert [(p.code, p.severity) for p in validate(report)] == [("QJ210", "warning")]


def test_reported_agreement_alone_can_warn():
    report = load(V2)
    report["agreement"]["counter_vs_trace_max_pct"] = 7.5
    assert [(p.code, p.path) for p in validate(report)] == [("QJ210", "/agreement/counter_vs_trace_max_pct")]


def test_many_bad_trials_give_one_line():
    report = load(V2)
    for trial in report["trials"]:
        trial["mean_power_w"] = round(trial["mean_power_w"] * 1.5, 2)
    problems = validate(report)
    assert codes_of(problems) == ["QJ205"] and len(problems) == 1
    assert problems[0].message.endswith("(and 7 more trials)")


def test_statistics_ci_must_contain_the_mean():
    report = load(V2)
    report["statistics"]["delta_e_pct"].update(ci95_low=16.0, ci95_high=16.656)
    # the bounds are also not the ones the trials give (schema.recompute)
    assert {(p.code, p.path) for p in validate(report)} == {
        ("QJ213", "/statistics/delta_e_pct"),
        ("QJ213", "/statistics/delta_e_pct/ci95_low"),
        ("QJ213", "/statistics/delta_e_pct/ci95_high"),
    }


def test_statistics_half_width():
    report = load(V2)
    report["statistics"]["delta_e_pct"]["ci95_half_width_pp"] = 0.5
    # (high - low) / 2 disagrees, and so does t * sd / sqrt(n) of the trials: both at that field
    assert {p.path for p in validate(report)} == {"/statistics/delta_e_pct/ci95_half_width_pp"}


def test_measured_quantized_report_needs_statistics():
    report = load(V2)
    report["statistics"] = None
    assert [(p.code, p.path) for p in validate(report)] == [("QJ213", "/statistics")]


def test_fp16_report_with_paired_statistics():
    report = load("v2-fp16-only-baseline.json")
    report["statistics"] = load(V2)["statistics"]
    assert "QJ214" in codes_of(validate(report))


def test_measured_report_needs_its_arms():
    report = load(V2)
    del report["arms"]["FP16"]
    assert [(p.code, p.path) for p in validate(report)] == [("QJ216", "/arms/FP16")]


def test_measured_report_needs_an_ok_trial_of_its_precision():
    report = load(V2)
    report["trials"] = [t for t in report["trials"] if t["arm"] == "FP16"]
    assert "QJ215" in codes_of(validate(report))


def test_ok_trial_needs_an_energy():
    report = load(V2)
    report["trials"][0].update(counter_energy_j=None, trace_energy_j=None)
    assert ("QJ215", "/trials/0") in [(p.code, p.path) for p in validate(report)]


def _paired_summary(report: dict) -> tuple[dict, list[float]]:
    """statistics.delta_e_pct as `measure` writes it, from the trials' trace energies (exact t quantile),
    and the per-block values it summarises."""
    import statistics

    from scipy import stats as sps

    by = {(t["block"], t["arm"]): t["trace_energy_j"] / t["tokens"] for t in report["trials"]}
    deltas = [(by[(b, "NF4")] / by[(b, "FP16")] - 1) * 100 for b in sorted({b for b, _ in by})]
    mean, sd = statistics.fmean(deltas), statistics.stdev(deltas)
    half = float(sps.t.ppf(0.975, len(deltas) - 1)) * sd / len(deltas) ** 0.5
    return {"median": statistics.median(deltas), "mean": mean, "sd": sd, "cv": sd / abs(mean),
            "ci95_low": mean - half, "ci95_high": mean + half, "ci95_half_width_pp": half}, deltas


def test_trace_only_trials_are_accepted():
    report = load(V2)
    for trial in report["trials"]:
        trial["counter_energy_j"] = None
    report["measurement_source"] = "nvml-power-trace"
    # A trace-only run's paired statistics come from the trace, as `measure` computes them, and so do the
    # reconstructed ones (the same ratio here: each window is a whole generation).
    summary, deltas = _paired_summary(report)
    report["statistics"]["delta_e_pct"] = report["phases"]["reconstructed_delta_e_pct"] = summary
    report["phases"]["per_block_reconstructed_delta_e_pct"] = deltas
    # The totals were summed from the counter; the trace is 0.13-0.21 % away, inside the 0.5 % slack.
    assert validate(report) == [] and is_measurement(report)
    for trial in report["trials"]:
        trial["trace_energy_j"] = round(trial["trace_energy_j"] * 1.01, 3)
    assert "QJ215" in codes_of(validate(report))


@pytest.mark.parametrize(
    ("basis", "source", "code"),
    [
        ("measured", "simulated", "QJ202"),
        ("measured", "reference-dataset", "QJ202"),
        ("interpolated", "nvml-power-trace", "QJ201"),
        ("extrapolated", "nvml-energy-counter", "QJ201"),
    ],
)
def test_basis_against_source_v2(basis, source, code):
    report = edited("v2-reference-interpolated.json", results__basis=basis, measurement_source=source)
    if basis == "measured":
        report = edited(V2, measurement_source=source)
    assert code in codes_of(validate(report))


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("direct-nvml", None),
        ("ecocompute-dataset (no local GPU)", "QJ202"),
        ("synthetic", "QJ202"),
        ("example output", "QJ202"),
        ("nvidia-smi", "QJ201"),
        ("", "QJ201"),
    ],
)
def test_basis_against_source_legacy(source, code):
    report = edited(LEGACY, measurement_source=source)
    if not source:
        del report["measurement_source"]
    assert codes_of(validate(report)) == ([code] if code else [])
    assert is_measurement(report) is (code is None)


def test_random_init_note_does_not_disown_a_measurement():
    report = edited(V2, results__note="random-init (synthetic) TinyLlama-shaped weights")
    assert validate(report) == [] and is_measurement(report)


def test_is_measurement_only_for_valid_nvml_measured_reports():
    assert is_measurement(load(V2))
    assert not is_measurement(load("v2-reference-interpolated.json"))
    assert not is_measurement(edited(V2, workload__params_b=5.0))
    assert not is_measurement(None) and not is_measurement({"results": []})


@pytest.mark.parametrize("value", [None, [], "text", 3, [load(V2)]])
def test_non_object_is_a_coded_problem(value):
    assert codes_of(validate(value)) == ["QJ008"]


def test_python_values_that_json_cannot_hold():
    report = load(V2)
    report["provenance"]["tags"] = {"a", "b"}
    assert [(p.code, p.path) for p in validate(report)] == [("QJ102", "/provenance/tags")]
    report = load(V2)
    report["provenance"][3] = "x"
    assert codes_of(validate(report)) == ["QJ102"]
    report = load(V2)
    report["results"]["vs_fp16_energy_pct"] = float("nan")
    assert [(p.code, p.path) for p in validate(report)] == [("QJ206", "/results/vs_fp16_energy_pct")]


def test_deep_python_object_does_not_recurse():
    report = load(V2)
    deep: list = []
    node = deep
    for _ in range(10_000):
        node.append([])
        node = node[0]
    report["provenance"]["deep"] = deep
    assert codes_of(validate(report)) == ["QJ007"]


def test_validate_is_deterministic_and_pure():
    report = edited(V2, workload__precision="nf4", results__basis="guess")
    before = copy.deepcopy(report)
    assert validate(report) == validate(report)
    assert report == before


# Random edits of valid reports: the validator answers with registered codes and never raises.
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(node, parts=()):
    yield parts
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*parts, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*parts, i))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(p.name for p in VALID.iterdir())), st.data())
def test_random_edits_never_raise(name, data):
    report = load(name)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(report) if p]
        path = data.draw(st.sampled_from(paths))
        parent = report
        for part in path[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(_LEAVES)
    problems = validate(report)
    assert all(isinstance(p, Problem) and get(p.code) for p in problems)
    json.dumps([p.to_dict() for p in problems])
