"""grade(): every label, every qualifier, sigma rules, and that odd input never raises."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curves import grade, predict, resolve_curve
from curves.grade import QUALIFIERS
from curves.point import single_trial_floor_pp
from tests.curves.helpers import ROOT, load, v2_report

CONTRACT_FIELDS = {
    "label",
    "qualifiers",
    "reason",
    "arch",
    "precision",
    "backend",
    "params_b",
    "curve_key",
    "curves_version",
    "obs_pct",
    "ref_pct",
    "ref_source",
    "sigma_obs_pp",
    "sigma_ref_pp",
    "z",
    "band_low_pct",
    "band_high_pct",
    "sentence",
}


def at_curve(curves, key, n, shift_sd=0.0, **kw):
    arch, precision, _ = key.split("/")
    mean, sd = predict(curves, key, n)
    return v2_report(arch, precision, n, mean + shift_sd * sd, **kw)


def test_on_the_curve_is_a_confirmation(curves):
    v = grade(at_curve(curves, "ada/NF4/eager", 2.0), curves)
    assert v.label == "confirmation" and v.ref_source == "curve"
    assert v.z == pytest.approx(0.0, abs=0.01)
    assert v.band_low_pct < v.obs_pct < v.band_high_pct
    assert v.curve_key == "ada/NF4/eager" and v.curves_version == curves["version"]
    assert set(v.to_dict()) >= CONTRACT_FIELDS


def test_far_from_the_curve_is_a_contradiction(curves):
    v = grade(at_curve(curves, "ada/NF4/eager", 2.0, shift_sd=3.0), curves)
    assert v.label == "contradiction" and v.z > 2
    assert not (v.band_low_pct <= v.obs_pct <= v.band_high_pct)
    assert "a contradiction" in v.sentence


def test_z_is_obs_minus_ref_over_the_combined_sd(curves):
    v = grade(v2_report("turing", "NF4", 2.0, 25.0, n_pairs=16, sd=8.0), curves)
    mean, sd = predict(curves, "turing/NF4/eager", 2.0)
    assert v.sigma_ref_pp == pytest.approx(sd, abs=1e-3)
    assert v.sigma_obs_pp == pytest.approx(8.0 / 4.0, abs=1e-3)
    assert v.z == pytest.approx((25.0 - mean) / math.hypot(2.0, sd), abs=0.006)


def test_same_size_anchors_are_the_reference(curves):
    v = grade(v2_report("ada", "NF4", 0.494, 40.0), curves)  # Qwen2-0.5B counts 0.494 B parameters
    assert v.ref_source == "anchors"
    assert v.ref_pct == pytest.approx((56.09364 + 35.63498) / 2, abs=1e-3)
    curve_sd = predict(curves, "ada/NF4/eager", 0.494)[1]
    assert v.sigma_ref_pp >= curve_sd - 1e-9
    assert "mean of 2 same-size anchors" in v.sentence


def test_opposite_sign_when_the_two_disagree_on_saving_energy(curves):
    mean, _ = predict(curves, "ada/NF4/eager", 7.0)
    assert mean < 0
    v = grade(v2_report("ada", "NF4", 7.0, 5.0), curves)
    assert "opposite-sign" in v.qualifiers
    assert "disagree on whether quantization saves energy" in v.sentence
    same = grade(v2_report("ada", "NF4", 7.0, -5.0), curves)
    assert "opposite-sign" not in same.qualifiers


def test_extrapolation_is_flagged_and_sigma_ref_grows_with_distance(curves):
    sigmas = []
    for n in (7.0, 7.6, 14.0, 28.0, 56.0, 112.0):
        mean, _ = predict(curves, "ada/NF4/eager", n)
        v = grade(v2_report("ada", "NF4", n, mean), curves)
        sigmas.append(v.sigma_ref_pp)
        assert ("extrapolated-size" in v.qualifiers) == (n > 7.0 * 1.1)
    assert sigmas[2] < sigmas[3] < sigmas[4] < sigmas[5]
    small = [predict(curves, "ada/NF4/eager", n)[1] for n in (0.45, 0.2, 0.1, 0.05)]
    assert small == sorted(small)


def test_borrowed_curve_for_hopper(published_only):
    v = grade(load("v2-hopper-nf4.json"), published_only)
    assert v.curve_key == "hopper/NF4/eager" and "borrowed-curve" in v.qualifiers
    assert v.ref_source == "curve"  # ampere's anchors are another architecture's
    assert "ampere curve, borrowed" in v.sentence
    assert {"random-init-weights", "extrapolated-size"} <= set(v.qualifiers)


def test_legacy_single_trial_report_uses_the_repeatability_floor(curves):
    report = load("legacy-single-trial.json")
    v = grade(report, curves)
    assert v.label in ("confirmation", "contradiction")
    assert {"legacy-schema", "single-trial", "software-differs"} <= set(v.qualifiers)
    assert v.n_trials == 1
    obs = report["results"]["vs_fp16_energy_pct"]
    assert v.sigma_obs_pp == pytest.approx(math.sqrt(2) * 2.0 * (1 + obs / 100), abs=1e-3)


def test_single_trial_v2_and_a_sd_below_the_floor(curves):
    one = grade(v2_report(n_pairs=1, sd=0.0), curves)
    assert "single-trial" in one.qualifiers
    assert one.sigma_obs_pp == pytest.approx(single_trial_floor_pp(10.0, 2.0), abs=1e-3)
    tight = grade(v2_report(n_pairs=4, sd=0.1), curves)
    assert "single-trial" not in tight.qualifiers
    assert tight.sigma_obs_pp == pytest.approx(single_trial_floor_pp(10.0, 2.0) / 2, abs=1e-3)


def test_software_differs_against_pins_recorded_in_curves(curves):
    assert "software-differs" not in grade(v2_report(), curves).qualifiers
    curves["settings"]["reference_software"] = {"bitsandbytes": "0.45.5"}
    assert "software-differs" in grade(v2_report(), curves).qualifiers
    curves["settings"]["reference_software"] = {"bitsandbytes": "0.50.0"}  # same major.minor
    assert "software-differs" not in grade(v2_report(), curves).qualifiers


def test_random_init_weights(curves):
    v = grade(v2_report(workload__weights="random-init"), curves)
    assert "random-init-weights" in v.qualifiers


@pytest.mark.parametrize(
    "over, code, words",
    [
        ({"system_under_test__gpu_arch": "volta"}, "QJ301", "architecture 'volta'"),
        ({"workload__backend": "static"}, "QJ302", "backend 'static'"),
        ({"results__basis": "interpolated"}, "QJ303", "not a measurement"),
        ({"measurement_source": "simulated"}, "QJ303", "not a measurement"),
        ({"workload__precision": "FP16"}, "QJ304", "FP16-only baseline"),
        ({"workload__params_b": None}, "QJ305", "params_b"),
        ({"results__vs_fp16_energy_pct": None}, "QJ306", "vs_fp16_energy_pct"),
        ({"workload__precision": "FP8"}, "QJ308", "precision 'FP8'"),
    ],
)
def test_ungraded_says_why(curves, over, code, words):
    v = grade(v2_report(**over), curves)
    assert v.label == "ungraded" and v.reason_code == code and words in v.reason
    assert v.z is None and v.ref_pct is None and v.sentence.startswith("Not graded:")


def test_resolve_curve_follows_borrows_and_explains_misses(curves, published_only):
    key, group = resolve_curve(published_only, "Hopper", "nf4", "eager")
    assert key == "hopper/NF4/eager" and group["borrowed_from"] == "ampere"
    key, group = resolve_curve(curves, "Hopper", "nf4", "eager")
    assert key == "hopper/NF4/eager" and group["borrowed_from"] is None
    assert group["source"] == "quantjoule-hopper"
    assert resolve_curve(curves, "Ada Lovelace", "INT8", None)[0] == "ada/INT8/eager"
    key, reason = resolve_curve(curves, "pascal", "NF4", "eager")
    assert key is None and "pascal" in reason


def test_every_qualifier_is_reachable(curves, published_only):
    seen = set(grade(load("v2-hopper-nf4.json"), published_only).qualifiers)  # borrowed-curve
    for report in (
        load("legacy-single-trial.json"),
        load("v2-hopper-nf4.json"),
        v2_report("ada", "NF4", 7.0, 5.0, n_pairs=1),
        json.loads((ROOT / "measurements/hopper-campaign/tinyllama-1.1b-direct/energy-nf4.json").read_text()),
    ):
        seen |= set(grade(report, curves).qualifiers)
    assert seen == set(QUALIFIERS)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    base=st.sampled_from(["v2", "legacy"]),
    path=st.sampled_from(
        [
            ("workload", "params_b"),
            ("workload", "precision"),
            ("workload",),
            ("results", "vs_fp16_energy_pct"),
            ("statistics", "n_pairs"),
            ("statistics", "delta_e_pct"),
            ("software",),
            ("system_under_test", "gpu_arch"),
            ("results",),
            ("software", "packages"),
        ]
    ),
    value=json_values,
)
def test_odd_reports_never_raise(fitted, base, path, value):
    report = v2_report() if base == "v2" else load("legacy-single-trial.json")
    node = report
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    v = grade(report, fitted)
    assert v.label in ("confirmation", "contradiction", "ungraded")
    assert dataclasses.asdict(v)["sentence"]


@pytest.mark.parametrize("params_b, obs", [(10**400, 5.0), (2.0, 10**400), (1e-300, 1e300), (2.0, -1e308)])
def test_extreme_numbers_do_not_raise(curves, params_b, obs):
    v = grade(v2_report(workload__params_b=params_b, results__vs_fp16_energy_pct=obs), curves)
    assert v.label in ("confirmation", "contradiction", "ungraded")


def test_non_dict_report_is_ungraded(curves):
    assert grade([1, 2], curves).label == "ungraded"


@pytest.mark.parametrize("precision", ["NF4", "INT8"])
def test_a_planted_outlier_report_is_another_condition(curves, precision):
    plain = grade(v2_report(precision=precision), curves)
    assert plain.label != "ungraded"
    v = grade(v2_report(precision=precision, workload__outlier_plant={"dims": 4, "scale": 20.0}), curves)
    assert v.label == "ungraded" and v.reason_code == "QJ309"
    assert "planted outlier features (4 hidden dims at scale 20)" in v.reason


def _hopper_runs(curves, model):
    group = curves["groups"]["hopper/NF4/eager"]
    return group, [a for a in group["anchors"] if a["model"] == model]


def test_a_run_of_an_anchored_model_is_compared_with_that_models_runs(curves):
    group, runs = _hopper_runs(curves, "Qwen2.5-3B")
    assert len(runs) >= 2 and group["band"]["tau_pp"] is not None
    values = [a["delta_e_pct"] for a in runs]
    tau = max(group["band"]["tau_pp"], single_trial_floor_pp(sum(values) / len(values), 2.0))
    weights = [1 / (a["se_pp"] ** 2 + tau**2) for a in runs]
    ref = sum(w * y for w, y in zip(weights, values, strict=True)) / sum(weights)
    report = v2_report("hopper", "NF4", 3.0859, ref, n_pairs=8, sd=3.0, workload__model_name="Qwen2.5-3B",
                       workload__backend="eager", workload__weights="random-init")
    v = grade(report, curves)
    assert v.ref_source == "runs"
    assert v.ref_pct == pytest.approx(ref, abs=1e-3)
    assert v.sigma_ref_pp == pytest.approx(math.sqrt(1 / sum(weights) + tau**2), abs=1e-3)
    # The curve's lack of fit across shapes (chi^2/dof > 1 over sizes) does not widen a like-with-like band.
    assert v.sigma_ref_pp < group["band"]["sigma_pp"]
    assert v.min_detectable_pp <= 12.0
    assert f"weighted mean of the curve's {len(runs)} runs of Qwen2.5-3B" in v.sentence


def test_a_15_pp_shift_is_caught_for_the_same_model_and_not_for_another_shape(curves):
    _, runs = _hopper_runs(curves, "Qwen2.5-3B")
    mean = sum(a["delta_e_pct"] for a in runs) / len(runs)
    kw = dict(n_pairs=8, sd=3.0, workload__backend="eager", workload__weights="random-init")

    def graded(model):
        report = v2_report("hopper", "NF4", 3.0859, mean + 15.0, workload__model_name=model, **kw)
        return grade(report, curves)

    same, other = graded("Qwen2.5-3B"), graded("Other-3B")
    assert (same.ref_source, same.label) == ("runs", "contradiction")
    # Another model of this size may differ by shape (layers), so it keeps the curve's wider band.
    assert (other.ref_source, other.label) == ("anchors", "confirmation")
    assert other.min_detectable_pp > same.min_detectable_pp


def test_the_same_model_is_found_by_the_known_model_table_not_by_the_name_as_written(curves):
    """A Hugging Face id or variant of a known model, and a renamed report whose model_id names one, are
    that model's runs: renaming a run cannot move it from its own runs' band to the wider one."""
    _, runs = _hopper_runs(curves, "Qwen2.5-3B")
    mean = sum(a["delta_e_pct"] for a in runs) / len(runs)
    kw = dict(n_pairs=8, sd=3.0, workload__backend="eager", workload__weights="random-init")

    def graded(**workload):
        fields = {f"workload__{k}": v for k, v in workload.items()}
        return grade(v2_report("hopper", "NF4", 3.0859, mean + 15.0, **kw, **fields), curves)

    same = graded(model_name="Qwen2.5-3B")
    for variant in (dict(model_name="Qwen/Qwen2.5-3B-Instruct"),
                    dict(model_name="my-own-3b", model_id="synthetic:qwen2.5-3b")):
        v = graded(**variant)
        assert (v.ref_source, v.label, v.z) == ("runs", "contradiction", same.z), variant
        assert "runs of Qwen2.5-3B" in v.sentence
    # with neither field naming a known model it is another model, as before
    assert graded(model_name="my-own-3b", model_id="local:my-own-3b").ref_source == "anchors"


def test_without_a_between_run_estimate_the_runs_rule_does_not_apply(curves):
    group = curves["groups"]["hopper/INT8/eager"]
    model = group["anchors"][0]["model"]
    report = v2_report("hopper", "INT8", group["anchors"][0]["params_b"], 180.0, workload__model_name=model,
                       workload__backend="eager", workload__weights="random-init")
    # INT8 has repeats at 0.5, 1.1 and 1.5 B, so its smallest model is graded against its own runs ...
    assert group["band"]["tau_pp"] is not None and grade(report, curves).ref_source == "runs"
    # ... and a group without repeats (no between-run estimate) falls back to the anchors' band.
    group["band"]["tau_pp"] = None
    assert grade(report, curves).ref_source == "anchors"
    group = curves["groups"]["hopper/NF4/eager"]
    for anchor in group["anchors"]:
        anchor.pop("se_pp")  # a run without its own interval cannot be weighted
    _, runs = _hopper_runs(curves, "Qwen2.5-3B")
    report = v2_report("hopper", "NF4", 3.0859, 25.0, workload__model_name="Qwen2.5-3B",
                       workload__backend="eager", workload__weights="random-init")
    assert grade(report, curves).ref_source == "anchors"
