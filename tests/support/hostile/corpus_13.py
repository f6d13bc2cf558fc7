"""Hostile cases of issue #13, run with the rest of the corpus through the real bot path (tests/hostile).

Each class of the issue has inputs here that the original corpus did not hold: escapes that decode to lone
surrogates, integers no float holds, an H200 that says it is Ada, summary figures the trials do not give,
integer-valued legacy energies, seed-only copies, disguised "illustrative" sources, consent lines that are
negated, quoted, hidden, fenced or struck through, reports inside HTML comments, bot accounts, dates that do
not exist or lie in the future, and counter and trace 100 % apart. Test data built here deterministically
from the schema package's constructed fixtures (marked TEST FIXTURE) and the project's committed H200 reports.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.hostile.corpus import raw
from tests.support.webhooks import CONSENT_LINE, form_body, schema_example

ROOT = Path(__file__).resolve().parents[3]
HOPPER = schema_example("v2-measured-nf4-hopper.json")
HOPPER_MEAN = json.loads(HOPPER)["statistics"]["delta_e_pct"]["mean"]
LEGACY = schema_example("legacy-1.1-measured-direct-nvml.json")
LEGACY_REF = schema_example("legacy-1.0-interpolated.json")
# Two real runs of one model and precision on one card (different sessions): both must be filed.
TINY_NF4 = (ROOT / "measurements/h200/2026-12-02-tinyllama-1.1b-eager-nf4.json").read_text(encoding="utf-8")
TINY_NF4_B = (ROOT / "measurements/h200/2026-12-02-tinyllama-1.1b-eager-trials3-nf4.json").read_text(
    encoding="utf-8"
)
# A real run whose phases carry the reconstructed 256-token figure and its per-block list.
QWEN_NF4 = (ROOT / "measurements/h200/2026-12-02-qwen2-0.5b-eager-nf4.json").read_text(encoding="utf-8")


def edit(base: str, changes: dict) -> str:
    """`base` with dotted-path fields set (`statistics.delta_e_pct.sd`); None as a value writes null."""
    data = json.loads(base)
    for dotted, value in changes.items():
        *parents, leaf = dotted.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(leaf)] = value
        else:
            node[leaf] = value
    return json.dumps(data, indent=2, ensure_ascii=False)


def seed_copy(seed: int) -> str:
    """The Hopper fixture re-filed with only its seed, note and tool version changed; written compact, as
    `measure` writes a report too long to paste indented, so eight fit in one issue body."""
    text = edit(
        HOPPER,
        {
            "protocol.seed": seed,
            "results.note": f"run {seed} (TEST FIXTURE)",
            "tool.version": f"0.1.{seed}",
            "timestamp_utc": f"2026-12-01T{seed % 24:02d}:00:00Z",
        },
    )
    return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)


def relabelled_copy() -> str:
    """The Hopper NF4 fixture's trials presented again, every timing kept, under a new seed and host."""
    return edit(HOPPER, {"protocol.seed": 99, "system_under_test.host": "another-host"})


def trace_off(factor: float) -> str:
    data = json.loads(HOPPER)
    for trial in data["trials"]:
        trial["trace_energy_j"] = round(trial["counter_energy_j"] * factor, 3)
    return json.dumps(data, indent=2)


def plain(*blocks: str, extra: str = "", consent: str | None = CONSENT_LINE) -> str:
    fenced = "\n\n".join(f"```json\n{b}\n```" for b in blocks)
    return f"My run.\n\n{fenced}\n\n{extra}\n\n{consent or ''}"


def cases(case) -> list:
    """The #13 cases, built with the corpus's Case type (passed in to avoid a circular import)."""
    licence = "I license this report under CC BY 4.0"
    return [
        # 1: text that is not UTF-8 once written is refused before a record exists
        case(
            "13-escape-lone-high-surrogate",
            (form_body(HOPPER.replace('"fixture-host"', '"\\ud800"')),),
            "refused",
            ("QJ003",),
        ),
        case(
            "13-escape-lone-low-surrogate-in-a-key",
            (form_body(HOPPER.replace('"host": "fixture-host"', '"host": "fixture-host", "\\udfff": 1')),),
            "refused",
            ("QJ003",),
        ),
        case(
            "13-escape-surrogate-pair-is-fine",
            (form_body(HOPPER.replace('"fixture-host"', '"fixture-\\ud83d\\ude00-host"')),),
            "accepted",
        ),
        case(
            "13-escape-surrogate-in-model-name",
            (form_body(edit(HOPPER, {}).replace('"TinyLlama-1.1B"', '"TinyLlama-1.1B\\udc00"')),),
            "refused",
            ("QJ003",),
        ),
        # 2: integers no float holds, subnormals, huge floats
        case(
            "13-tokens-400-digits",
            (form_body(raw(HOPPER, "results.tokens_generated", "1" + "0" * 399)),),
            "refused",
            ("QJ012",),
        ),
        case(
            "13-seed-2-to-the-64", (form_body(edit(HOPPER, {"protocol.seed": 2**64})),), "refused", ("QJ012",)
        ),
        case(
            "13-negative-big-block",
            (form_body(edit(HOPPER, {"trials.0.block": -(2**60)})),),
            "refused",
            ("QJ012",),
        ),
        case(
            "13-subnormal-duration",
            (form_body(raw(HOPPER, "trials.0.duration_s", "5e-324")),),
            "refused",
            ("QJ012",),
        ),
        case(
            "13-energy-1e308",
            (form_body(edit(HOPPER, {"trials.0.counter_energy_j": 1e308})),),
            "refused",
            ("QJ205",),
        ),
        # 3: the architecture follows from the GPU name
        case(
            "13-h200-says-ada",
            (form_body(edit(HOPPER, {"system_under_test.gpu_arch": "ada"})),),
            "refused",
            ("QJ218",),
        ),
        case(
            "13-rtx4090-says-hopper",
            (form_body(edit(HOPPER, {"system_under_test.gpu": "NVIDIA GeForce RTX 4090"}), gpu="RTX 4090"),),
            "refused",
            ("QJ218",),
        ),
        case(
            "13-unknown-gpu-keeps-its-arch",
            (form_body(edit(HOPPER, {"system_under_test.gpu": "Prototype Accelerator X"}), gpu=None),),
            "accepted",
        ),
        # 4: summary figures recomputed from the trials
        case(
            "13-sd-inflated-to-50",
            (form_body(edit(HOPPER, {"statistics.delta_e_pct.sd": 50.0})),),
            "refused",
            ("QJ213",),
        ),
        case(
            "13-sd-nulled",
            (form_body(edit(HOPPER, {"statistics.delta_e_pct.sd": None})),),
            "refused",
            ("QJ213",),
        ),
        case(
            "13-summary-nulled",
            (form_body(edit(HOPPER, {"statistics.delta_e_pct": None})),),
            "refused",
            ("QJ213",),
        ),
        case(
            "13-ci-widened",
            (
                form_body(
                    edit(
                        HOPPER,
                        {
                            "statistics.delta_e_pct.ci95_low": 0.0,
                            "statistics.delta_e_pct.ci95_high": 2 * HOPPER_MEAN,
                            "statistics.delta_e_pct.ci95_half_width_pp": HOPPER_MEAN,
                        },
                    )
                ),
            ),
            "refused",
            ("QJ213",),
        ),
        case(
            "13-reconstructed-mean-forged",
            (form_body(edit(QWEN_NF4, {"phases.reconstructed_delta_e_pct.mean": -5.0})),),
            "refused",
            ("QJ213",),
        ),
        case(
            "13-reconstructed-block-forged",
            (form_body(edit(QWEN_NF4, {"phases.per_block_reconstructed_delta_e_pct.0": -40.0})),),
            "refused",
            ("QJ213",),
        ),
        case("13-real-report-as-measured", (form_body(QWEN_NF4),), "accepted"),
        # the grader's condition: a 32-token run may not claim whole 256-token generations
        case(
            "13-tokens-per-run-claims-256",
            (form_body(edit(QWEN_NF4, {"measurement.tokens_per_run": 256})),),
            "refused",
            ("QJ215",),
        ),
        case(
            "13-trials-claim-256-tokens",
            (form_body(edit(QWEN_NF4, {"measurement.tokens_per_run": 256, "protocol.block_tokens": 256})),),
            "refused",
            ("QJ215",),
        ),
        # 5: integer-valued legacy energies may not leave the stated dE% open
        case(
            "13-legacy-integer-energies",
            (
                form_body(
                    edit(
                        LEGACY_REF,
                        {
                            "results.energy_per_token_mj": 3,
                            "results.fp16_energy_per_token_mj": 2,
                            "results.vs_fp16_energy_pct": 80.0,
                        },
                    )
                ),
            ),
            "refused",
            ("QJ219",),
        ),
        case(
            "13-legacy-integer-energies-measured",
            (
                form_body(
                    edit(
                        LEGACY,
                        {
                            "results.energy_per_token_mj": 3,
                            "results.fp16_energy_per_token_mj": 2,
                            "results.vs_fp16_energy_pct": 1.0,
                            "results.total_energy_joules": 7.68,
                            "results.avg_power_watts": 0.081,
                        },
                    )
                ),
            ),
            "refused",
            ("QJ219",),
        ),
        # 6: seed-only copies are near-duplicates, within an issue too
        case(
            "13-eight-seed-only-copies",
            (form_body([seed_copy(s) for s in range(1, 9)]),),
            "partial",
            ("QJ508",),
        ),
        case(
            "13-exact-and-relabelled-copies", (form_body([HOPPER, relabelled_copy()]),), "partial", ("QJ508",)
        ),
        case("13-two-runs-of-one-model", (form_body([TINY_NF4, TINY_NF4_B]),), "accepted"),
        # 7: words are matched on their skeleton, and a legacy measurement needs its evidence
        case(
            "13-zero-width-illustrative",
            (form_body(edit(LEGACY, {"results.note": "ill\u200bustrative values, n\u200bot real"})),),
            "refused",
            ("QJ202",),
        ),
        case(
            "13-homoglyph-source",
            (form_body(edit(LEGACY, {"measurement_source": "\u0456llustrat\u0456ve (synthet\u0456c)"})),),
            "refused",
            ("QJ202",),
        ),
        case(
            "13-fullwidth-and-accent-note",
            (
                form_body(
                    edit(
                        LEGACY,
                        {
                            "results.note": "\uff29\uff2c\uff2c\uff35\uff33\uff34\uff32\uff21\uff34"
                            "\uff29\uff36\uff25 simula\u0301ted"
                        },
                    )
                ),
            ),
            "refused",
            ("QJ202",),
        ),
        case(
            "13-paraphrase-without-software",
            (form_body(edit(LEGACY, {"results.note": "numbers for layout only", "software": {}})),),
            "refused",
            ("QJ220",),
        ),
        case(
            "13-legacy-without-sample-rate",
            (form_body(edit(LEGACY, {"measurement.sample_rate_hz": 0})),),
            "refused",
            ("QJ220",),
        ),
        case(
            "13-legacy-power-inconsistent",
            (form_body(edit(LEGACY, {"results.avg_power_watts": 48.4})),),
            "refused",
            ("QJ205",),
        ),
        # 8: what counts as consent, and what is a report
        case(
            "13-consent-negated",
            (plain(HOPPER, consent="- [x] I do not license this report under CC BY 4.0"),),
            "refused",
            ("QJ504",),
        ),
        case(
            "13-consent-negated-after",
            (plain(HOPPER, consent=f"- [x] {licence}. Not really."),),
            "refused",
            ("QJ504",),
        ),
        case("13-consent-quoted", (plain(HOPPER, consent=f"> - [x] {licence}"),), "refused", ("QJ504",)),
        case(
            "13-consent-in-a-comment",
            (plain(HOPPER, consent=f"<!--\n- [x] {licence}\n-->"),),
            "refused",
            ("QJ504",),
        ),
        case(
            "13-consent-inline-comment",
            (plain(HOPPER, consent=f"<!-- - [x] {licence} -->"),),
            "refused",
            ("QJ504",),
        ),
        case(
            "13-consent-fenced", (plain(HOPPER, consent=f"```\n- [x] {licence}\n```"),), "refused", ("QJ504",)
        ),
        case(
            "13-consent-indented-code",
            (plain(HOPPER, consent=f"    - [x] {licence}"),),
            "refused",
            ("QJ504",),
        ),
        case("13-consent-struck", (plain(HOPPER, consent=f"- [x] ~~{licence}~~"),), "refused", ("QJ504",)),
        case(
            "13-consent-homoglyph-box",
            (plain(HOPPER, consent=f"- [\u0445] {licence}"),),
            "refused",
            ("QJ504",),
        ),
        case(
            "13-consent-with-comment-inside",
            (plain(HOPPER, consent="- [x] I license this report <!-- x -->under CC BY 4.0"),),
            "accepted",
        ),
        case(
            "13-report-in-a-comment",
            (f"<!--\n```json\n{HOPPER}\n```\n-->\n\n{CONSENT_LINE}",),
            "refused",
            ("QJ501",),
        ),
        case(
            "13-report-after-an-unclosed-comment",
            (f"{CONSENT_LINE}\n\n<!-- hidden from here\n```json\n{HOPPER}\n```",),
            "refused",
            ("QJ501",),
        ),
        case(
            "13-second-report-in-a-comment",
            (plain(HOPPER, extra=f"<!-- ```json\n{schema_example('v2-volta-no-curve-int8.json')}\n``` -->"),),
            "accepted",
        ),
        case(
            "13-bot-account",
            (form_body(HOPPER),),
            "refused",
            ("QJ519",),
            "[replication] x",
            "helper-bot[bot]",
        ),
        # 11: dates, counter vs trace
        case(
            "13-timestamp-next-year",
            (form_body(edit(HOPPER, {"timestamp_utc": "2027-12-02T13:00:00Z"})),),
            "refused",
            ("QJ221",),
        ),
        case(
            "13-timestamp-february-30",
            (form_body(edit(HOPPER, {"timestamp_utc": "2026-02-30T13:00:00Z"})),),
            "refused",
            ("QJ221",),
        ),
        case(
            "13-legacy-timestamp-words",
            (form_body(edit(LEGACY, {"timestamp_utc": "last tuesday"})),),
            "refused",
            ("QJ221",),
        ),
        case("13-counter-trace-100-pct", (form_body(trace_off(2.0)),), "refused", ("QJ222",)),
        case(
            "13-counter-trace-threshold-raised",
            (form_body(edit(trace_off(1.5), {"agreement.threshold_pct": 50.0})),),
            "refused",
            ("QJ222",),
        ),
        case(
            "13-bidi-everywhere",
            (
                form_body(
                    edit(
                        HOPPER,
                        {
                            "workload.model_name": "Tiny\u202eLlama-1.1B",
                            "system_under_test.gpu": "NVIDIA H200\u2066",
                        },
                    ),
                    handle="\u202eadmin",
                    affiliation="Lab\u2067x",
                    gpu=None,
                ),
            ),
            "accepted",
        ),
    ]
