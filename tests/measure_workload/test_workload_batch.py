"""Batches through real transformers + bitsandbytes on CPU: B equal-length prompts decoded together by
both backends, exact counts, and the static loop against transformers' own batched StaticCache generate."""

import pytest
import torch

from measure.gpu.errors import BadArgument
from measure.gpu.workload import Workload

pytestmark = pytest.mark.slow

BATCH = 3


@pytest.fixture(scope="module")
def batched(synthetic_cache):
    eager = Workload("synthetic:tiny-llama", "eager", "cpu", cache_dir=synthetic_cache, batch_size=BATCH)
    static = Workload("synthetic:tiny-llama", "static", "cpu", cache_dir=synthetic_cache, batch_size=BATCH)
    return {p: (eager.load(p), static.load(p)) for p in ("FP16", "NF4", "INT8")}


def test_prompts_are_equal_length_rows_that_extend_the_batch_1_prompt(batched, eager_arms):
    arm = batched["FP16"][0]
    assert tuple(arm._prompt.shape) == (BATCH, 16)
    assert arm._prompt[0].tolist() == eager_arms["FP16"].prompt_ids  # batch 1 is row 0
    assert len({tuple(row) for row in arm._prompt.tolist()}) == BATCH  # distinct prompts
    assert bool((arm._attention == 1).all())  # no padding: every prompt has the same length


@pytest.mark.parametrize("precision", ["FP16", "NF4", "INT8"])
def test_generate_counts_every_prompts_tokens(batched, precision):
    for arm in batched[precision]:
        assert arm.generate(7) == BATCH * 7
        assert [len(arm.last_token_ids(r)) for r in range(BATCH)] == [7] * BATCH


@pytest.mark.parametrize("precision", ["FP16", "NF4", "INT8"])
def test_batched_static_loop_equals_transformers_static_cache_generate(batched, precision):
    """The hand-written step loop over (B, 1) buffers reproduces generate() over a StaticCache for every
    row: the logic a CUDA graph of a batched step replays."""
    _, arm = batched[precision]
    arm.generate(24)
    with torch.inference_mode():
        out = arm._model.generate(input_ids=arm._prompt, attention_mask=torch.ones_like(arm._prompt),
                                  max_new_tokens=24, min_new_tokens=24, cache_implementation="static")
    for row in range(BATCH):
        assert arm.last_token_ids(row) == out[row, arm._prompt.shape[1]:].tolist()


def _tie_at(scores, token: int, ulps: int = 2) -> bool:
    """Is TOKEN's score within ULPS float16 steps of the best score: a tie the two caches may break apart."""
    best = scores.max()
    step = float(torch.finfo(torch.float16).eps) * max(abs(float(best)), 2.0 ** -14)
    return float(best - scores[token]) <= ulps * step


def test_batched_eager_equals_batched_static_up_to_a_float16_tie(batched):
    """The two backends give the same greedy tokens for every row until, at most, a step where the eager
    logits of the token static chose are within two float16 steps of the top one (random-init logits are
    nearly flat, so such ties occur; which one wins depends on the cache's reduction order)."""
    for precision, (eager, static) in batched.items():
        eager.generate(16)
        static.generate(16)
        with torch.inference_mode():
            out = eager._model.generate(input_ids=eager._prompt, attention_mask=eager._attention,
                                        max_new_tokens=16, min_new_tokens=16, output_scores=True,
                                        return_dict_in_generate=True)
        width = eager._prompt.shape[1]
        agreeing = 0
        for row in range(BATCH):
            ours, theirs = out.sequences[row, width:].tolist(), static.last_token_ids(row)
            assert eager.last_token_ids(row) == ours  # the arm's eager path is this generate()
            split = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b), None)
            if split is None:
                agreeing += 1
                continue
            assert _tie_at(out.scores[split][row].float(), theirs[split]), (precision, row, split)
        assert agreeing >= 1, precision  # a tie is the exception, not the rule


def test_info_and_bad_batch(synthetic_cache):
    wl = Workload("synthetic:tiny-llama", "eager", "cpu", cache_dir=synthetic_cache, batch_size=2)
    assert wl.info()["batch_size"] == 2
    for bad in (0, -1, 1.5, True):
        with pytest.raises(BadArgument) as err:
            Workload("synthetic:tiny-llama", "eager", "cpu", cache_dir=synthetic_cache,
                     batch_size=bad).load("FP16")
        assert "batch_size" in str(err.value) and err.value.hint


def test_batched_static_steps_need_nothing_from_the_host_but_llm_int8(batched):
    """The batch grid's static cells: a batched decode step of FP16 and NF4 reads nothing back on the host
    (as far as the CPU path of bitsandbytes shows), so batch does not stop capture; LLM.int8()'s outlier
    search still does, at any batch."""
    for precision in ("FP16", "NF4"):
        assert batched[precision][1]._decoder.host_needs(4) == [], precision
    found = batched["INT8"][1]._decoder.host_needs(4)
    assert len(found) == 1 and found[0].startswith("bitsandbytes.int8_vectorwise_quant(threshold=6)")
