"""Planted outlier features for synthetic models, and the probe of LLM.int8()'s outlier columns.

Random-init decoders (Linear weights N(0, 0.02), RMSNorm weights 1) feed the int8 layers activations of
about N(0, 1) after each RMSNorm, which essentially never reach LLM.int8()'s threshold of 6: their INT8
arm measures LLM.int8() with its FP16 outlier product idle. Real checkpoints have systematic outlier
features: a few hidden dimensions with magnitudes >= 6 in most tokens (Dettmers et al. 2022, arXiv
2208.07339: about 6 of 4096 at 6.7B parameters, in every layer from that size on, in fewer below).

``OutlierPlant(dims=K, scale=F)`` plants K such dimensions: the same K hidden dimensions, chosen from the
seed, of every decoder layer's ``input_layernorm.weight`` and ``post_attention_layernorm.weight`` are set
to F, so the inputs of q/k/v and gate/up projections carry those columns at about F times a unit normal.
K = 0 is today's init, untouched. ``probe_int8_outliers`` counts, over a few decode steps, the input
columns of the int8 layers that reach each layer's threshold: what decides bitsandbytes' split.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

DEFAULT_OUTLIER_SCALE = 20.0
MAX_OUTLIER_SCALE = 1000.0  # the norm weights are float16; far below its 65504 limit
PROBE_DECODE_STEPS = 8
PLANTED_NORMS = ("input_layernorm.weight", "post_attention_layernorm.weight")


@dataclass(frozen=True)
class OutlierPlant:
    """K hidden dimensions set to SCALE in every decoder layer's two RMSNorm weights (K = 0: none)."""

    dims: int = 0
    scale: float = DEFAULT_OUTLIER_SCALE

    @property
    def planted(self) -> bool:
        return self.dims > 0

    def label(self) -> str:
        """The part of a cache directory name that says what was planted."""
        return f"outliers{self.dims}x{self.scale:g}"

    def as_dict(self) -> dict:
        return {"dims": int(self.dims), "scale": float(self.scale)}


def plant_problem(dims: object, scale: object, hidden_size: int | None = None) -> str | None:
    """Why (DIMS, SCALE) is not a plant, or None when it is one (hidden_size bounds DIMS when known)."""
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 0:
        return f"--outlier-dims must be an integer >= 0, got {dims!r}"
    if hidden_size is not None and dims > hidden_size:
        return f"--outlier-dims {dims} is more than the model's {hidden_size} hidden dimensions"
    if (isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale)
            or not 0 < scale <= MAX_OUTLIER_SCALE):
        return f"--outlier-scale must be a number in (0, {MAX_OUTLIER_SCALE:g}], got {scale!r}"
    return None


def outlier_dims(seed: int, hidden_size: int, count: int) -> list[int]:
    """COUNT hidden dimensions chosen by SEED alone: each dimension ranked by a hash, the first COUNT kept,
    so the choice depends on no random-number generator's implementation or version."""

    def rank(d: int) -> bytes:
        return hashlib.sha256(f"{seed}:outlier-dim:{d}".encode()).digest()

    return sorted(sorted(range(hidden_size), key=rank)[:count])


def plant_outliers(model, plant: OutlierPlant, seed: int) -> list[int]:
    """Set PLANT's dimensions of every decoder layer's two RMSNorm weights to its scale, in place; returns
    the dimensions. Raises ValueError when the model does not have both norms in every layer."""
    import torch

    config = model.config
    dims = outlier_dims(seed, config.hidden_size, plant.dims)
    norms = [p for n, p in model.named_parameters() if n.endswith(PLANTED_NORMS)]
    if len(norms) != 2 * config.num_hidden_layers:
        raise ValueError(f"expected {2 * config.num_hidden_layers} decoder norms "
                         f"({', '.join(PLANTED_NORMS)}), found {len(norms)}")
    index = torch.tensor(dims, dtype=torch.long)
    with torch.no_grad():
        for norm in norms:
            norm[index.to(norm.device)] = plant.scale
    return dims


def probe_int8_outliers(torch, model, generate, decode_steps: int = PROBE_DECODE_STEPS) -> dict | None:
    """Over DECODE_STEPS decode steps of GENERATE(n) (a greedy generation of n new tokens), the share of the
    int8 layers' input columns that hold any |x| >= the layer's threshold, and the share of int8 layers
    (per step) with at least one such column; None when the model has no LLM.int8() layer with a
    threshold > 0 (FP16, NF4, or INT8 with no outlier decomposition).

    The rule is bitsandbytes' own (``int8_vectorwise_quant``, CUDA and default kernels alike): the input is
    cast to float16 and a column is an outlier column when any row reaches the threshold; those columns go
    to the FP16 product. Counting it from the hooked input keeps the probe independent of bitsandbytes'
    private state. The hooks sync (``.item()``), so they live only inside this call, never in a timed block.
    """
    layers = [(n, m) for n, m in model.named_modules() if type(m).__name__ == "Linear8bitLt"]
    if not layers or not all(float(m.state.threshold) > 0.0 for _, m in layers):
        return None
    calls: dict[str, list[tuple[int, int]]] = {name: [] for name, _ in layers}

    def hook(name, module, args):
        x = args[0]
        hit = (x.to(torch.float16).abs() >= module.state.threshold).reshape(-1, x.shape[-1]).any(dim=0)
        calls[name].append((int(hit.sum().item()), int(x.shape[-1])))

    handles = [m.register_forward_pre_hook(lambda mod, args, name=name: hook(name, mod, args))
               for name, m in layers]
    try:
        generate(decode_steps + 1)
    finally:
        for h in handles:
            h.remove()
    # each layer's first call is the prefill (the whole prompt at once), not a decode step
    decode = [c for per_layer in calls.values() for c in per_layer[1:]]
    steps = min(len(per_layer) - 1 for per_layer in calls.values())
    if not decode or steps < 1:
        return None
    thresholds = sorted({float(m.state.threshold) for _, m in layers})
    return {
        "columns_fraction": sum(n for n, _ in decode) / sum(w for _, w in decode),
        "layers_with_outliers_fraction": sum(1 for n, _ in decode if n > 0) / len(decode),
        "decode_steps": steps,
        "int8_layers": len(layers),
        "threshold": thresholds[0] if len(thresholds) == 1 else None,  # several: never seen
    }
