"""Known models (nominal and counted parameter counts, Hugging Face ids) and known GPU architectures."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Architectures a report may name; the same set the measurement CLI derives from the GPU name.
KNOWN_ARCHS = ("ada", "ampere", "blackwell", "hopper", "turing", "volta")


@dataclass(frozen=True)
class KnownModel:
    name: str  # canonical short name, as in reference/anchors.csv
    hf_id: str
    nominal_b: float  # the size in the model's name
    counted_b: float  # every parameter of the FP16 checkpoint, embeddings included


# Counted sizes: the safetensors parameter totals shown on each model's Hugging Face page
# (TinyLlama 1,100,048,384; Qwen2-0.5B 494,032,768; Qwen2-1.5B 1,543,714,304; Qwen2.5-3B 3,085,938,688;
# Qwen2-7B 7,615,616,512; Mistral-7B-v0.1 7,241,732,096; Llama-3.1-8B 8,030,261,248; Yi-1.5-9B 8,829,407,232;
# Qwen2.5-14B 14,770,033,664).
KNOWN_MODELS = (
    KnownModel("TinyLlama-1.1B", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", 1.1, 1.100),
    KnownModel("Qwen2-0.5B", "Qwen/Qwen2-0.5B", 0.5, 0.494),
    KnownModel("Qwen2-1.5B", "Qwen/Qwen2-1.5B", 1.5, 1.544),
    KnownModel("Qwen2.5-3B", "Qwen/Qwen2.5-3B", 3.0, 3.086),
    KnownModel("Qwen2-7B", "Qwen/Qwen2-7B", 7.0, 7.616),
    KnownModel("Mistral-7B", "mistralai/Mistral-7B-v0.1", 7.0, 7.242),
    KnownModel("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", 8.0, 8.030),
    KnownModel("Yi-1.5-9B", "01-ai/Yi-1.5-9B", 9.0, 8.829),
    KnownModel("Qwen2.5-14B", "Qwen/Qwen2.5-14B", 14.0, 14.770),
)

# Variant suffixes that do not change the parameter count (chat/instruct tunes, checkpoint versions).
VARIANT = re.compile(r"-(chat|instruct|it|base|hf|v\d+(\.\d+)*|intermediate.*|step.*)$")


def model_key(name: str) -> str:
    """Canonical lookup key of a model name, HF id or `synthetic:<name>` id."""
    key = name.strip().lower().rsplit("/", 1)[-1].removeprefix("synthetic:").removeprefix("meta-")
    previous = None
    while previous != key:
        previous, key = key, VARIANT.sub("", key)
    return key


def lookup_model(*names: str | None) -> KnownModel | None:
    """The known model matching the first name (model_name, model_id, ...) that matches one, else None."""
    table = {model_key(m.name): m for m in KNOWN_MODELS}
    for name in names:
        if isinstance(name, str) and name:
            found = table.get(model_key(name))
            if found:
                return found
    return None
