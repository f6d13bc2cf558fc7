"""The browser's checker agrees with Python on every kind of report `measure` writes and on the held corpus.

Kinds: measured (the real reports in measurements/), simulated (a full run on the
fake power source), partial (an arm that failed to load, a run interrupted while loading), reference (the
no-GPU report for every architecture, with and without a curve). The held corpus: every schema example and
every report block of the hostile corpus. Node runs gallery/static/qj*.js unchanged (test_gallery_js_parity).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gallery.rules import rules
from measure.power.fake import FakeClock
from measure.run.env import Env
from measure.run.options import RunOptions
from measure.run.runner import run
from tests.gallery.test_gallery_js_parity import _compare, run_js
from tests.measure.test_runner import _arms, _env, _opts
from tests.support.hostile.corpus import cases
from tests.support.measure_fakes import FakeWorkload

ROOT = Path(__file__).resolve().parents[2]
ARCHS = ("hopper", "ada", "ampere", "blackwell", "turing", "volta")


def _measure_kinds(tmp_path: Path) -> dict[str, list[str]]:
    """Reports written by measure.run.runner.run itself, by kind."""
    out: dict[str, list[str]] = {"simulated": [], "partial": [], "reference": []}

    def written(res) -> list[str]:
        return [p.read_text(encoding="utf-8") for p in res.paths]

    clock = FakeClock(50.0)
    out["simulated"] += written(run(_opts(tmp_path / "sim"), _env(clock, FakeWorkload(_arms(clock)))))
    for name, failure in (("oom", MemoryError("CUDA out of memory")), ("int", KeyboardInterrupt())):
        clock = FakeClock(50.0)
        workload = FakeWorkload(_arms(clock), fail_load={"INT8": failure})
        out["partial"] += written(run(_opts(tmp_path / name), _env(clock, workload)))
    for arch in ARCHS:
        for model in ({"synthetic": "qwen2-0.5b"}, {"synthetic": "qwen2.5-3b"}, {"model": "Qwen/Qwen2-7B"}):
            folder = tmp_path / "ref" / arch / str(len(out["reference"]))
            opts = RunOptions(gpu_arch=arch, out_dir=folder, **model)
            out["reference"] += written(run(opts, Env(None, None, None, reason="no CUDA GPU is visible")))
    return out


def _real_reports() -> list[str]:
    paths = sorted((ROOT / "measurements").rglob("energy*.json"))
    paths += sorted((ROOT / "measurements" / "h200").glob("*.json"))
    return [p.read_text(encoding="utf-8") for p in dict.fromkeys(paths)]


def _held_corpus() -> list[str]:
    valid = sorted((ROOT / "tests/schema/examples/valid").glob("*.json"))
    texts = [p.read_text(encoding="utf-8") for p in valid]
    texts += [
        p.read_bytes().decode("utf-8", "replace")
        for p in sorted((ROOT / "tests/schema/examples/invalid").glob("*.json"))
        if p.is_file()
    ]
    fence = re.compile(r"```json\n(.*?)\n```", re.S)
    for case in cases():
        for body in case.bodies:
            texts += fence.findall(body or "")
    return list(dict.fromkeys(texts))


def test_every_kind_measure_writes_checks_the_same_in_the_browser(tmp_path, curves):
    kinds = _measure_kinds(tmp_path)
    kinds["measured"] = _real_reports()
    assert all(kinds.values()), {k: len(v) for k, v in kinds.items()}
    texts = [t for group in kinds.values() for t in group]
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    # each kind is what it says: the reference reports are schema-valid and never measurements
    for text, browser in zip(texts, js, strict=True):
        if json.loads(text)["measurement_source"] == "reference-dataset":
            assert [p["code"] for p in browser["problems"] if p["severity"] == "error"] == []


def test_the_held_corpus_checks_the_same_in_the_browser(tmp_path, curves):
    texts = _held_corpus()
    assert len(texts) > 60
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
