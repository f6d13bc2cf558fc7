"""#13 classes 3-7: the submitter can no longer choose the verdict. Each test shows the attack working on
the grader when validation is bypassed, and the real bot path refusing it (or grading it honestly)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.forge_local import LocalForge
from bot.pipeline import process
from curves import grade
from schema import validate
from schema.gpus import arch_for
from schema.text import skeleton
from tests.support.gallery_records import make_report
from tests.support.hostile.corpus_13 import HOPPER, LEGACY, LEGACY_REF, TINY_NF4_B, edit, seed_copy
from tests.support.hostile.harness import git, make_repo
from tests.support.webhooks import form_body, issues_event


def codes(report: dict) -> set[str]:
    return {p.code for p in validate(report) if p.severity == "error"}


# ---- 3: the architecture follows from the GPU name -------------------------------------------------------
def test_an_h200_that_says_ada_is_refused_and_graded_as_hopper_anyway(curves_data):
    lying = json.loads(edit(HOPPER, {"system_under_test.gpu_arch": "ada"}))
    assert codes(lying) == {"QJ218"}
    # the grader uses the table too: a caller that skips validation still gets Hopper's curve
    assert grade(lying, curves_data).curve_key == grade(json.loads(HOPPER), curves_data).curve_key
    assert grade(lying, curves_data).arch == "hopper"


@pytest.mark.parametrize(
    "gpu,arch",
    [
        ("NVIDIA H100 80GB HBM3", "hopper"),
        ("NVIDIA GeForce RTX 4090", "ada"),
        ("NVIDIA A100-SXM4-80GB", "ampere"),
        ("Tesla T4", "turing"),
        ("NVIDIA B200", "blackwell"),
        ("Tesla V100-SXM2-32GB", "volta"),
    ],
)
def test_measures_table_decides_the_arch(gpu, arch):
    report = json.loads(edit(HOPPER, {"system_under_test.gpu": gpu}))
    for stated in ("ada", "ampere", "blackwell", "hopper", "turing", "volta"):
        report["system_under_test"]["gpu_arch"] = stated
        assert ("QJ218" in codes(report)) == (stated != arch_for(gpu) == arch)


def test_an_unknown_gpu_keeps_the_stated_arch_with_a_qualifier(curves_data):
    report = json.loads(edit(HOPPER, {"system_under_test.gpu": "Prototype Accelerator X"}))
    assert codes(report) == set()
    verdict = grade(report, curves_data)
    assert verdict.arch == "hopper" and "arch-unverified" in verdict.qualifiers
    assert "arch-unverified" not in grade(json.loads(HOPPER), curves_data).qualifiers


# ---- 4: summary figures are recomputed from the trials ---------------------------------------------------
def test_an_inflated_sd_would_turn_a_contradiction_into_a_confirmation(curves_data):
    honest = make_report(
        arch="ada",
        model="Qwen2-7B",
        params_b=7.616,
        precision="NF4",
        delta_pct=45.0,
        seed=71,
        noise_pp=0.5,
        blocks=8,
    )
    assert codes(honest) == set() and grade(honest, curves_data).label == "contradiction"
    forged = json.loads(json.dumps(honest))
    forged["statistics"]["delta_e_pct"]["sd"] = 500.0
    assert grade(forged, curves_data).label == "confirmation"  # what the attack bought
    assert codes(forged) == {"QJ213"}
    nulled = json.loads(json.dumps(honest))
    nulled["statistics"]["delta_e_pct"]["sd"] = None  # the floor instead: a wider sigma too
    assert codes(nulled) == {"QJ213"}


@given(
    st.integers(0, 10_000),
    st.sampled_from(["mean", "median", "sd", "cv", "ci95_low", "ci95_high", "ci95_half_width_pp"]),
    st.floats(0.02, 0.5),
)
@settings(max_examples=60, deadline=None, database=None)
def test_any_summary_figure_moved_beyond_rounding_is_refused(seed, key, share):
    rng = random.Random(seed)
    report = make_report(
        arch="hopper",
        model="Qwen2-1.5B",
        params_b=1.544,
        precision=rng.choice(["NF4", "INT8"]),
        delta_pct=rng.uniform(-30, 200),
        seed=seed,
        blocks=rng.choice([2, 3, 8, 30]),
        noise_pp=rng.choice([0.5, 5.0]),
    )
    assert codes(report) == set()
    summary = report["statistics"]["delta_e_pct"]
    summary[key] = summary[key] + max(abs(summary[key]) * share, 0.05)
    assert "QJ213" in codes(report)


def test_the_256_token_figure_of_a_real_report_is_checked_too():
    real = json.loads(
        (
            Path(__file__).resolve().parents[2] / "measurements/h200/2026-12-02-qwen2-0.5b-eager-nf4.json"
        ).read_text()
    )
    assert codes(real) == set()
    for dotted in (
        "phases.reconstructed_delta_e_pct.median",
        "phases.reconstructed_delta_e_pct.sd",
        "phases.per_block_reconstructed_delta_e_pct.2",
    ):
        moved = json.loads(json.dumps(real))
        *parents, leaf = dotted.split(".")
        node = moved
        for key in parents:
            node = node[key]
        leaf = int(leaf) if leaf.isdigit() else leaf
        node[leaf] = node[leaf] + 3.0
        assert codes(moved) == {"QJ213"}, dotted
    moved = json.loads(json.dumps(real))
    moved["arms"]["NF4"]["prefill_energy_j"] = None  # what the reconstruction needs
    assert "QJ213" in codes(moved)


# ---- 5: stated precision may not leave the verdict open --------------------------------------------------
def test_integer_energies_leave_no_room_to_choose_the_change():
    for claimed in range(0, 81, 5):  # the issue's example: 3 and 2 mJ allowed anything from 0 to 80 %
        report = json.loads(
            edit(
                LEGACY_REF,
                {
                    "results.energy_per_token_mj": 3,
                    "results.fp16_energy_per_token_mj": 2,
                    "results.vs_fp16_energy_pct": float(claimed),
                },
            )
        )
        assert "QJ219" in codes(report)


@given(st.floats(500.0, 5000.0), st.floats(-0.6, 2.5), st.integers(0, 4), st.floats(-3.0, 3.0))
@settings(max_examples=200, deadline=None, database=None)
def test_an_accepted_change_is_pinned_to_within_a_point_of_its_energies(fp16, ratio, places, offset_pp):
    quant = round(fp16 * (1 + ratio), places)
    fp16 = round(fp16, places)
    if quant <= 0 or fp16 <= 0:
        return
    exact = (quant / fp16 - 1) * 100
    report = json.loads(
        edit(
            LEGACY_REF,
            {
                "results.energy_per_token_mj": quant,
                "results.fp16_energy_per_token_mj": fp16,
                "results.vs_fp16_energy_pct": round(exact + offset_pp, 3),
            },
        )
    )
    if not codes(report) & {"QJ203", "QJ219"}:
        assert abs(offset_pp) <= 0.5 + 0.2 + 0.001


# ---- 6: near-duplicates by measured content --------------------------------------------------------------
@pytest.fixture
def merged_base(tmp_path, base_gallery, curves_data):
    repo = make_repo(tmp_path / "repo", base_gallery)
    forge = LocalForge(repo, tmp_path / "outbox")
    payload = issues_event(number=1, body=form_body(HOPPER))
    plan, _ = process(payload, "issues", repo, curves_data, forge)
    git(repo, "merge", "-q", "--ff-only", "replication/issue-1")
    return repo, forge, plan["points"][0]["path"]


def test_a_seed_only_copy_of_a_merged_report_is_a_near_duplicate(merged_base, curves_data):
    repo, forge, first = merged_base
    for number, body in (
        (2, seed_copy(5)),
        (
            3,
            edit(
                HOPPER,
                {"results.note": "mine (TEST FIXTURE)", "workload.model_id": "TinyLlama/TinyLlama-1.1B"},
            ),
        ),
    ):
        plan, _ = process(
            issues_event(number=number, body=form_body(body)), "issues", repo, curves_data, forge
        )
        (problem,) = [p for p in plan["points"][0]["problems"] if p["severity"] == "error"]
        assert problem["code"] == "QJ508" and first in problem["message"]
        assert plan["status"] == "refused" and "duplicate" in plan["labels"]["target"]
        assert plan["points"][0]["duplicate_of"]["path"] == first


def test_another_real_run_of_the_same_model_is_not_a_duplicate(merged_base, curves_data):
    repo, forge, _first = merged_base
    plan, _ = process(issues_event(number=4, body=form_body(TINY_NF4_B)), "issues", repo, curves_data, forge)
    assert plan["status"] == "accepted"


def test_eight_seed_only_copies_in_one_issue_file_once(tmp_path, base_gallery, curves_data):
    repo = make_repo(tmp_path / "repo", base_gallery)
    body = form_body([seed_copy(s) for s in range(1, 9)])
    plan, _ = process(
        issues_event(number=9, body=body), "issues", repo, curves_data, LocalForge(repo, tmp_path / "o")
    )
    assert [p["status"] for p in plan["points"]] == ["accepted"] + ["refused"] * 7
    assert all(p["problems"][-1]["code"] == "QJ508" for p in plan["points"][1:])
    assert len([p for p in plan["files"] if p.startswith("replications/")]) == 1


# ---- 7: disguised words, and evidence a legacy measurement must carry ------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "ILLUSTRATIVE",
        "ill\u200bustrative",
        "\u0456llustrative",
        "\uff29LLUSTRATIVE",
        "illu\u0301strative",
        "\U0001d422llustrative",
        "ill\u00adustrative",
        "ILL\u202eUSTRATIVE",
    ],
)
def test_disguised_words_have_the_same_skeleton(text):
    assert skeleton(text) == "illustrative"
    assert codes(json.loads(edit(LEGACY, {"results.note": f"{text} values"}))) == {"QJ202"}


def test_a_legacy_measurement_without_evidence_is_refused_whatever_its_words():
    for changes, code in (
        ({"software": {}}, "QJ220"),
        ({"measurement.sample_rate_hz": 0}, "QJ220"),
        ({"results.avg_power_watts": None}, "QJ217"),
        ({"results.throughput_tokens_per_s": None}, "QJ217"),
        ({"results.avg_power_watts": 48.4}, "QJ205"),
    ):
        report = json.loads(edit(LEGACY, {"results.note": "a perfectly normal run", **changes}))
        assert code in codes(report), changes
    assert codes(json.loads(LEGACY)) == set()


@pytest.mark.parametrize("seed", [840, 1884, 2454])
def test_a_v2_energy_whose_trailing_zeros_print_short_keeps_its_written_precision(seed):
    """measure writes 5.50000 mJ, which prints as 5.5: read as ±0.05 it left the dynamic dE% open by more
    than QJ219 allows, so the bot refused a report measure itself wrote (these seeds did). Read at the six
    figures measure writes, it is valid, and the same coarse figure still pins the stated dE% tightly."""
    rng = random.Random(seed)
    report = make_report(arch="hopper", model="Qwen2-1.5B", params_b=1.544,
                         precision=rng.choice(["NF4", "INT8"]), delta_pct=rng.uniform(-30, 200), seed=seed,
                         blocks=rng.choice([2, 3, 8, 30]), noise_pp=rng.choice([0.5, 5.0]))
    results = report["results"]
    short = [k for k in ("dynamic_energy_per_token_mj", "fp16_dynamic_energy_per_token_mj",
                         "energy_per_token_mj", "fp16_energy_per_token_mj") if len(repr(results[k])) <= 4]
    assert short, "the seed no longer yields a short-printed energy"
    assert codes(report) == set()
    results["vs_fp16_dynamic_energy_pct"] += 0.5  # within what "5.5" as ±0.05 would have allowed
    assert "QJ203" in codes(report)
