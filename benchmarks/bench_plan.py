"""Benchmark: planning one submission with 100 records on file (target: under 1 s).

Builds a checkout with 100 records (the schema package's constructed example reports, varied so each has
its own sha256) and their committed gallery, then times `bot.pipeline.plan_event` on one new issue event:
reading the records and the gallery from disk, intake, validation, grading, duplicate checks, the records,
the re-rendered plot and README, the comment and the PR body. Imports and the one-off setup are not timed.

    python -m benchmarks.bench_plan [--records 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import curves
import gallery
from bot.intake import read_event
from bot.pipeline import plan_event
from bot.plan import make_record
from schema.records import canonical_sha256, record_bytes, record_path
from tests.support.webhooks import form_body, issues_event, schema_example

EXAMPLES = (
    "v2-measured-nf4-hopper.json",
    "v2-volta-no-curve-int8.json",
    "legacy-1.1-measured-direct-nvml.json",
)


def scaled(report: dict, factor: float) -> dict:
    """The report as if every energy (and so every power) were `factor` times what it is: the same dE%, its
    own measured content (so it is no near-duplicate of another record on file)."""
    def times(block: dict, keys: tuple, places: int = 3) -> None:
        for key in keys:
            if isinstance(block.get(key), (int, float)) and not isinstance(block.get(key), bool):
                block[key] = round(block[key] * factor, places)

    energy = ("energy_per_token_mj", "fp16_energy_per_token_mj", "total_energy_joules",
              "dynamic_energy_per_token_mj", "fp16_dynamic_energy_per_token_mj")
    times(report["results"], energy)
    times(report["results"], ("avg_power_watts",), 2)
    for trial in report.get("trials") or []:
        times(trial, ("counter_energy_j", "trace_energy_j", "dynamic_energy_j"))
        times(trial, ("mean_power_w",), 2)
    for arm in (report.get("arms") or {}).values():
        times(arm, ("energy_per_token_mj", "dynamic_energy_per_token_mj"))
        times(arm, ("mean_power_w",), 2)
    return report


def make_checkout(root: Path, n_records: int, curves_data: dict) -> None:
    """`n_records` accepted records, shaped as the bot writes them, and their committed gallery."""
    records, used = {}, set()
    for i in range(n_records):
        report = scaled(json.loads(schema_example(EXAMPLES[i % len(EXAMPLES)])), 1 + 0.003 * (i // 3 + 1))
        report["timestamp_utc"] = f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"
        sub = read_event(issues_event(number=100 + i, body=form_body(json.dumps(report))), "issues")
        verdict = curves.grade(report, curves_data).to_dict()
        records[record_path(sub.issue, report, used)] = make_record(
            sub, report, canonical_sha256(report), verdict, curves_data
        )
    for path, record in records.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(record_bytes(record))
    for path, content in gallery.render_files([records[p] for p in sorted(records)], curves_data).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    curves_data = curves.load_curves()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        make_checkout(root, args.records, curves_data)
        setup_s = time.perf_counter() - t0
        report = scaled(json.loads(schema_example("v2-measured-nf4-hopper.json")), 0.9)
        report["timestamp_utc"] = "2026-11-30T00:00:00Z"
        payload = issues_event(number=9999, body=form_body(json.dumps(report, indent=2)))
        times, plan = [], None
        for _ in range(args.repeat):
            t = time.perf_counter()
            plan = plan_event(copy.deepcopy(payload), "issues", root, curves_data)
            times.append(time.perf_counter() - t)
    print(f"records on file: {args.records} (setup {setup_s:.1f} s, not timed)")
    print(
        f"plan status: {plan['status']}, verdict {plan['points'][0]['label']}, "
        f"files in the PR: {len(plan['files'])}"
    )
    print(
        f"planning one submission: median {statistics.median(times):.3f} s, min {min(times):.3f} s, "
        f"max {max(times):.3f} s over {args.repeat} runs"
    )
    ok = statistics.median(times) < 1.0
    print("target < 1 s: " + ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
