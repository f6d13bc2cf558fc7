"""The hostile corpus: issue bodies and edit sequences built to break the bot, each with what it must say.

Test data, built here deterministically. The valid reports inside are the schema package's constructed test
fixtures (tests/schema/examples/valid, marked "TEST FIXTURE ... not a measurement" in their note); real
measured reports live in measurements/. Each case names the problem codes its summary comment must carry
and the overall plan status, so a case passes only when the bot refuses (or accepts) it for the right reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tests.support.webhooks import CONSENT_LINE, form_body, schema_example

HOPPER = schema_example("v2-measured-nf4-hopper.json")
VOLTA = schema_example("v2-volta-no-curve-int8.json")
LEGACY_MEASURED = schema_example("legacy-1.1-measured-direct-nvml.json")
LEGACY_REFERENCE = schema_example("legacy-1.0-interpolated.json")
REFERENCE = schema_example("v2-reference-interpolated.json")
BODY_LIMIT = 65_536
_HOPPER_MJ = json.loads(HOPPER)["results"]["energy_per_token_mj"]

# Every trick at once: raw HTML and script, a Markdown link and image, emphasis, a table breaker, mentions,
# issue and cross-repo references, GH- and commit references, autolinks, zero-width and bidi characters.
INJECT = (
    "<script>alert(1)</script><img src=x onerror=alert(2)> [click](https://evil.example/x) "
    "![px](https://evil.example/p.png) **bold** | cell | @octocat @octo-org/admins #1 #999 "
    "octo-org/quantjoule#2 GH-3 https://evil.example www.evil.example \u202eevil\u202c zero\u200bwidth "
    "\u2066iso\u2069 `tick` <!-- hidden --> &lt;b&gt;"
)
TRAVERSAL = "../../../.github/workflows/pwn\x00\x1b[31m\r\n../etc/passwd"


@dataclass(frozen=True)
class Case:
    name: str
    bodies: tuple[str | None, ...]  # the first is `opened`, each later one an `edited` event
    status: str  # the final plan's status: accepted | partial | refused | ignored
    codes: tuple[str, ...] = ()  # codes the final summary comment must name
    title: str = "[replication] hostile submission"
    login: str = "octocat"


def report(base: str = HOPPER, **changes) -> str:
    """`base` with dotted-path fields replaced (`results.note=...`); None deletes the field."""
    data = json.loads(base)
    for dotted, value in changes.items():
        *parents, leaf = dotted.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is None:
            del node[leaf]
        else:
            node[leaf] = value
    return json.dumps(data, indent=2, ensure_ascii=False)


def raw(base: str, dotted: str, literal: str) -> str:
    """`base` with the field at the dotted path written as the JSON text `literal` (a number no float
    holds, NaN, Infinity: what json.dumps never writes)."""
    marker = "\u0000raw\u0000"
    return report(base, **{dotted: marker}).replace(json.dumps(marker), literal, 1)


def padded_report(size_chars: int) -> str:
    """The Hopper fixture with its note padded so the report text is exactly `size_chars` characters."""
    text = report(**{"results.note": ""})
    return report(**{"results.note": "x" * (size_chars - len(text))})


def body_of_length(n: int, reports: list[str]) -> str:
    """A form body of exactly `n` characters: padding goes into an extra section after the licence."""
    body = form_body(reports) + "\n\n### Extra\n\n"
    assert len(body) <= n, len(body)
    return body + "y" * (n - len(body))


def plain(*blocks: str, consent: bool = True) -> str:
    """A plain issue (no form) with fenced blocks and the consent line."""
    fenced = "\n\n".join(f"```json\n{b}\n```" for b in blocks)
    return f"Here is my run.\n\n{fenced}\n\n{CONSENT_LINE if consent else ''}"


def _deep(n: int, opener: str = "[", closer: str = "]") -> str:
    return opener * n + closer * n


def _strings_everywhere(text: str) -> str:
    """Every free-text string of the report (those with no enum or pattern) set to `text`."""
    fields = (
        "tool.name",
        "tool.version",
        "system_under_test.gpu",
        "workload.model_id",
        "measurement.method",
        "results.note",
        "statistics.ci_method",
        "phases.method",
        "quality.note",
        "software.python",
        "software.torch_cuda",
        "software.nvidia_driver",
        "provenance.command",
        "provenance.host_os",
    )
    return report(**{f: text for f in fields}, **{"system_under_test.host": text[:200]})


def cases() -> list[Case]:
    half = HOPPER[: len(HOPPER) // 2]
    c = [
        # -- not JSON, or JSON that is not allowed ------------------------------------------------------
        Case("truncated-half", (form_body(half),), "refused", ("QJ005",)),
        Case("truncated-10-chars", (form_body(HOPPER[:10]),), "refused", ("QJ005",)),
        Case("trailing-comma", (form_body(HOPPER.rstrip()[:-1].rstrip() + ",}"),), "refused", ("QJ005",)),
        Case(
            "single-quotes",
            (form_body("{'schema_version': 'quantjoule-energy/2.0'}"),),
            "refused",
            ("QJ005",),
        ),
        Case(
            "nan-literal",
            (form_body(HOPPER.replace('"params_b": 1.1', '"params_b": NaN')),),
            "refused",
            ("QJ004",),
        ),
        Case(
            "infinity-literal",
            (form_body(raw(HOPPER, "results.duration_s", "Infinity")),),
            "refused",
            ("QJ004",),
        ),
        Case(
            "minus-infinity",
            (form_body(HOPPER.replace('"seed": 0', '"seed": -Infinity')),),
            "refused",
            ("QJ004",),
        ),
        Case(
            "duplicate-top-key",
            (form_body(HOPPER.replace("{", '{"measurement_source": "simulated",', 1)),),
            "refused",
            ("QJ006",),
        ),
        Case(
            "duplicate-nested-key",
            (form_body(HOPPER.replace('"basis": "measured"', '"basis": "measured", "basis": "measured"')),),
            "refused",
            ("QJ006",),
        ),
        Case("nesting-10000-arrays", (form_body(_deep(10_000)),), "refused", ("QJ007",)),
        Case(
            "nesting-10000-objects",
            (form_body('{"a":' * 10_000 + "1" + "}" * 10_000),),
            "refused",
            ("QJ503",),
        ),  # 60,001 bytes: the size limit answers before the depth scan
        Case(
            "nesting-5000-objects", (form_body('{"a":' * 5_000 + "1" + "}" * 5_000),), "refused", ("QJ007",)
        ),
        Case("nesting-unclosed", (plain("[" * 20_000),), "refused", ("QJ007",)),
        Case("top-level-array", (form_body("[1, 2, 3]"),), "refused", ("QJ008",)),
        Case("top-level-string", (form_body('"a string"'),), "refused", ("QJ008",)),
        Case("empty-block", (form_body("   "),), "refused", ("QJ001",)),
        Case(
            "lone-surrogate",
            (form_body(HOPPER.replace("fixture-host", "\ud800host")),),
            "refused",
            ("QJ003",),
        ),
        Case("no-schema-version", (form_body(report(schema_version=None)),), "refused", ("QJ009",)),
        Case(
            "unknown-schema-version",
            (form_body(report(schema_version="quantjoule-energy/9.9")),),
            "refused",
            ("QJ010",),
        ),
        # -- sizes ---------------------------------------------------------------------------------------
        Case("report-60000-chars", (form_body(padded_report(60_000)),), "accepted"),
        Case("report-60001-chars", (form_body(padded_report(60_001)),), "refused", ("QJ503",)),
        Case("body-exactly-65536", (body_of_length(BODY_LIMIT, [HOPPER]),), "accepted"),
        Case("body-65537", (body_of_length(BODY_LIMIT + 1, [HOPPER]),), "refused", ("QJ502",)),
        Case("body-300000", (body_of_length(300_000, [HOPPER]),), "refused", ("QJ502",)),
        Case("twenty-one-reports", (plain(*["{}"] * 21),), "refused", ("QJ507", "QJ009")),
        # -- wrong types and numbers ----------------------------------------------------------------------
        Case(
            "tokens-as-string",
            (form_body(report(**{"results.tokens_generated": "1024"})),),
            "refused",
            ("QJ102",),
        ),
        Case("params-as-list", (form_body(report(**{"workload.params_b": [1.1]})),), "refused", ("QJ102",)),
        Case("trials-as-object", (form_body(report(trials={"0": 1})),), "refused", ("QJ102",)),
        Case(
            "negative-energy",
            (form_body(report(**{"results.energy_per_token_mj": -_HOPPER_MJ})),),
            "refused",
            ("QJ105",),
        ),
        Case(
            "zero-energy", (form_body(report(**{"results.total_energy_joules": 0})),), "refused", ("QJ105",)
        ),
        Case("zero-tokens", (form_body(report(**{"results.tokens_generated": 0})),), "refused", ("QJ105",)),
        Case(
            "overflowing-number",
            (form_body(HOPPER.replace('"seed": 0', '"seed": 1e999')),),
            "refused",
            ("QJ206",),
        ),
        Case(
            "delta-does-not-add-up",
            (form_body(report(**{"results.vs_fp16_energy_pct": -40.0})),),
            "refused",
            ("QJ203",),
        ),
        Case(
            "per-token-does-not-add-up",
            (form_body(report(**{"results.energy_per_token_mj": 4000.0})),),
            "refused",
            ("QJ204",),
        ),
        Case("certified-true", (form_body(report(certified_benchmark_result=True)),), "refused", ("QJ104",)),
        # -- what is a measurement -------------------------------------------------------------------------
        Case(
            "measured-from-reference-dataset",
            (form_body(report(measurement_source="reference-dataset")),),
            "refused",
            ("QJ202",),
        ),
        Case(
            "measured-from-simulated",
            (form_body(report(measurement_source="simulated")),),
            "refused",
            ("QJ202",),
        ),
        Case(
            "legacy-illustrative-claims-measured",
            (form_body(schema_example("QJ202-legacy-illustrative-claims-measured.json", "invalid")),),
            "refused",
            ("QJ202",),
        ),
        Case(
            "legacy-note-disowns",
            (form_body(schema_example("QJ202-legacy-note-disowns.json", "invalid")),),
            "refused",
            ("QJ202",),
        ),
        Case("reference-report", (form_body(REFERENCE),), "refused", ("QJ506",)),
        Case("legacy-reference", (form_body(LEGACY_REFERENCE),), "refused", ("QJ506",)),
        Case("legacy-measured", (form_body(LEGACY_MEASURED),), "accepted"),
        # -- several reports ---------------------------------------------------------------------------------
        Case("three-reports-one-bad", (form_body([HOPPER, half, VOLTA]),), "partial", ("QJ005",)),
        Case("same-report-twice", (form_body([HOPPER, HOPPER]),), "partial", ("QJ505",)),
        # -- paths, control characters, free text ----------------------------------------------------------
        Case("traversal-model-name", (form_body(report(**{"workload.model_name": TRAVERSAL})),), "accepted"),
        Case(
            "traversal-arch",
            (form_body(report(**{"system_under_test.gpu_arch": "../../.github"})),),
            "refused",
            ("QJ107",),
        ),
        Case(
            "traversal-precision",
            (form_body(report(**{"workload.precision": "../NF4"})),),
            "refused",
            ("QJ103",),
        ),
        Case("traversal-handle", (form_body(HOPPER, handle=TRAVERSAL, affiliation=TRAVERSAL),), "accepted"),
        Case(
            "injection-form-fields",
            (
                form_body(
                    HOPPER,
                    handle=INJECT[:100],
                    affiliation=INJECT[100:200],
                    gpu="H200 " + INJECT[:90],
                    notes=INJECT + "\n\n" + INJECT,
                ),
            ),
            "accepted",
            ("QJ511",),
        ),
        Case("injection-report-strings", (form_body(_strings_everywhere(INJECT)),), "accepted"),
        Case("injection-model-name", (form_body(report(**{"workload.model_name": INJECT})),), "accepted"),
        Case("injection-title", (form_body(HOPPER),), "accepted", (), "[replication] " + INJECT),
        Case(
            "injection-login",
            (form_body(HOPPER, handle=None),),
            "accepted",
            (),
            "[replication] x",
            "evil<b>@octocat",
        ),
        Case(
            "mentions-everywhere",
            (
                form_body(
                    report(**{"workload.model_name": "@octocat #1"}),
                    handle="@octocat",
                    affiliation="@octo-org/admins",
                    notes="cc @octocat see #1 and octo-org/quantjoule#2",
                ),
            ),
            "accepted",
        ),
        Case(
            "zero-width-and-rtl",
            (
                form_body(
                    report(**{"workload.model_name": "Tiny\u200bLlama\u202e-1.1B"}),
                    handle="\u202eadmin\u200b\u2066",
                    notes="\ufeff\u200d\u061c",
                ),
            ),
            "accepted",
        ),
        Case(
            "bot-marker-in-body",
            (form_body(HOPPER, notes='<!-- quantjoule-bot --> <!-- quantjoule-state: {"v":1} -->'),),
            "accepted",
        ),
        # A fence opened in the notes swallows the rest of the body, licence box too (as GitHub shows it).
        Case(
            "notes-with-fences",
            (form_body(HOPPER, notes="```json\n{}\n```\n~~~\nx"),),
            "refused",
            ("QJ009", "QJ504", "QJ512"),
        ),
        Case(
            "lone-surrogate-in-fields",
            (form_body(HOPPER, handle="\ud800", affiliation="a\udfffb", notes="\ud83d"),),
            "accepted",
        ),
        Case("handle-too-long", (form_body(HOPPER, handle="h" * 10_000),), "accepted", ("QJ509",)),
        # -- intake -----------------------------------------------------------------------------------------
        Case("empty-body", ("",), "refused", ("QJ501",)),
        Case("null-body", (None,), "refused", ("QJ501",)),
        Case("raw-json-no-fence", ("I measured:\n" + HOPPER + "\n" + CONSENT_LINE,), "refused", ("QJ501",)),
        Case(
            "unterminated-fence", ("```json\n" + HOPPER + "\n" + CONSENT_LINE,), "refused", ("QJ512", "QJ504")
        ),
        Case("consent-missing", (form_body(HOPPER, consent=False),), "refused", ("QJ504",)),
        Case(
            "consent-missing-two-reports", (form_body([HOPPER, VOLTA], consent=False),), "refused", ("QJ504",)
        ),
        Case("gpu-field-disagrees", (form_body(HOPPER, gpu="RTX 4090"),), "accepted", ("QJ511",)),
        # -- edits ----------------------------------------------------------------------------------------
        Case("edit-good-to-bad", (form_body(HOPPER), form_body(half)), "refused", ("QJ005",)),
        Case(
            "edit-good-to-spoofed",
            (form_body(HOPPER), form_body(report(measurement_source="simulated"))),
            "refused",
            ("QJ202",),
        ),
        Case("edit-bad-to-good", (form_body(half), form_body(HOPPER)), "accepted"),
        Case("edit-good-to-empty", (form_body(HOPPER), ""), "refused", ("QJ501",)),
    ]
    from tests.support.hostile import corpus_13

    c += corpus_13.cases(Case)
    names = [case.name for case in c]
    assert len(names) == len(set(names)), "case names are unique"
    return c
