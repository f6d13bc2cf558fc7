"""QJ421: a quantized arm whose paired ΔE% interval is wider than its target, and why, from a real record."""

from pathlib import Path

from measure.core import record as raw
from measure.core.analysis import analyse
from measure.core.notes import findings, wide_intervals

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "measurements" / "hopper-campaign"


def _analysis(cell: str):
    record = raw.read(CAMPAIGN / cell / "energy-raw.json.gz")
    out = raw.replay(record)
    return record, out, analyse(out)


def test_a_slow_uneven_host_gets_qj421_naming_fp16s_spread():
    # qwen2-0.5b-d1: a host whose FP16 generations took 9-15 s within one run (README of the campaign)
    record, out, analysis = _analysis("qwen2-0.5b-d1")
    found = wide_intervals(analysis)
    assert [p.code for p in found] == ["QJ421", "QJ421"]
    int8, nf4 = (p.message for p in found)
    assert int8.startswith("INT8: ΔE% +209.2 ± 115.6 pp over 4 blocks, wider than its target ± 10.5 pp")
    assert nf4.startswith("NF4: ΔE% +27.0 ± 43.2 pp") and "wider than its target ± 3.0 pp" in nf4
    assert "FP16 took 17.7–29.4 ms per token across its trials (cv 21 %)" in nf4
    assert "QJ421" in [p.code for p in findings(record, out, analysis)]


def test_a_run_inside_its_targets_gets_none():
    # tinyllama-1.1b-direct: the fast host, NF4 ± 1.6 and INT8 ± 2.2 pp, inside max(3 pp, 5 %)
    _record, _out, analysis = _analysis("tinyllama-1.1b-direct")
    assert wide_intervals(analysis) == []


def test_a_wide_interval_on_a_steady_host_says_nothing_about_the_host():
    analysis = {"records": [{"arm": "FP16", "status": "ok", "tokens": 256, "duration_s": 5.0 + 0.01 * i}
                            for i in range(4)],
                "statistics": {"NF4": {"n_pairs": 4,
                                       "delta_e_pct": {"mean": 20.0, "ci95_half_width_pp": 8.0}}}}
    (only,) = wide_intervals(analysis)
    assert only.message == "NF4: ΔE% +20.0 ± 8.0 pp over 4 blocks, wider than its target ± 3.0 pp"
