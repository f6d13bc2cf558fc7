"""benchmarks.noise_scale: the structure function of a host's decode speed, on made-up windows and on the
committed Hopper records (the 8-token runs on the slow host show speed noise that builds up over seconds,
which finer interleaving of the arms could cancel; the fast host's stays near 1-3 %)."""

import math
from pathlib import Path

import numpy as np

from benchmarks.noise_scale import collect, main, slow_share, structure, windows

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "measurements" / "hopper-campaign"


def _blocks(durations, tokens=8, gap_s=0.0):
    """One block holding back-to-back FP16 windows of the given durations."""
    t, ws = 0.0, []
    for d in durations:
        ws.append({"arm": "FP16", "start_s": t, "end_s": t + d, "tokens": tokens})
        t += d + gap_s
    return [{"order": ["FP16"], "windows": ws}]


def test_a_steady_host_has_no_structure():
    mids, logs = windows(_blocks([0.2] * 200), "FP16")
    assert len(mids) == 200 and np.allclose(logs, math.log(0.2 / 8))
    bins = structure(mids, logs)
    assert [b["sd_pct"] for b in bins[:3]] == [0.0, 0.0, 0.0]
    assert slow_share(bins) is None  # nothing at the longest separation to compare with


def test_independent_jitter_is_flat_and_a_ramp_is_slow():
    # every window's speed drawn independently, sd 10 %: the same sd at every separation, no slow share
    rng = np.random.default_rng(0)
    white = structure(*windows(_blocks(list(0.2 * np.exp(rng.normal(0, 0.1, 600)))), "FP16"))
    seen = [b["sd_pct"] for b in white if b["sd_pct"] is not None]
    assert len(seen) >= 4 and all(9.0 < f < 11.0 for f in seen)
    # a host slowing by 20 % over two minutes: neighbours agree, distant windows do not
    ramp = structure(*windows(_blocks([0.2 * (1 + 0.2 * i / 600) for i in range(600)]), "FP16"))
    assert slow_share(ramp) > 0.99


def test_too_few_pairs_print_no_figure():
    bins = structure(*windows(_blocks([0.2] * 5), "FP16"))
    assert all(b["sd_pct"] is None for b in bins)


def test_committed_slow_host_noise_builds_up_over_seconds():
    rows = {(r["run"].split("/")[1], r["arm"]): r for r in collect([CAMPAIGN])}
    slow = rows[("qwen2-1.5b-r1", "FP16")]  # 8-token windows on the slow host d7c82248
    fast = rows[("qwen2-1.5b-r2", "FP16")]  # the same cell on the fast host f4de414c
    figures = [b["sd_pct"] for b in slow["bins"]]
    assert slow["window_tokens"] == 8 and all(f is not None for f in figures)
    assert figures == sorted(figures) and figures[0] < 0.6 * figures[-1]  # rises from ~11 to ~24 %
    assert slow["slow_share"] > 0.6
    assert max(b["sd_pct"] for b in fast["bins"]) < 2.0


def test_the_command_prints_the_table(capsys):
    assert main([str(CAMPAIGN)]) == 0
    out = capsys.readouterr().out
    assert "| run | arm | backend | window tokens |" in out and "slow share" in out
