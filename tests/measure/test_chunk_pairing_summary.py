"""benchmarks.chunk_pairing_summary: pooling chunk-pairing probe runs, on the committed H100 runs and on a
hand-made one."""

import json
import math
from pathlib import Path

from benchmarks.chunk_pairing_summary import main, summarize

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted((ROOT / "measurements" / "hopper-chunk-pairing").glob("*.json"))


def _doc(seed, whole, chunked):
    """A probe document whose blocks have the given paired ratios Q/F (FP16 1 s per generation)."""
    blocks = []
    for scheme, ratios in (("whole", whole), ("chunked", chunked)):
        for i, r in enumerate(ratios):
            ws = [{"arm": a, "gen": g, "chunk": 0, "tokens": 256, "dur_s": 1.0 if a == "FP16" else r}
                  for a in ("FP16", "NF4") for g in (0, 1)]
            blocks.append({"scheme": scheme, "block": i, "windows": ws})
    return {"config": {"seed": seed, "synthetic": "qwen2-0.5b", "precision": "NF4", "gpu": None},
            "tokens_match": {"FP16": True, "NF4": True}, "blocks": blocks}


def test_pooling_weighs_each_run_by_its_degrees_of_freedom():
    a, b = [1.2, 1.3, 1.25], [1.3, 1.3, 1.3]
    s = summarize([_doc(1, a, [1.29, 1.3, 1.31]), _doc(2, b, [1.3, 1.3, 1.3])])
    logs = [math.log(x) for x in a]
    m = sum(logs) / 3
    assert s["whole"]["dof"] == 4 and s["whole"]["blocks"] == 6
    assert s["whole"]["sd_pct"] == round(100 * math.sqrt(sum((x - m) ** 2 for x in logs) / 4), 2)
    assert s["chunked"]["sd_pct"] < s["whole"]["sd_pct"] and s["f_test_p"] < 0.05
    assert s["chunked"]["blocks_for_3pp"] == 3  # sd 0.54 %: t(1) is 12.7, t(2) 4.30


def test_committed_runs_narrow_when_the_arms_take_turns_chunk_by_chunk(capsys):
    docs = [json.loads(p.read_text()) for p in RUNS]
    assert len(docs) >= 2 and all(d["complete"] for d in docs)
    s = summarize(docs)
    assert s["chunked"]["sd_pct"] < s["whole"]["sd_pct"]
    assert s["chunked"]["blocks_for_3pp"] < s["whole"]["blocks_for_3pp"]
    assert 0 < s["f_test_p"] < 1
    # the two schemes measure the same ratio within a few of their standard errors
    assert abs(s["chunked_minus_whole_pp"]) < 3 * s["difference_se_pp"]
    assert main([str(p) for p in RUNS]) == 0
    assert "pooled sd: whole" in capsys.readouterr().out
