"""Pools `benchmarks.chunk_pairing` runs: does taking turns chunk by chunk narrow the paired ratio, and
does it move it? (No GPU needed; figures are recomputed from every run's windows.)

Per run and scheme it prints dE% and the paired sd (from `chunk_pairing.analyse`); pooled over runs the
sd of each scheme is the root of the dof-weighted mean variance (each run has its own host state, so
runs are not merged into one sample). Then: the variance ratio whole/chunked with its one-sided F-test
p, the blocks each scheme would need for a ±3 pp interval (t(n−1)·sd/√n ≤ 3, each block being four
256-token generations, the same cost in both schemes), and the difference of the two schemes' mean
log ratios with its standard error (a bias of the chunked scheme would show there).

    python -m benchmarks.chunk_pairing_summary measurements/hopper-chunk-pairing/*.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from benchmarks.chunk_pairing import SCHEMES, analyse
from benchmarks.ci_budget import blocks_needed

TARGET_PP = 3.0


def summarize(runs: list[dict]) -> dict:
    """Per-run figures and the pooled comparison of the two schemes over RUNS (probe JSON documents)."""
    from scipy import stats

    per_run, pooled = [], {}
    for doc in runs:
        cfg = doc["config"]
        res = analyse(doc["blocks"], "FP16", cfg["precision"])
        per_run.append({"seed": cfg["seed"], "synthetic": cfg["synthetic"], "precision": cfg["precision"],
                        "gpu": cfg.get("gpu"), **{s: {k: res[s][k] for k in ("blocks", "dE_pct", "sd_pct",
                                                                             "ci95_half_pp")}
                                                  for s in SCHEMES},
                        "tokens_match": doc["tokens_match"], "chunked_over_whole": res["chunked_over_whole"]})
        for s in SCHEMES:
            logs = res[s]["log_ratios"]
            acc = pooled.setdefault(s, {"ss": 0.0, "dof": 0, "means": [], "n": 0})
            m = sum(logs) / len(logs)
            acc["ss"] += sum((x - m) ** 2 for x in logs)
            acc["dof"] += len(logs) - 1
            acc["means"].append(m)
            acc["n"] += len(logs)
    out = {"runs": per_run}
    for s, acc in pooled.items():
        sd = math.sqrt(acc["ss"] / acc["dof"])
        mean = sum(acc["means"]) / len(acc["means"])
        out[s] = {"blocks": acc["n"], "dof": acc["dof"], "sd_pct": round(100 * sd, 2),
                  "dE_pct": round(100 * (math.exp(mean) - 1), 2), "mean_log": mean,
                  "blocks_for_3pp": blocks_needed(100 * sd, TARGET_PP)}
    w, c = out["whole"], out["chunked"]
    ratio = (w["sd_pct"] / c["sd_pct"]) ** 2
    out["variance_ratio"] = round(ratio, 2)
    out["f_test_p"] = round(float(stats.f.sf(ratio, w["dof"], c["dof"])), 3)
    se = math.sqrt((w["sd_pct"] ** 2 / w["blocks"]) + (c["sd_pct"] ** 2 / c["blocks"]))
    out["chunked_minus_whole_pp"] = round(100 * (c.pop("mean_log") - w.pop("mean_log")), 2)
    out["difference_se_pp"] = round(se, 2)
    return out


def render(s: dict) -> str:
    lines = ["| run | GPU | whole dE% ± CI (blocks) | whole sd % | chunked dE% ± CI (blocks) | chunked sd % |"
             " tokens match |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in s["runs"]:
        w, c = r["whole"], r["chunked"]
        lines.append(f"| {r['synthetic']} {r['precision']} seed {r['seed']} | {r['gpu']} | "
                     f"{w['dE_pct']:+} ± {w['ci95_half_pp']} ({w['blocks']}) | {w['sd_pct']} | "
                     f"{c['dE_pct']:+} ± {c['ci95_half_pp']} ({c['blocks']}) | {c['sd_pct']} | "
                     f"{', '.join(k for k, v in r['tokens_match'].items() if v) or 'none'} |")
    w, c = s["whole"], s["chunked"]
    lines += ["", f"pooled sd: whole {w['sd_pct']} % ({w['dof']} dof), "
              f"chunked {c['sd_pct']} % ({c['dof']} dof); variance ratio {s['variance_ratio']} "
              f"(one-sided F-test p = {s['f_test_p']})",
              f"blocks for ±{TARGET_PP:g} pp: whole {w['blocks_for_3pp']}, chunked {c['blocks_for_3pp']}",
              f"pooled dE%: whole {w['dE_pct']:+}, chunked {c['dE_pct']:+}; chunked − whole "
              f"{s['chunked_minus_whole_pp']:+} ± {s['difference_se_pp']} pp (1 se)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path, help="chunk_pairing JSON files")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    runs = [json.loads(f.read_text()) for f in args.files]
    s = summarize(runs)
    print(json.dumps(s, indent=1) if args.json else render(s))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
