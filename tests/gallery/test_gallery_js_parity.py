"""The browser's check panel grades like Python: the qj*.js checker under node against `bot grade`, in bulk.

gallery/static/qj*.js are the files the site ships; node runs them unchanged (the same code Chromium runs
in the panel, which test_gallery_browser.py drives for a few reports end to end).
"""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
from pathlib import Path

from gallery.plots import place
from gallery.rules import rules
from tests.support.gallery_records import MODELS, make_legacy_report, make_report
from tests.support.tooling import require_tool

RUNNER = Path(__file__).with_name("js_check_runner.js")
ARCHS = ("ada", "ampere", "blackwell", "turing", "hopper", "volta")


def _node() -> str:
    return require_tool("node", "apt-get install nodejs")


def run_js(tmp_path: Path, payload: dict) -> object:
    path = tmp_path / "input.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    done = subprocess.run(
        [_node(), str(RUNNER), str(path)], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


def generated_texts(seed: int = 11, n: int = 400) -> list[str]:
    """Valid reports all over the size range and the verdict rule: every arch, both precisions, 1-30 pairs,
    noise from tight to loose, deltas from strong savings to +250 %, legacy reports and FP16 baselines."""
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        model, size = rng.choice(MODELS)
        report = make_report(
            arch=rng.choice(ARCHS),
            model=model,
            params_b=size,
            precision=rng.choice(("NF4", "INT8")),
            delta_pct=rng.uniform(-60, 250),
            seed=seed * 1000 + i,
            blocks=rng.choice((1, 2, 3, 8, 30)),
            noise_pp=rng.choice((0.05, 1.0, 5.0, 25.0)),
            weights=rng.choice(("pretrained", "random-init")),
            backend=rng.choice(("eager", "eager", "eager", "static")),
        )
        texts.append(json.dumps(report, indent=rng.choice((None, 1))))
    for _ in range(60):
        model, size = rng.choice(MODELS)
        texts.append(
            json.dumps(
                make_legacy_report(
                    arch=rng.choice(ARCHS),
                    model=model,
                    params_b=size,
                    precision=rng.choice(("NF4", "INT8")),
                    delta_pct=rng.uniform(-50, 200),
                )
            )
        )
    return texts


def _base() -> dict:
    return make_report(arch="ada", model="Qwen2-7B", params_b=7.616, precision="NF4", delta_pct=-20.0, seed=5)


def _mutate(fn) -> str:
    report = _base()
    fn(report)
    return json.dumps(report)


def broken_texts() -> list[str]:
    """Each reaches a different check: reading, JSON Schema keywords, semantic and v2 consistency rules."""

    def scale(path: tuple, factor: float):
        def apply(r):
            node = r
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = node[path[-1]] * factor

        return apply

    def set_(path: tuple, value):
        def apply(r):
            node = r
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value

        return apply

    def delete(path: tuple):
        def apply(r):
            node = r
            for key in path[:-1]:
                node = node[key]
            del node[path[-1]]

        return apply

    texts = [
        "",
        "   ",
        "{",
        "[1, 2]",
        '"text"',
        "null",
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": 1, "a": 2}',
        "[" * 40 + "]" * 40,
        "{}",
        '{"schema_version": 2}',
        '{"schema_version": "other/9"}',
        "\ufeff" + json.dumps(_base()),
        json.dumps(_base()) + "\n",
        json.dumps(_base()) + " x",
        json.dumps({"x": "a" * 70_000}),
        '{"schema_version": "quantjoule-energy/2.0", "v": 1e999}',
        '{"schema_version": "quantjoule-energy/2.0", "v": "\\u00e9\\t"}',
        '{"k": "tab\there"}',
        json.dumps({**_base(), "results": {**_base()["results"], "note": "a", "note2": 1}}),
    ]
    mutations = [
        delete(("results", "basis")),
        delete(("workload",)),
        delete(("schema_version",)),
        set_(("workload", "params_b"), "7.6"),
        set_(("workload", "params_b"), -1),
        set_(("workload", "params_b"), 3.0),
        set_(("measurement_source",), "bogus"),
        set_(("measurement_source",), "simulated"),
        set_(("measurement_source",), "reference-dataset"),
        set_(("certified_benchmark_result",), True),
        set_(("extra_field",), 1),
        set_(("timestamp_utc",), "yesterday"),
        set_(("timestamp_utc",), "2026-11-20T10:00:00Z\n"),
        set_(("system_under_test", "gpu_arch"), "pascal"),
        set_(("system_under_test", "gpu_arch"), "Ada Lovelace"),
        set_(("results", "vs_fp16_energy_pct"), 5.0),
        scale(("results", "total_energy_joules"), 1.2),
        scale(("results", "avg_power_watts"), 2.0),
        set_(("results", "avg_power_watts"), 5000.0),
        set_(("results", "tokens_generated"), 100),
        set_(("statistics", "n_pairs"), 3),
        set_(("statistics", "n_pairs"), 8.0),
        scale(("arms", "NF4", "energy_per_token_mj"), 1.5),
        set_(("trials", 0, "trace_energy_j"), 99.0),
        set_(("trials", 1, "status"), "failed"),
        set_(("results", "note"), "illustrative numbers"),
        set_(("workload", "precision"), "FP16"),
        set_(("workload", "precision"), "FP8"),
        set_(("workload", "weights"), "random"),
        set_(("protocol", "cooldown"), {"rule": "fixed-wait"}),
        set_(("statistics",), None),
        set_(("statistics", "delta_e_pct", "ci95_half_width_pp"), 99.0),
        set_(("results", "basis"), "interpolated"),
        set_(("trials",), []),
        set_(("software", "matches_reference_pins"), False),
        set_(("workload", "model_name"), "TinyLlama-1.1B-Chat-v1.0"),
        set_(("workload", "backend"), "static"),
    ]
    texts += [_mutate(m) for m in mutations]
    legacy = make_legacy_report(
        arch="ampere", model="Mistral-7B", params_b=7.242, precision="INT8", delta_pct=130.0
    )
    for change in (
        {"measurement_source": "ILLUSTRATIVE (synthetic)"},
        {"measurement_source": "ecocompute-dataset"},
        {"benchmark": None},
        {"extra": 1},
        # #13: a homoglyph and a zero-width space do not hide the word; no software, no measurement
        {"measurement_source": "\u0456llu\u200bstrative"},
        {"software": {"python": "3.11"}},
        {"results": {**legacy["results"], "note": "s\u0456mulated"}},
        {"results": {**legacy["results"], "energy_per_token_mj": 3, "fp16_energy_per_token_mj": 2,
                     "vs_fp16_energy_pct": 50.0, "total_energy_joules": 7.68}},
        {"results": {**legacy["results"], "throughput_tokens_per_s": 20.0}},
        {"timestamp_utc": "2026-13-01T00:00:00Z"},
    ):
        variant = copy.deepcopy(legacy)
        variant.update(change)
        texts.append(json.dumps(variant))
    texts += hostile_texts()
    return texts


def hostile_texts() -> list[str]:
    """#13's inputs where the browser and the bot must agree: lone surrogates, big integers, subnormals,
    a GPU of another architecture, summary figures the trials do not give, impossible dates, counter vs
    trace beyond 5 %."""
    head = '{"schema_version": "quantjoule-energy/2.0", '
    base = _base()

    def changed(fn) -> str:
        report = copy.deepcopy(base)
        fn(report)
        return json.dumps(report)

    def trace_off(factor: float, threshold: float | None = None):
        def apply(r):
            r["trials"][0]["trace_energy_j"] = r["trials"][0]["counter_energy_j"] * factor
            if threshold is not None:
                r["agreement"]["threshold_pct"] = threshold
        return apply

    return [
        head + '"host": "\\ud800"}',
        head + '"\\udfff": 1}',
        head + '"ok": "\\ud83d\\ude00"}',
        head + '"seed": 12345678901234567890}',
        head + '"seed": -9007199254740992, "n": 9007199254740991}',
        head + '"x": 5e-324, "y": 2.2250738585072014e-308}',
        json.dumps(base).replace('"seed": 5', '"seed": ' + "9" * 400),
        changed(lambda r: r["system_under_test"].update(gpu_arch="hopper")),
        changed(lambda r: r["system_under_test"].update(gpu="Mystery Accelerator 9000")),
        changed(lambda r: r["statistics"]["delta_e_pct"].update(sd=50.0)),
        changed(lambda r: r["statistics"]["delta_e_pct"].update(sd=None)),
        changed(lambda r: r["statistics"].update(delta_e_pct=None)),
        changed(lambda r: r.update(timestamp_utc="2026-02-29T10:00:00Z")),
        changed(lambda r: r.update(timestamp_utc="2028-02-29T24:00:00Z")),
        changed(trace_off(2.0)),
        changed(trace_off(1.03, 2.0)),
        changed(lambda r: r["results"].update(note="ill\u200bustrative, n\u043et real")),
        changed(lambda r: r["measurement"].update(tokens_per_run=512)),
        changed(lambda r: r["trials"][0].update(tokens=128)),
    ]


def _compare(texts: list[str], js: list[dict], curves: dict) -> list[str]:
    from assess import assess

    mismatches = []
    for text, browser in zip(texts, js, strict=True):
        python = assess(text, curves).graded_dict()
        py_codes = sorted((p["code"], p["path"], p["severity"]) for p in python["problems"])
        js_codes = sorted((p["code"], p["path"], p["severity"]) for p in browser["problems"])
        if py_codes != js_codes:
            mismatches.append(f"problems differ for {text[:80]!r}: {py_codes} vs {js_codes}")
        if (python["verdict"] is None) != (browser["verdict"] is None):
            mismatches.append(f"verdict presence differs for {text[:80]!r}")
        elif python["verdict"] is not None:
            for key, value in python["verdict"].items():
                other = browser["verdict"].get(key)
                same = (
                    math.isclose(value, other, rel_tol=0, abs_tol=0)
                    if isinstance(value, float) and isinstance(other, (int, float))
                    else value == other
                )
                if not same:
                    mismatches.append(f"{key}: python {value!r} vs browser {other!r} for {text[:60]!r}")
    return mismatches


def test_browser_verdicts_equal_python_verdicts_on_many_reports(tmp_path, curves):
    texts = generated_texts()
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    labels = [v["verdict"]["label"] for v in js]
    assert {labels.count(x) > 20 for x in ("confirmation", "contradiction", "ungraded")} == {True}


def test_browser_problem_codes_equal_python_codes_on_broken_reports(tmp_path, curves):
    texts = broken_texts()
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    codes = {p["code"] for result in js for p in result["problems"]}
    # The corpus reaches every family of checks the panel ports.
    for code in (
        "QJ001",
        "QJ002",
        "QJ004",
        "QJ005",
        "QJ006",
        "QJ007",
        "QJ008",
        "QJ009",
        "QJ010",
        "QJ101",
        "QJ102",
        "QJ103",
        "QJ104",
        "QJ106",
        "QJ107",
        "QJ109",
        "QJ201",
        "QJ202",
        "QJ203",
        "QJ205",
        "QJ206",
        "QJ208",
        "QJ210",
        "QJ211",
        "QJ212",
        "QJ213",
        "QJ214",
        "QJ215",
        "QJ216",
        "QJ003",
        "QJ012",
        "QJ218",
        "QJ219",
        "QJ220",
        "QJ221",
        "QJ222",
    ):
        assert code in codes, code


def test_curve_prediction_and_placement_match_python(tmp_path, curves):
    from curves import predict
    from gallery.plots import geometry
    from gallery.render import compose

    sizes = [0.05 * 1.07**k for k in range(120)]
    keys = sorted(curves["groups"])
    script = (
        "const c = require(process.argv[1]);"
        "const d = JSON.parse(require('fs').readFileSync(process.argv[2]));"
        "const out = {pred: d.keys.map(k => d.sizes.map(n => c.predictGroup(d.curves.groups[k], n))),"
        " place: d.points.map(p => c.placeOnPlot(d.geom, p[0], p[1])),"
        " hypot: d.pairs.map(p => c.hypot(p[0], p[1]))};"
        "process.stdout.write(JSON.stringify(out));"
    )
    spec = next(iter(compose([], curves).specs.values()))
    rng = random.Random(2)
    points = [(rng.uniform(0.1, 40), rng.uniform(-150, 400)) for _ in range(200)]
    pairs = [(rng.uniform(0, 50), rng.uniform(0, 50)) for _ in range(2000)]
    data = {
        "keys": keys,
        "sizes": sizes,
        "curves": curves,
        "geom": geometry(spec),
        "points": points,
        "pairs": pairs,
    }
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    check_js = str(RUNNER)
    out = json.loads(
        subprocess.run(
            [_node(), "-e", script, check_js, str(path)], capture_output=True, text=True, check=True
        ).stdout
    )
    for key, row in zip(keys, out["pred"], strict=True):
        for size, (mean, sd) in zip(sizes, row, strict=True):
            want_mean, want_sd = predict(curves, key, size)
            assert math.isclose(mean, want_mean, rel_tol=1e-13, abs_tol=1e-12)
            assert math.isclose(sd, want_sd, rel_tol=1e-13)
    for (size, delta), got in zip(points, out["place"], strict=True):
        left, top, clipped = place(geometry(spec), size, delta)
        assert (round(got["left"], 3), round(got["top"], 3), got["clipped"]) == (left, top, clipped)
    assert out["hypot"] == [math.hypot(a, b) for a, b in pairs]


def test_browser_and_python_agree_on_the_committed_real_reports(tmp_path, curves):
    # Real H200 reports: direct 256-token campaign runs (anchors of the Hopper curve: self-anchored),
    # 8-token reconstruction runs and the old 32-token files (another condition: QJ309 or ungraded).
    root = Path(__file__).resolve().parents[2]
    # energy-<precision>.json from a run of both precisions, energy.json from a run of one
    paths = sorted((root / "measurements").glob("**/energy*.json")) + sorted(
        (root / "measurements" / "h200").glob("*.json"))
    texts = [p.read_text(encoding="utf-8") for p in paths]
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    quals = [set(v["verdict"]["qualifiers"]) for v in js if v["verdict"]]
    codes = {v["verdict"]["reason_code"] for v in js if v["verdict"]}
    assert any("self-anchored" in q for q in quals) and "QJ309" in codes
    assert all(v["verdict"]["min_detectable_pp"] is not None for v in js
               if v["verdict"] and v["verdict"]["label"] != "ungraded")


def test_threshold_zero_int8_is_another_condition_in_both(tmp_path, curves):
    from tests.support.gallery_records import make_report

    base = make_report(arch="ada", model="TinyLlama-1.1B", precision="INT8", params_b=1.1, delta_pct=140.0,
                       seed=3)
    texts = []
    for threshold in (6, 6.0, 0, 0.0, 3.5):
        r = copy.deepcopy(base)
        r["workload"]["int8_outlier_threshold"] = threshold
        texts.append(json.dumps(r))
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    codes = [v["verdict"]["reason_code"] for v in js]
    assert codes[:2] == [None, None] and codes[2:] == ["QJ309"] * 3
    assert "INT8 outlier threshold 0 (not LLM.int8()" in js[2]["verdict"]["reason"]


def test_planted_outlier_reports_are_another_condition_in_both(tmp_path, curves):
    texts = []
    for precision, plant in (("INT8", None), ("INT8", {"dims": 4, "scale": 20.0}),
                             ("NF4", {"dims": 64, "scale": 12.5}), ("NF4", {})):
        r = make_report(arch="ada", model="TinyLlama-1.1B", precision=precision, params_b=1.1,
                        delta_pct=140.0 if precision == "INT8" else 20.0, seed=4)
        if plant is not None:
            r["workload"]["outlier_plant"] = plant
        texts.append(json.dumps(r))
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    assert [v["verdict"]["reason_code"] for v in js][1:3] == ["QJ309", "QJ309"]
    assert "planted outlier features (64 hidden dims at scale 12.5)" in js[2]["verdict"]["reason"]


def test_a_known_model_is_found_from_its_id_or_variant_in_both(tmp_path, curves):
    """A real campaign run renamed (model_id kept) or named by its Hugging Face id is still graded against
    that model's own runs, in the browser as in Python; with no known name or id it is another model."""
    root = Path(__file__).resolve().parents[2]
    base = json.loads((root / "measurements" / "hopper-campaign" / "qwen2.5-3b-d2-nf4" / "energy.json")
                      .read_text(encoding="utf-8"))
    texts = []
    for name, model_id in (("Qwen2.5-3B", "synthetic:qwen2.5-3b"), ("my-own-3b", "synthetic:qwen2.5-3b"),
                           ("Qwen/Qwen2.5-3B-Instruct", "Qwen/Qwen2.5-3B-Instruct"),
                           ("my-own-3b", "local:my-own-3b")):
        r = copy.deepcopy(base)
        r["workload"]["model_name"], r["workload"]["model_id"] = name, model_id
        texts.append(json.dumps(r))
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    assert [v["verdict"]["ref_source"] for v in js] == ["runs", "runs", "runs", "anchors"]
