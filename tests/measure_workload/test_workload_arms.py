"""Arms of a tiny random-init Llama through real transformers + bitsandbytes on CPU."""

import math

import pytest
import torch

from measure.gpu.synthetic import count_params_meta, get_spec

pytestmark = pytest.mark.slow

TINY_PARAMS = 1_442_432  # tiny-llama, counted independently on the meta device in test_params_match_meta


def test_params_match_meta():
    assert count_params_meta(get_spec("tiny-llama")) == TINY_PARAMS


@pytest.mark.parametrize("precision", ["FP16", "NF4", "INT8"])
@pytest.mark.parametrize("new_tokens", [1, 2, 7, 33])
def test_exact_token_counts(eager_arms, static_arms, precision, new_tokens):
    for arms in (eager_arms, static_arms):
        arm = arms[precision]
        assert arm.generate(new_tokens) == new_tokens
        tokens = arm.last_token_ids()
        assert len(tokens) == new_tokens
        assert all(0 <= t < get_spec("tiny-llama").vocab_size for t in tokens)


def test_arm_metadata(eager_arms):
    for precision, arm in eager_arms.items():
        assert arm.precision == precision
        assert arm.dtype == "float16"  # torch 2.13 CPU has float16 kernels, so no float32 fallback here
        assert arm.weights == "random-init"
        assert arm.backend == "eager"
        assert arm.device == "cpu"


def test_params_counted_from_loaded_model_for_every_arm(eager_arms):
    for arm in eager_arms.values():
        assert arm.params == TINY_PARAMS
        assert arm.params_b == pytest.approx(TINY_PARAMS / 1e9)
    # bitsandbytes really packs 4-bit weights two per byte: a naive numel() count would be wrong
    naive = sum(p.numel() for p in eager_arms["NF4"]._model.parameters())
    assert naive < TINY_PARAMS


def test_weight_bytes_order_and_exact_fp16(eager_arms):
    from measure.gpu.weights import weight_bytes

    # the same figure after decoding (bitsandbytes moves int8 scales at the first forward)
    for arm in eager_arms.values():
        arm.generate(2)
        assert weight_bytes(arm._model) == arm.weight_bytes
    fp16, nf4, int8 = (eager_arms[p].weight_bytes for p in ("FP16", "NF4", "INT8"))
    assert nf4 < int8 < fp16
    assert fp16 == 2 * TINY_PARAMS
    # quantized linears: 4-bit = half a byte per weight (+ absmax per 64-block), int8 = 1 byte (+ row scale)
    spec = get_spec("tiny-llama")
    embed = 2 * spec.vocab_size * spec.hidden_size  # embed_tokens + lm_head stay float16
    norms = spec.hidden_size * (2 * spec.num_hidden_layers + 1)
    linear = TINY_PARAMS - embed - norms
    assert int8 - 2 * (embed + norms) - linear > 0  # the row scales
    assert nf4 - 2 * (embed + norms) - linear // 2 > 0  # the absmax blocks and quant maps
    assert nf4 - 2 * (embed + norms) < linear // 2 + linear // 64 * 4 + 64 * 4 * 100


def _layer_output(arm, name="model.layers.0.mlp.down_proj"):
    """One linear layer of ARM applied to a fixed input: compares weights across storage formats."""
    module = dict(arm._model.named_modules())[name]
    gen = torch.Generator().manual_seed(123)
    x = torch.randn(1, 4, module.in_features, generator=gen).to(torch.float16)
    with torch.inference_mode():
        return module(x).float().flatten()


def _corr(a, b):
    return float(torch.corrcoef(torch.stack([a, b]))[0, 1])


def test_arms_share_one_set_of_weights(eager_arms):
    ref = _layer_output(eager_arms["FP16"])
    for precision, tol in (("NF4", 0.2), ("INT8", 0.05)):
        out = _layer_output(eager_arms[precision])
        assert float((out - ref).norm() / ref.norm()) < tol
        assert _corr(out, ref) > 0.98
    # the unquantized embedding is bit-identical across arms
    emb = [a._model.get_input_embeddings().weight for a in eager_arms.values()]
    assert all(torch.equal(emb[0], e) for e in emb[1:])


def test_a_different_seed_gives_different_weights(eager_arms, synthetic_cache):
    from measure.gpu.workload import Workload

    other = Workload("synthetic:tiny-llama", device="cpu", seed=1, cache_dir=synthetic_cache).load("FP16")
    assert abs(_corr(_layer_output(other), _layer_output(eager_arms["FP16"]))) < 0.2
    assert other.prompt_ids != eager_arms["FP16"].prompt_ids  # the seeded prompt follows the seed too


def _first_split(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)


@pytest.mark.parametrize("precision", ["FP16", "NF4", "INT8"])
def test_static_loop_equals_transformers_static_cache_generate(static_arms, precision):
    """Same cache, same masks: the hand-written step loop must reproduce generate() over a StaticCache
    token for token (this is the logic the CUDA graph replays)."""
    arm = static_arms[precision]
    arm.generate(64)
    with torch.inference_mode():
        out = arm._model.generate(input_ids=arm._prompt, attention_mask=torch.ones_like(arm._prompt),
                                  max_new_tokens=64, min_new_tokens=64, cache_implementation="static")
    assert arm.last_token_ids() == out[0, arm._prompt.shape[1]:].tolist()


def _top2(arm, prefix):
    seq = torch.tensor([arm.prompt_ids + prefix])
    with torch.inference_mode():
        logits = arm._model(input_ids=seq).logits[0, -1].float()
    return logits.topk(2).values.tolist()


@pytest.mark.parametrize("precision", ["FP16", "NF4", "INT8"])
def test_static_equals_eager_up_to_a_float16_tie(eager_arms, static_arms, precision):
    """Eager decodes over a growing dynamic cache, static over a fixed-length masked one, so logits can
    differ in the last float16 bit. The tokens must be equal; where they part (a greedy choice between
    near-equal logits), the two best logits must be a tie to float16 resolution -- a logic error would
    part them at a clear winner."""
    eager = eager_arms[precision].eager_token_ids(64)
    static_arms[precision].generate(64)
    split = _first_split(eager, static_arms[precision].last_token_ids())
    if split is None:
        return
    first, second = _top2(eager_arms[precision], eager[:split])
    ulp = 2.0 ** (math.floor(math.log2(abs(first))) - 10)  # float16 spacing at the top logit
    assert first - second <= 2 * ulp, (split, first, second)


def test_generation_is_deterministic(eager_arms, static_arms):
    for arms in (eager_arms, static_arms):
        arm = arms["NF4"]
        arm.generate(20)
        first = arm.last_token_ids()
        arm.generate(20)
        assert arm.last_token_ids() == first


def test_perplexity_unavailable_for_random_init(eager_arms):
    for arm in eager_arms.values():
        value, reason = arm.perplexity()
        assert value is None
        assert "random-init" in reason


def test_info_fields(eager_workload, eager_arms):
    info = eager_workload.info()
    assert info["model_name"] == "tiny-llama"
    assert info["model_id"] == "synthetic:tiny-llama"
    assert info["model_revision"] is None
    assert info["weights"] == "random-init"
    assert info["backend"] == "eager"
    assert info["versions"]["torch"] == torch.__version__
    import bitsandbytes
    import transformers

    assert info["versions"]["transformers"] == transformers.__version__
    assert info["versions"]["bitsandbytes"] == bitsandbytes.__version__
    assert info["torch_cuda"] == torch.version.cuda


def test_synthetic_info_uses_canonical_name(synthetic_cache):
    from measure.gpu.workload import Workload

    info = Workload("synthetic:TinyLlama-1.1B", cache_dir=synthetic_cache).info()
    assert info["model_name"] == "TinyLlama-1.1B" and info["model_id"] == "synthetic:tinyllama-1.1b"
