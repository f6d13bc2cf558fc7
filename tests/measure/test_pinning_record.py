"""CPU placement from a sysfs tree, the raw record's round trip, and replay over the protocol fakes."""

import gzip
import json
import math
from pathlib import Path

import pytest

from measure.codes import MeasureError
from measure.core import record as raw
from measure.core.analysis import analyse
from measure.core.outcome import Outcome
from measure.power.fake import FakeClock, FakePowerSource
from measure.power.pinning import choose_cpus
from measure.run.protocol import Protocol
from tests.support.measure_fakes import ClockedSampler, FakeArm, measured, quick_config


def _sysfs(tmp_path: Path, siblings: dict[int, str]) -> Path:
    for cpu, text in siblings.items():
        d = tmp_path / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(text + "\n")
    return tmp_path


def test_pinning_puts_decode_and_sampler_on_two_cores_avoiding_cpu0(tmp_path):
    # 4 cores x 2 threads: core k holds CPUs k and k+4
    root = _sysfs(tmp_path, {c: f"{c % 4},{c % 4 + 4}" for c in range(8)})
    measure_cpu, sampler_cpu = choose_cpus(set(range(8)), root)
    assert measure_cpu % 4 != sampler_cpu % 4  # different physical cores
    assert 0 not in (measure_cpu, sampler_cpu) and 4 not in (measure_cpu, sampler_cpu)


def test_pinning_reads_ranges_and_gives_up_with_one_core(tmp_path):
    root = _sysfs(tmp_path, {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3"})
    assert choose_cpus({0, 1, 2, 3}, root) == (2, 0)
    assert choose_cpus({0, 1}, root) is None  # two threads of one core: nothing to separate


def _finished_outcome():
    clock = FakeClock(10.0)
    src = FakePowerSource([(0.0, 125.0), (0.4, 140.0), (0.8, 125.0)], clock=clock)
    sampler = ClockedSampler(src, clock)
    sampler.start()
    cfg = quick_config(trials=3, window_reps=2)
    arms = {a: FakeArm(clock, s, 1.5 * s) for a, s in {"FP16": 0.02, "NF4": 0.026, "INT8": 0.05}.items()}
    out = Outcome(config=cfg, arms=list(arms))
    out = measured(Protocol(cfg, src, sampler, clock, clock.sleep), arms, out)
    return out, sampler


def test_replay_of_the_record_gives_the_live_energies(tmp_path):
    out, sampler = _finished_outcome()
    record = raw.encode(
        out,
        sampler.trace(),
        {"measurement_source": "simulated", "notes": {"x": "dropped: recomputed on replay"}},
        source={"measurement_source": "simulated", "power_field": None, "has_energy_counter": True},
        sampler={"kind": "process", "samples": len(sampler.trace()[0]), "dropped": 0},
        options={"precisions": ["NF4", "INT8"]},
    )
    path = tmp_path / raw.RAW_NAME
    raw.write(path, record)
    again = raw.replay(raw.read(path))
    live, replayed = analyse(out), analyse(again)
    for a, b in zip(live["records"], replayed["records"], strict=True):
        # power in mW and energy in mJ, as NVML reports them: the record keeps what the card said
        assert a["counter_energy_j"] == pytest.approx(b["counter_energy_j"], abs=2e-3)
        assert a["trace_energy_j"] == pytest.approx(b["trace_energy_j"], rel=1e-4)
    assert replayed["statistics"]["NF4"]["n_pairs"] == 3 and "notes" not in record["context"]
    assert all(w.generations == 2 for b in again.blocks for w in b["windows"])


def test_the_record_is_deterministic_and_unreadable_ones_are_coded(tmp_path):
    out, sampler = _finished_outcome()
    args = (out, sampler.trace(), {}, {"has_energy_counter": True}, {}, {"precisions": ["NF4"]})
    raw.write(tmp_path / "a.gz", raw.encode(*args))
    raw.write(tmp_path / "b.gz", raw.encode(*args))
    assert (tmp_path / "a.gz").read_bytes() == (tmp_path / "b.gz").read_bytes()
    with gzip.open(tmp_path / "c.gz", "wb") as fh:
        fh.write(json.dumps({"format": "something-else"}).encode())
    for bad in ("c.gz", "missing.gz"):
        with pytest.raises(MeasureError) as exc:
            raw.read(tmp_path / bad)
        assert exc.value.code == "QJ416"


def test_nan_counter_ticks_survive_the_record():
    t, p, e = [1.0, 1.01, 1.02], [120.0, 121.5, 119.25], [5.0, math.nan, 6.5]
    back = raw._decode_trace(raw._encode_trace(t, p, e))
    assert back[1] == p and math.isnan(back[2][1]) and back[2][2] == 6.5
    assert back[0] == pytest.approx(t, abs=1e-9)


def test_a_record_with_non_finite_values_is_still_written_and_read_back(tmp_path):
    out, sampler = _finished_outcome()
    ctx = {"quality": {"NF4": {"value": math.inf}}, "sample_rate_achieved_hz": math.nan}
    record = raw.encode(out, sampler.trace(), ctx, {"has_energy_counter": True}, {}, {"precisions": ["NF4"]})
    raw.write(tmp_path / "r.gz", record)
    back = raw.read(tmp_path / "r.gz")
    assert back["context"]["quality"]["NF4"]["value"] == math.inf
    assert math.isnan(back["context"]["sample_rate_achieved_hz"])
