"""Synthetic models: published architecture shapes, built with seeded random weights and cached on disk.

A synthetic model is a named architecture (``--synthetic NAME``) rebuilt from the numbers in its
published ``config.json`` / model card, with random-init weights and no download. Its reports say
``weights: "random-init"`` and ``model_id: "synthetic:<name>"``.

The FP16 weights are materialised once per cache directory: built on the meta device, filled with a
seeded per-parameter random init on the target device (see ``init_random``),
saved with ``save_pretrained`` (safetensors) under
``<cache_dir>/<name>-seed<seed>-<key>/``. Every arm then loads that directory with ``from_pretrained`` —
the FP16 arm as float16, NF4/INT8 through bitsandbytes' own quantizing loader — which is exactly the code
path a real Hugging Face id takes, and guarantees the arms share one set of weights.

The shape table is plain data; transformers/torch are imported only inside the functions that build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from measure.gpu.outliers import PLANTED_NORMS, OutlierPlant, plant_outliers

CACHE_ENV = "QUANTJOULE_CACHE"
_READY_MARKER = "quantjoule-synthetic.json"


@dataclass(frozen=True)
class SyntheticSpec:
    """One published decoder shape; numbers from the model's own config.json on its model card."""

    name: str
    model_name: str
    model_type: str  # transformers model_type: llama | qwen2 | mistral
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    max_position_embeddings: int
    rope_theta: float
    rms_norm_eps: float
    tie_word_embeddings: bool
    published_params_b: float
    source: str
    extra: dict = field(default_factory=dict)


def _spec(**kwargs) -> SyntheticSpec:
    return SyntheticSpec(**kwargs)


# Published parameter counts (published_params_b) are the models' stated sizes; tests check that the
# rebuilt shape counts to the same figure within rounding.
SYNTHETIC_MODELS: dict[str, SyntheticSpec] = {
    s.name: s
    for s in (
        _spec(name="tinyllama-1.1b", model_name="TinyLlama-1.1B", model_type="llama", hidden_size=2048,
              intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
              vocab_size=32000, max_position_embeddings=2048, rope_theta=10000.0, rms_norm_eps=1e-5,
              tie_word_embeddings=False, published_params_b=1.1,
              source="TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json"),
        _spec(name="qwen2-0.5b", model_name="Qwen2-0.5B", model_type="qwen2", hidden_size=896,
              intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
              vocab_size=151936, max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
              tie_word_embeddings=True, published_params_b=0.49, source="Qwen/Qwen2-0.5B config.json"),
        _spec(name="qwen2-1.5b", model_name="Qwen2-1.5B", model_type="qwen2", hidden_size=1536,
              intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
              vocab_size=151936, max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
              tie_word_embeddings=True, published_params_b=1.54, source="Qwen/Qwen2-1.5B config.json"),
        _spec(name="qwen2.5-3b", model_name="Qwen2.5-3B", model_type="qwen2", hidden_size=2048,
              intermediate_size=11008, num_hidden_layers=36, num_attention_heads=16, num_key_value_heads=2,
              vocab_size=151936, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
              tie_word_embeddings=True, published_params_b=3.09, source="Qwen/Qwen2.5-3B config.json"),
        _spec(name="qwen2-7b", model_name="Qwen2-7B", model_type="qwen2", hidden_size=3584,
              intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
              vocab_size=152064, max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
              tie_word_embeddings=False, published_params_b=7.62, source="Qwen/Qwen2-7B config.json"),
        _spec(name="mistral-7b", model_name="Mistral-7B", model_type="mistral", hidden_size=4096,
              intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
              vocab_size=32000, max_position_embeddings=32768, rope_theta=10000.0, rms_norm_eps=1e-5,
              tie_word_embeddings=False, published_params_b=7.24,
              source="mistralai/Mistral-7B-v0.1 config.json", extra={"sliding_window": 4096}),
        _spec(name="llama-3.1-8b", model_name="Llama-3.1-8B", model_type="llama", hidden_size=4096,
              intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
              vocab_size=128256, max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
              tie_word_embeddings=False, published_params_b=8.03,
              source="meta-llama/Llama-3.1-8B config.json",
              extra={"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}),
        # A few MB, for tests: dimensions are multiples of 64 so bitsandbytes' 4-bit blocks fit exactly.
        _spec(name="tiny-llama", model_name="tiny-llama", model_type="llama", hidden_size=128,
              intermediate_size=384, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              vocab_size=4096, max_position_embeddings=512, rope_theta=10000.0, rms_norm_eps=1e-5,
              tie_word_embeddings=False, published_params_b=0.0014, source="quantjoule test shape"),
    )
}


class UnknownSyntheticModel(ValueError):
    """The requested synthetic name is not in the table."""


def get_spec(name: str) -> SyntheticSpec:
    """The spec for NAME (case-insensitive); UnknownSyntheticModel lists the known names otherwise."""
    spec = SYNTHETIC_MODELS.get(name.strip().lower())
    if spec is None:
        raise UnknownSyntheticModel(
            f"unknown synthetic model {name!r}; known: {', '.join(sorted(SYNTHETIC_MODELS))}"
        )
    return spec


def config_dict(spec: SyntheticSpec) -> dict:
    """The config.json fields of SPEC (plain data, what transformers' config class is built from)."""
    cfg = {
        "model_type": spec.model_type,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_hidden_layers": spec.num_hidden_layers,
        "num_attention_heads": spec.num_attention_heads,
        "num_key_value_heads": spec.num_key_value_heads,
        "vocab_size": spec.vocab_size,
        "max_position_embeddings": spec.max_position_embeddings,
        "rope_theta": spec.rope_theta,
        "rms_norm_eps": spec.rms_norm_eps,
        "tie_word_embeddings": spec.tie_word_embeddings,
        "hidden_act": "silu",
        "initializer_range": 0.02,
        "bos_token_id": 1,
        "eos_token_id": 2,
    }
    cfg.update(spec.extra)
    return cfg


def build_config(spec: SyntheticSpec):
    """A transformers config object for SPEC."""
    from transformers import AutoConfig

    fields = config_dict(spec)
    model_type = fields.pop("model_type")
    return AutoConfig.for_model(model_type, **fields)


def count_params_meta(spec: SyntheticSpec) -> int:
    """Parameters of SPEC counted on the meta device (no memory allocated; tied weights counted once)."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(build_config(spec))
    return sum(p.numel() for p in model.parameters())


def default_cache_dir() -> Path:
    """$QUANTJOULE_CACHE, else ~/.cache/quantjoule/synthetic."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return Path.home() / ".cache" / "quantjoule" / "synthetic"


def cache_key(spec: SyntheticSpec, seed: int, versions: dict[str, str],
              plant: OutlierPlant | None = None) -> str:
    """Directory key: the shape, the seed, the torch/transformers versions that made the weights and, when
    outlier features are planted, the plant (no plant: the key every unplanted cache already has)."""
    fields = {"spec": asdict(spec), "seed": seed, "versions": versions}
    if plant is not None and plant.planted:
        fields["outlier_plant"] = plant.as_dict()
    blob = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def cache_name(spec: SyntheticSpec, seed: int, versions: dict[str, str],
               plant: OutlierPlant | None = None) -> str:
    """The cache directory's name: <name>-seed<seed>[-outliers<K>x<F>]-<key>."""
    planted = f"-{plant.label()}" if plant is not None and plant.planted else ""
    return f"{spec.name}-seed{seed}{planted}-{cache_key(spec, seed, versions, plant)}"


def _param_seed(seed: int, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "little") >> 1


def init_device_label(device: str) -> str:
    """What the weights depend on besides the seed: 'cpu', or 'cuda:<GPU name>' (its RNG stream)."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(dev)}"
    return dev.type


def init_random(model, seed: int, std: float, device: str) -> None:
    """Seeded random init in place, the distribution transformers' own init uses for these decoders.

    Linear and embedding weights ~ N(0, std); RMSNorm weights 1; biases 0. Each parameter draws from its
    own generator seeded by (seed, parameter name), so the result does not depend on iteration order.
    Drawing on the GPU avoids transformers' slow default CPU init. The same seed gives the same weights on
    the same kind of device; the cache key records which.
    """
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():  # tied weights are yielded once
            if name.endswith("norm.weight"):
                param.fill_(1.0)
            elif name.endswith(".bias"):
                param.zero_()
            else:
                gen = torch.Generator(device=device).manual_seed(_param_seed(seed, name))
                param.normal_(0.0, std, generator=gen)


def materialize(spec: SyntheticSpec, seed: int, cache_dir: Path | None = None, device: str = "cpu",
                plant: OutlierPlant | None = None) -> Path:
    """Directory holding SPEC's seeded random-init FP16 weights; built and saved on first use only.

    The model is built on the meta device (no memory, no default init), allocated on DEVICE, filled by
    ``init_random``, given PLANT's outlier features when it plants any (``measure.gpu.outliers``; every
    other weight is the unplanted model's) and saved with ``save_pretrained``. The build happens in a
    temporary sibling directory renamed into place when complete, so an interrupted build never leaves a
    half-written model that a later run would trust.
    """
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    versions = {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__,
                "init_device": init_device_label(device), "init": "per-parameter-seeded-v1"}
    planted = plant is not None and plant.planted
    target = root / cache_name(spec, seed, versions, plant)
    if (target / _READY_MARKER).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=root))
    try:
        config = build_config(spec)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float16)
        model = model.to_empty(device=device)
        model.tie_weights()
        init_random(model, seed, float(config.initializer_range), device)
        marker = {"synthetic": spec.name, "seed": seed, "versions": versions, "weights": "random-init"}
        if planted:
            dims = plant_outliers(model, plant, seed)
            marker["outlier_plant"] = {**plant.as_dict(), "hidden_dims": dims,
                                       "norms": [f"every decoder layer's {n}" for n in PLANTED_NORMS]}
        model.save_pretrained(tmp)
        del model
        (tmp / _READY_MARKER).write_text(json.dumps(marker, sort_keys=True) + "\n")
        try:
            tmp.rename(target)
        except OSError:
            # Another process finished the same build first; its copy is identical (same seed, same code).
            if not (target / _READY_MARKER).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
