"""The protocol against hand-written fakes: cooldown, mirrored blocks, drift cancellation, faults."""

import random

import pytest

from measure.core.analysis import analyse
from measure.core.design import block_order, block_rounds
from measure.core.outcome import Outcome
from measure.power.fake import FakeClock, FakePowerSource
from measure.run.protocol import Protocol, cooldown
from tests.support.measure_fakes import ClockedSampler, FakeArm, measured, quick_config

FLAT = [(0.0, 130.0), (1.0, 130.0)]


def test_block_order_is_seeded_and_mirrored():
    a = block_order(["FP16", "NF4", "INT8"], random.Random(3))
    b = block_order(["FP16", "NF4", "INT8"], random.Random(3))
    assert a == b and a[:3] == a[3:][::-1] and sorted(a[:3]) == ["FP16", "INT8", "NF4"]
    firsts = {tuple(block_order(["FP16", "NF4", "INT8"], random.Random(s))[:3]) for s in range(30)}
    assert len(firsts) > 3  # shuffled, not a fixed order


def test_cooldown_waits_for_a_falling_power():
    clock = FakeClock()
    # power decays from 200 W to the 122 W loaded idle over 10 s, then stays there
    src = FakePowerSource([(0.0, 200.0), (10.0, 122.0), (1000.0, 122.0)], clock=clock)
    waited, timed_out, mean_w = cooldown(src.power_w, clock, clock.sleep, 122.0, 5.0, 60.0)
    assert not timed_out and mean_w <= 127.0
    # 200 - 7.8 t <= 127 from t = 9.36 s; the 0.1 s rolling window adds a little
    assert 9.0 <= waited <= 9.9


def test_cooldown_times_out_and_says_so():
    clock = FakeClock()
    src = FakePowerSource([(0.0, 300.0), (1.0, 300.0)], clock=clock)
    waited, timed_out, mean_w = cooldown(src.power_w, clock, clock.sleep, 122.0, 5.0, 3.0)
    assert timed_out and 3.0 <= waited < 3.5 and mean_w == pytest.approx(300.0)


def test_cooldown_immediate_when_already_idle():
    clock = FakeClock()
    src = FakePowerSource(FLAT, clock=clock)
    waited, timed_out, _ = cooldown(src.power_w, clock, clock.sleep, 128.0, 5.0, 30.0)
    assert not timed_out and waited == pytest.approx(0.1)  # one full window of readings, no more


def test_cooldown_ends_one_window_after_power_drops():
    # decode power (138 W) until t = 0.08 s after the block, then loaded idle (122 W): the rolling 0.1 s
    # mean crosses 127 W once at most a third of the window is still high, at 0.16 s, not at a round's end
    clock = FakeClock()
    src = FakePowerSource([(0.0, 138.0), (0.079, 138.0), (0.08, 122.0), (10.0, 122.0)], clock=clock)
    waited, timed_out, mean_w = cooldown(src.power_w, clock, clock.sleep, 122.0, 5.0, 30.0)
    assert not timed_out and mean_w <= 127.0 and 0.1 <= waited <= 0.2


def _setup(drift, cfg, steps=None, **arm_kw):
    clock = FakeClock(100.0)
    src = FakePowerSource(FLAT, clock=clock)
    sampler = ClockedSampler(src, clock)
    sampler.start()
    steps = steps or {"FP16": 0.020, "NF4": 0.026, "INT8": 0.050}
    arms = {
        a: FakeArm(clock, s, prefill_s=1.5 * s, drift=drift, **arm_kw.get(a, {})) for a, s in steps.items()
    }
    proto = Protocol(cfg, src, sampler, clock, clock.sleep)
    out = Outcome(config=cfg, arms=list(steps))
    return proto, arms, out


def test_mirrored_blocks_cancel_strong_linear_drift():
    # host speed drifts by 1 % per second (a strong drift; measure/README.md has a real host's); power is
    # constant, so energy is proportional to time and the true dE% of NF4 is exactly +30 % (INT8 +150 %).
    cfg = quick_config(trials=12, prefill_reps=4)
    proto, arms, out = _setup(lambda t: 1.0 + 0.01 * (t - 100.0), cfg)
    out = measured(proto, arms, out)
    res = analyse(out)
    nf4, int8 = res["statistics"]["NF4"], res["statistics"]["INT8"]
    # paired blocks: 12 F-NF4 blocks and 12 F-INT8 blocks, each mirrored (F Q Q F or Q F F Q)
    assert nf4["n_pairs"] == 12 and int8["n_pairs"] == 12 and len(out.orders) == 24
    assert all(len(o) == 4 and o == o[::-1] and "FP16" in o for o in out.orders)
    assert nf4["delta_e_pct"]["mean"] == pytest.approx(30.0, abs=0.05)
    assert int8["delta_e_pct"]["mean"] == pytest.approx(150.0, abs=0.1)
    # the reconstructed 256-token value equals (P + 255 d) / 256 per arm, and P/d is the same for all arms
    assert nf4["reconstructed"]["mean"] == pytest.approx(30.0, abs=0.05)
    assert res["agreement"]["counter_vs_trace_max_pct"] < 0.5
    assert out.timeouts == 0 and len(out.waits_s) >= 24


def test_all_arm_blocks_cancel_the_same_drift():
    cfg = quick_config(trials=12, prefill_reps=4, pairing="all")
    proto, arms, out = _setup(lambda t: 1.0 + 0.01 * (t - 100.0), cfg)
    out = measured(proto, arms, out)
    res = analyse(out)
    assert len(out.orders) == 12 and all(len(o) == 6 and o == o[::-1] for o in out.orders)
    assert res["statistics"]["NF4"]["delta_e_pct"]["mean"] == pytest.approx(30.0, abs=0.05)
    assert res["statistics"]["INT8"]["delta_e_pct"]["mean"] == pytest.approx(150.0, abs=0.1)


def test_paired_rounds_give_every_quantized_arm_one_block_per_round():
    cfg = quick_config(trials=9, prefill_reps=1, warmup_runs=0)
    proto, arms, out = _setup(lambda t: 1.0, cfg)
    out = measured(proto, arms, out)
    quant = [next(a for a in o if a != "FP16") for o in out.orders]
    rounds = [sorted(quant[i : i + 2]) for i in range(0, len(quant), 2)]
    assert rounds == [["INT8", "NF4"]] * 9
    assert len({tuple(quant[i : i + 2]) for i in range(0, len(quant), 2)}) == 2  # the order is shuffled


def test_window_reps_make_each_window_several_generations():
    cfg = quick_config(tokens=64, block_tokens=16, trials=2, window_reps=3, warmup_runs=0, prefill_reps=1)
    proto, arms, out = _setup(lambda t: 1.0, cfg)
    out = measured(proto, arms, out)
    windows = [w for b in out.blocks for w in b["windows"]]
    assert windows and all(w.generations == 3 and w.tokens == 48 for w in windows)
    recs = analyse(out)["records"]
    assert all(r["tokens"] == 96 and r["generations"] == 6 for r in recs if r["status"] == "ok")


def test_sequential_order_would_be_biased_by_the_same_drift():
    # the control: the same drift with FP16 always first gives a visibly wrong dE% without mirroring
    clock = FakeClock(100.0)
    drift = lambda t: 1.0 + 0.01 * (t - 100.0)  # noqa: E731
    fp16 = FakeArm(clock, 0.020, 0.03, drift)
    nf4 = FakeArm(clock, 0.026, 0.039, drift)
    deltas = []
    for _ in range(12):
        t0 = clock()
        fp16.generate(32)
        e_f = clock() - t0  # noqa: E702
        t0 = clock()
        nf4.generate(32)
        e_q = clock() - t0  # noqa: E702
        deltas.append((e_q / e_f - 1) * 100)
    assert sum(deltas) / len(deltas) > 30.5  # biased by > 10x the mirrored error above


def test_duration_budget_stops_blocks():
    cfg = quick_config(tokens=64, block_tokens=16, duration_s=20.0, warmup_runs=0)
    proto, arms, out = _setup(lambda t: 1.0, cfg)
    out = measured(proto, arms, out)
    blocks = len(out.blocks)
    assert 5 <= blocks <= 30
    assert out.time_split_s["decode"] + out.time_split_s["cooldown"] <= 20.0 + 5.0


def test_an_arm_failing_mid_run_keeps_the_others():
    cfg = quick_config(tokens=64, block_tokens=16, trials=6)
    proto, arms, out = _setup(lambda t: 1.0, cfg, INT8={"fail_after": 12})
    out = measured(proto, arms, out)
    assert "INT8" in out.failed and "out of memory" in out.failed["INT8"]
    res = analyse(out)
    assert res["statistics"]["NF4"]["n_pairs"] == 6
    assert 0 < res["statistics"]["INT8"]["n_pairs"] < 6
    assert res["arms"]["INT8"]["status"] == "failed"


def test_ctrl_c_marks_the_outcome_interrupted():
    cfg = quick_config(tokens=64, block_tokens=16, trials=10, warmup_runs=0, prefill_reps=1)
    proto, arms, out = _setup(lambda t: 1.0, cfg, NF4={"interrupt_after": 9})
    out = measured(proto, arms, out)
    assert out.interrupted and 0 < len(out.blocks) < 10


def test_block_rounds_turn_each_mirrored_round():
    assert block_rounds(["FP16", "NF4", "NF4", "FP16"], 3) == [
        "FP16", "NF4", "NF4", "FP16", "NF4", "FP16", "FP16", "NF4", "FP16", "NF4", "NF4", "FP16"
    ]  # fmt: skip
    assert block_rounds(["NF4", "FP16", "FP16", "NF4"], 1) == ["NF4", "FP16", "FP16", "NF4"]


def test_rounds_per_block_keep_drift_cancelled_and_pay_the_cooldown_once():
    cfg = quick_config(trials=6, prefill_reps=2, block_rounds=4)
    proto, arms, out = _setup(lambda t: 1.0 + 0.01 * (t - 100.0), cfg)
    out = measured(proto, arms, out)
    res = analyse(out)
    assert len(out.blocks) == 12 and len(out.waits_s) == 12  # one cooldown per block, not per round
    assert all(len(b["windows"]) == 16 for b in out.blocks)
    assert res["statistics"]["NF4"]["delta_e_pct"]["mean"] == pytest.approx(30.0, abs=0.05)
    assert res["statistics"]["INT8"]["delta_e_pct"]["mean"] == pytest.approx(150.0, abs=0.1)
    assert all(r["generations"] == 8 for r in res["records"] if r["status"] == "ok")


def test_chunk_schedule_turns_each_round_and_finishes_every_generation():
    from measure.core.design import chunk_schedule

    sched = chunk_schedule(["FP16", "NF4", "NF4", "FP16"], 256, 64)
    assert len(sched) == 16
    rounds = [sched[i : i + 4] for i in range(0, 16, 4)]
    for c, r in enumerate(rounds):
        arms = [a for a, _, _ in r]
        assert arms == arms[::-1] and {k for *_, k in r} == {c}  # mirrored, one chunk of each generation
        assert sorted((a, s) for a, s, _ in r) == [("FP16", 0), ("FP16", 1), ("NF4", 0), ("NF4", 1)]
    assert [a for a, _, _ in rounds[0]] == ["FP16", "NF4", "NF4", "FP16"]
    assert [a for a, _, _ in rounds[1]] == ["NF4", "FP16", "FP16", "NF4"]
    with pytest.raises(ValueError):
        chunk_schedule(["FP16", "NF4", "NF4", "FP16"], 256, 48)


def test_chunked_blocks_measure_whole_generations_chunk_by_chunk():
    cfg = quick_config(trials=4, tokens=64, block_tokens=64, chunk_tokens=16)
    proto, arms, out = _setup(lambda t: 1.0 + 0.01 * (t - 100.0), cfg)
    out = measured(proto, arms, out)
    res = analyse(out)
    assert len(out.blocks) == 8 and all(len(b["windows"]) == 16 for b in out.blocks)
    ok = [r for r in res["records"] if r["status"] == "ok"]
    assert len(ok) == 16 and all(r["tokens"] == 128 and r["generations"] == 2 for r in ok)
    # the warm-up makes one chunked generation; then each NF4 block starts two streams from their prompts
    # and continues each three times
    warm, blocks = arms["NF4"].chunks[:4], arms["NF4"].chunks[4:]
    assert warm == [(0, True, 16), (0, False, 16), (0, False, 16), (0, False, 16)]
    assert len(blocks) == 4 * 8 and sum(restart for _, restart, _ in blocks) == 4 * 2
    assert res["statistics"]["NF4"]["delta_e_pct"]["mean"] == pytest.approx(30.0, abs=0.05)
    assert res["statistics"]["INT8"]["delta_e_pct"]["mean"] == pytest.approx(150.0, abs=0.1)


def test_a_duration_bounded_chunked_run_ends_on_whole_blocks():
    # the campaign's chunked cells are bounded by --duration with one quantized arm, as here
    cfg = quick_config(tokens=64, block_tokens=64, chunk_tokens=16, duration_s=20.0, allocation="target")
    proto, arms, out = _setup(lambda t: 1.0, cfg, steps={"FP16": 0.020, "NF4": 0.026})
    out = measured(proto, arms, out)
    assert len(out.blocks) >= 2 and all(len(b["windows"]) == 16 for b in out.blocks)
    assert out.time_split_s["decode"] + out.time_split_s["cooldown"] <= 20.0 + 6.5
    nf4 = analyse(out)["statistics"]["NF4"]
    assert nf4["n_pairs"] == len(out.blocks)
    assert nf4["delta_e_pct"]["mean"] == pytest.approx(30.0, abs=0.05)


def _block_sd(chunk_tokens: int) -> float:
    # host speed swinging by +-30 % with a 3 s period, longer than a chunk and shorter than a generation
    import math

    cfg = quick_config(trials=8, tokens=64, block_tokens=64, chunk_tokens=chunk_tokens, pairing="paired")
    proto, arms, out = _setup(lambda t: 1.0 + 0.3 * math.sin(2 * math.pi * t / 3.0), cfg,
                              steps={"FP16": 0.020, "NF4": 0.026})
    res = analyse(measured(proto, arms, out))
    return res["statistics"]["NF4"]["delta_e_pct"]["sd"]


def test_chunks_pair_away_host_speed_that_moves_within_a_generation():
    whole, chunked = _block_sd(0), _block_sd(8)
    assert chunked < 0.4 * whole, (whole, chunked)


def test_an_arm_failing_mid_generation_fails_its_trial():
    cfg = quick_config(trials=2, tokens=32, block_tokens=32, chunk_tokens=8, pairing="paired")
    # warm-up (generate 1, generate 32, 4 chunks) is 6 calls and the prefill bursts 2 more: the 9th call,
    # block 0's first NF4 chunk, fails, and with it every NF4 trial
    proto, arms, out = _setup(lambda t: 1.0, cfg, steps={"FP16": 0.020, "NF4": 0.026},
                              NF4={"fail_after": 8})
    res = analyse(measured(proto, arms, out))
    nf4 = [r for r in res["records"] if r["arm"] == "NF4"]
    assert nf4 and all(r["status"] == "failed" for r in nf4)
    assert "out of memory" in nf4[0]["reason"]
