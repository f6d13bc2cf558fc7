"""Synthetic shapes: published parameter counts, config fields, seeded and cached materialisation."""

import hashlib

import pytest

from measure.gpu import synthetic
from measure.gpu.synthetic import SYNTHETIC_MODELS, count_params_meta, get_spec, materialize

# Exact parameter counts of the published checkpoints (safetensors totals on each model card).
PUBLISHED_PARAMS = {
    "tinyllama-1.1b": 1_100_048_384,
    "qwen2-0.5b": 494_032_768,
    "qwen2-1.5b": 1_543_714_304,
    "qwen2.5-3b": 3_085_938_688,
    "qwen2-7b": 7_615_616_512,
    "mistral-7b": 7_241_732_096,
    "llama-3.1-8b": 8_030_261_248,
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_meta_count_matches_published_size(name):
    count = count_params_meta(get_spec(name))
    assert count == PUBLISHED_PARAMS[name]
    assert round(count / 1e9, 2) == pytest.approx(SYNTHETIC_MODELS[name].published_params_b, abs=0.005)


def test_tiny_llama_is_a_few_megabytes():
    count = count_params_meta(get_spec("tiny-llama"))
    assert 2 * count < 4_000_000


def test_config_carries_the_published_shape():
    cfg = synthetic.build_config(get_spec("llama-3.1-8b"))
    assert (cfg.hidden_size, cfg.num_hidden_layers, cfg.num_key_value_heads) == (4096, 32, 8)
    assert cfg.vocab_size == 128256 and cfg.tie_word_embeddings is False
    assert cfg.model_type == "llama"
    qwen = synthetic.build_config(get_spec("qwen2-0.5b"))
    assert qwen.model_type == "qwen2" and qwen.tie_word_embeddings is True
    assert synthetic.build_config(get_spec("mistral-7b")).sliding_window == 4096


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(synthetic.UnknownSyntheticModel, match="tinyllama-1.1b"):
        get_spec("gpt-17")
    assert get_spec(" TinyLlama-1.1B ").name == "tinyllama-1.1b"


def _digest(directory):
    return hashlib.sha256((directory / "model.safetensors").read_bytes()).hexdigest()


def test_materialize_is_seeded_and_reused(tmp_path):
    spec = get_spec("tiny-llama")
    first = materialize(spec, seed=0, cache_dir=tmp_path / "a")
    stamp = (first / "model.safetensors").stat().st_mtime_ns
    again = materialize(spec, seed=0, cache_dir=tmp_path / "a")
    assert again == first and (again / "model.safetensors").stat().st_mtime_ns == stamp
    elsewhere = materialize(spec, seed=0, cache_dir=tmp_path / "b")
    assert _digest(elsewhere) == _digest(first)
    other_seed = materialize(spec, seed=1, cache_dir=tmp_path / "a")
    assert other_seed != first and _digest(other_seed) != _digest(first)
    # nothing half-built is left behind
    assert sorted(p.name for p in (tmp_path / "a").iterdir() if p.name.startswith(".")) == []


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(synthetic.CACHE_ENV, str(tmp_path))
    assert synthetic.default_cache_dir() == tmp_path


def test_tied_qwen2_shape_materialises_with_tied_head(tmp_path):
    """Qwen2 shapes tie lm_head to the embedding and carry q/k/v biases: init and save must keep both."""
    import dataclasses

    import torch
    from transformers import AutoModelForCausalLM

    spec = dataclasses.replace(
        get_spec("qwen2-0.5b"), name="tiny-qwen2", hidden_size=128, intermediate_size=256,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=1024,
    )
    directory = materialize(spec, seed=0, cache_dir=tmp_path)
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float16)
    assert model.lm_head.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    assert sum(p.numel() for p in model.parameters()) == count_params_meta(spec)
    bias = model.model.layers[0].self_attn.q_proj.bias
    assert bias is not None and torch.count_nonzero(bias) == 0
    norm = model.model.layers[0].input_layernorm.weight
    assert torch.all(norm == 1)
    weight = model.model.layers[0].mlp.up_proj.weight.float()
    assert abs(weight.std().item() - 0.02) < 0.002 and abs(weight.mean().item()) < 0.002
