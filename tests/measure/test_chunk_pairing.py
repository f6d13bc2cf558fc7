"""benchmarks.chunk_pairing: the schedule and the analysis on made-up durations (a host whose speed drifts
slowly pairs better chunk by chunk than over whole generations), then one real tiny run on CPU through
transformers + bitsandbytes NF4, continuing each generation's KV cache chunk by chunk."""

import json
import math

import numpy as np
import pytest

from benchmarks.chunk_pairing import analyse, main, probe, schedule

F, Q = "FP16", "NF4"


def _blocks(totals, tokens=16, chunk_tokens=4):
    """Blocks of both schemes whose generations take TOTALS[b][(arm, gen)] seconds, split evenly."""
    out = []
    for b, total in enumerate(totals):
        for scheme in ("whole", "chunked"):
            steps = schedule(scheme, b, F, Q, tokens, chunk_tokens)
            windows = [{"arm": a, "gen": g, "chunk": c, "tokens": n, "dur_s": total[(a, g)] * n / tokens}
                       for a, g, c, n in steps]
            out.append({"scheme": scheme, "block": b, "windows": windows})
    return out


def test_schedule_mirrors_whole_blocks_and_chunks():
    assert [(a, g) for a, g, _, _ in schedule("whole", 0, F, Q, 256, 32)] == [(F, 0), (Q, 0), (Q, 1), (F, 1)]
    assert [(a, g) for a, g, _, _ in schedule("whole", 1, F, Q, 256, 32)] == [(Q, 0), (F, 0), (F, 1), (Q, 1)]
    steps = schedule("chunked", 0, F, Q, 256, 32)
    assert len(steps) == 4 * 8 and [a for a, *_ in steps[4:8]] == [Q, F, F, Q]
    for arm in (F, Q):
        for gen in (0, 1):
            mine = [(c, n) for a, g, c, n in steps if (a, g) == (arm, gen)]
            assert mine == [(c, 32) for c in range(8)]  # every chunk once, in order, 256 tokens in all


def test_hand_computed_figures():
    # block b: F1 = 1 s, F2 = e^(0.2b) s, each Q = e^(0.1b)·(F1 + F2)/2, so log(ΣQ/ΣF) = 0, 0.1, 0.2
    totals = []
    for b in range(3):
        f1, f2 = 1.0, math.exp(0.2 * b)
        q = math.exp(0.1 * b) * (f1 + f2) / 2
        totals.append({(F, 0): f1, (F, 1): f2, (Q, 0): q, (Q, 1): q})
    res = analyse(_blocks(totals), F, Q)
    for scheme in ("whole", "chunked"):  # the same generation times, however they were cut
        r = res[scheme]
        assert r["blocks"] == 3 and r["log_ratios"] == pytest.approx([0.0, 0.1, 0.2], abs=1e-6)
        assert r["dE_pct"] == 10.52  # 100·(e^0.1 − 1)
        assert r["sd_pct"] == 10.0
        assert r["ci95_half_pp"] == 24.84  # t(0.975, 2) = 4.3027 × 10 / √3
        assert r["fp16_jitter_pct"] == 14.14  # sd(0, 0.2, 0.4) / √2
        f_ms = 1e3 * sum(1 + math.exp(0.2 * b) for b in range(3)) / (6 * 16)
        q_ms = 1e3 * sum(2 * t[(Q, 0)] for t in totals) / (6 * 16)
        assert r["ms_per_token"] == {F: round(f_ms, 4), Q: round(q_ms, 4)}
    assert res["chunked_over_whole"] == {F: 1.0, Q: 1.0}


def test_one_block_has_a_ratio_but_no_spread():
    res = analyse(_blocks([{(F, 0): 1.0, (F, 1): 1.0, (Q, 0): 2.0, (Q, 1): 2.0}]), F, Q)
    assert res["whole"]["dE_pct"] == 100.0
    assert res["whole"]["sd_pct"] is None and res["whole"]["ci95_half_pp"] is None
    assert res["whole"]["fp16_jitter_pct"] is None


def _simulate(blocks=6, tokens=256, chunk_tokens=32, seed=0):
    """A host whose speed drifts ±20 % over 20 s plus 2 % white jitter per window; NF4 truly 1.3× slower."""
    rng = np.random.default_rng(seed)
    base = {F: 0.010, Q: 0.013}
    t, out = 0.0, []
    for b in range(blocks):
        for scheme in ("whole", "chunked"):
            windows = []
            for a, g, c, n in schedule(scheme, b, F, Q, tokens, chunk_tokens):
                start = t
                for _ in range(n):  # each token at the host's speed of its moment
                    t += base[a] * (1 + 0.2 * math.sin(2 * math.pi * t / 20.0))
                t = start + (t - start) * math.exp(rng.normal(0, 0.02))
                windows.append({"arm": a, "gen": g, "chunk": c, "tokens": n, "start_s": start,
                                "dur_s": t - start})
            out.append({"scheme": scheme, "block": b, "windows": windows})
    return out


def test_slow_drift_cancels_chunk_by_chunk_but_not_over_whole_generations():
    res = analyse(_simulate(), F, Q)
    whole, chunked = res["whole"], res["chunked"]
    assert chunked["sd_pct"] < 0.5 * whole["sd_pct"]
    assert chunked["ci95_half_pp"] < 0.5 * whole["ci95_half_pp"]
    assert abs(chunked["dE_pct"] - 30.0) < 2.0
    assert chunked["fp16_jitter_pct"] < whole["fp16_jitter_pct"]


def test_help_works(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0 and "--chunk-tokens" in capsys.readouterr().out


def test_chunk_tokens_must_divide_tokens(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--tokens", "16", "--chunk-tokens", "5"])
    assert exc.value.code == 2 and "dividing" in capsys.readouterr().err


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("synthetic-cache")


@pytest.mark.slow
def test_chunks_continue_the_cache_one_uncached_token_at_a_time(cache_dir):
    from measure.gpu.workload import Workload

    wl = Workload("synthetic:tiny-llama", "eager", "cpu", prompt_tokens=8, cache_dir=cache_dir)
    arms = {p: wl.load(p) for p in (F, Q)}
    seen = {p: [] for p in arms}
    for p, arm in arms.items():
        arm._model.register_forward_pre_hook(
            lambda _m, _a, kw, p=p: seen[p].append(kw["input_ids"].shape[1]), with_kwargs=True)
    raw = probe(arms, F, Q, tokens=16, chunk_tokens=4, blocks=1)
    assert raw["tokens_match"][F] is True and isinstance(raw["tokens_match"][Q], bool)
    for p in arms:  # warm-up + 2 whole + 2 chunked generations: one prompt prefill each, then 1 token a step
        assert seen[p].count(8) == 5 and seen[p].count(1) == 5 * 15 and len(seen[p]) == 5 * 16
    chunked = next(b for b in raw["blocks"] if b["scheme"] == "chunked")
    assert len(chunked["windows"]) == 16 and all(w["tokens"] == 4 for w in chunked["windows"])


@pytest.mark.slow
def test_cli_run_on_cpu_writes_every_window(cache_dir, tmp_path, capsys):
    out = tmp_path / "chunk.json"
    assert main(["--synthetic", "tiny-llama", "--precision", "nf4", "--tokens", "16", "--chunk-tokens", "4",
                 "--blocks", "2", "--seed", "0", "--device", "cpu", "--cache-dir", str(cache_dir),
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| whole | 2 |" in text and "| chunked | 2 |" in text and "chunked/whole" in text
    data = json.loads(out.read_text())
    assert data["tokens_match"][F] is True
    assert data["config"]["dtypes"] == {F: "float16", Q: "float16"}  # torch 2.13 CPU runs float16
    assert [(b["scheme"], b["block"]) for b in data["blocks"]] == [
        ("whole", 0), ("chunked", 0), ("whole", 1), ("chunked", 1)]
    assert sum(len(b["windows"]) for b in data["blocks"]) == 2 * (4 + 4 * 4)
    assert all(w["dur_s"] > 0 for b in data["blocks"] for w in b["windows"])
    assert data["analysis"]["whole"]["sd_pct"] is not None
    assert set(data["analysis"]["chunked_over_whole"]) == {F, Q}
