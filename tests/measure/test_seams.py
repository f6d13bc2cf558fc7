"""The typed seams: real and fake sides implement them, the live loop only times windows, and the
window energies are a pure function of the trace that replay calls directly."""

import copy
import math

import pytest

from measure.core import record as raw
from measure.core.attribution import attribute
from measure.core.outcome import Outcome
from measure.core.seams import Arm, PowerSource, Sampler, Workload
from measure.gpu.workload import Workload as TorchWorkload
from measure.power.fake import FakeClock, FakePowerSource
from measure.power.nvml import NvmlPowerSource
from measure.power.sampler import ProcessSampler
from measure.run.protocol import Protocol
from tests.support.measure_fakes import ClockedSampler, FakeArm, FakeWorkload, quick_config

TRACE = [(0.0, 125.0), (0.4, 140.0), (0.8, 125.0)]


def _run():
    clock = FakeClock(10.0)
    src = FakePowerSource(TRACE, clock=clock)
    sampler = ClockedSampler(src, clock)
    sampler.start()
    cfg = quick_config(trials=2, prefill_reps=1)
    arms = {a: FakeArm(clock, s, 1.5 * s) for a, s in {"FP16": 0.02, "NF4": 0.026}.items()}
    out = Outcome(config=cfg, arms=list(arms))
    Protocol(cfg, src, sampler, clock, clock.sleep).run(arms, out)
    return out, sampler, arms


def test_the_real_and_the_fake_sides_implement_the_seams():
    # constructors do no work, so the real classes can be checked without a GPU
    assert isinstance(NvmlPowerSource(0), PowerSource)
    assert isinstance(FakePowerSource(TRACE), PowerSource)
    assert isinstance(ProcessSampler(lambda: None), Sampler)
    assert isinstance(ClockedSampler(FakePowerSource(TRACE), FakeClock()), Sampler)
    assert isinstance(TorchWorkload("synthetic:tiny-llama"), Workload)
    assert isinstance(FakeWorkload({}), Workload)
    assert isinstance(FakeArm(FakeClock(), 0.02, 0.03), Arm)
    from measure.gpu.arm import Arm as TorchArm

    methods = ("prepare", "generate", "perplexity", "int8_thresholds", "int8_outliers")
    assert all(callable(getattr(TorchArm, m)) for m in methods)


def test_the_live_loop_times_windows_and_attributes_no_energy():
    out, sampler, _ = _run()
    windows = [w for b in out.blocks for w in b["windows"]] + out.prefill_windows
    assert windows and all(w.counter_j is None and w.trace_j is None and not w.notes for w in windows)
    assert out.prefill == {} and out.faults == {}
    # but it waited for the trace to cover the last window, so attribution can interpolate its edge
    assert sampler.trace()[0][-1] > max(w.end_s for w in windows)


def test_attribution_is_a_pure_function_of_the_trace():
    out, sampler, _ = _run()
    before = copy.deepcopy(out)
    trace = copy.deepcopy(sampler.trace())
    first = attribute(out, trace, True)
    assert out == before and trace == sampler.trace()  # nothing it was given changed
    assert attribute(out, trace, True) == first  # same inputs, same energies
    windows = [w for b in first.blocks for w in b["windows"]]
    assert all(w.counter_j > 0 and w.trace_j > 0 for w in windows)
    assert first.prefill["FP16"]["reps"] == 2 and first.prefill["FP16"]["energy_j"] > 0
    # without a counter every energy comes from the trace, and the counter's are absent
    no_counter = attribute(out, trace, False)
    assert all(w.counter_j is None for b in no_counter.blocks for w in b["windows"])


def test_replay_is_attribution_of_the_recorded_trace(tmp_path):
    out, sampler, _ = _run()
    record = raw.encode(out, sampler.trace(), {}, {"has_energy_counter": True}, {}, {"precisions": ["NF4"]})
    raw.write(tmp_path / "r.gz", record)
    back = raw.read(tmp_path / "r.gz")
    replayed = raw.replay(back)
    direct = attribute(raw.decode_outcome(back["outcome"]), raw.recorded_trace(back), True)
    assert replayed == direct
    live = attribute(out, sampler.trace(), True)  # the trace in memory, before mW / mJ rounding
    for a, b in zip(live.blocks, replayed.blocks, strict=True):
        assert a["trace_j"] == pytest.approx(b["trace_j"], rel=1e-4)


def test_a_window_with_no_samples_after_it_is_a_fault_naming_the_stopped_sampler():
    out, sampler, _ = _run()
    t, p, e = sampler.trace()
    last_start = min(w.start_s for w in out.blocks[-1]["windows"])
    cut = [i for i, ti in enumerate(t) if ti < last_start]
    attributed = attribute(out, ([t[i] for i in cut], [p[i] for i in cut], [e[i] for i in cut]), True)
    faults = [w.fault for w in attributed.blocks[-1]["windows"]]
    assert all(f and "the power sampler stopped" in f for f in faults)
    assert not math.isnan(attributed.blocks[0]["trace_j"][0])


def test_the_core_imports_nothing_with_side_effects():
    """measure/core is the pure layer: no power, GPU, run or CLI module, no torch, pynvml or subprocess."""
    import ast
    from pathlib import Path

    core = Path(__file__).resolve().parents[2] / "measure" / "core"
    banned = ("measure.power", "measure.gpu", "measure.run", "measure.cli", "measure.sweep", "torch",
              "transformers", "bitsandbytes", "pynvml", "subprocess", "multiprocessing", "rich", "click")
    found = []
    for path in sorted(core.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            found += [f"{path.name}: {n}" for n in names if n.startswith(banned)]
    assert len(list(core.glob("*.py"))) > 10 and found == []
