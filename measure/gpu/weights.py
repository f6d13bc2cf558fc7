"""Weight accounting of a loaded model: parameters counted as loaded, and the bytes one decode step reads.

bitsandbytes packs two 4-bit weights per uint8 element, halving ``numel()``, so a ``Params4bit`` is counted
by the original shape kept in its ``quant_state``; int8 and float parameters by ``numel()``; tied weights
once. The bytes are every parameter plus its quantization state (4-bit absmax, quant map, nested
statistics; int8 row scales), as stored on the device: read after one forward pass, because bitsandbytes
settles some layouts lazily. Buffers (rotary frequencies) are not counted.
"""

from __future__ import annotations

import math


def _unique_params(model):
    seen: set[int] = set()
    for param in model.parameters():
        if id(param) not in seen:
            seen.add(id(param))
            yield param


def count_params(model) -> int:
    """Parameters as loaded: a Params4bit by the original shape in its quant_state, tied weights once."""
    total = 0
    for param in _unique_params(model):
        state = getattr(param, "quant_state", None)
        total += math.prod(state.shape) if state is not None else param.numel()
    return total


def _quant_tensors(module, param):
    state = getattr(param, "quant_state", None)
    if state is not None:
        yield from (state.absmax, state.code, getattr(state, "offset", None))
        nested = getattr(state, "state2", None)
        if nested is not None:
            yield from (nested.absmax, nested.code)
    # LLM.int8() row scales start on the weight and move to the module's state at the first forward.
    yield getattr(param, "SCB", None)
    yield getattr(getattr(module, "state", None), "SCB", None)


def weight_bytes(model) -> int:
    """Bytes of every parameter and its quantization state as stored on the device (buffers excluded)."""
    import torch

    seen: set[tuple[int, int]] = set()
    total = 0
    for module in model.modules():
        for param in module.parameters(recurse=False):
            for tensor in (param, *_quant_tensors(module, param)):
                if not isinstance(tensor, torch.Tensor):
                    continue
                key = (tensor.data_ptr(), tensor.numel())
                if key not in seen:
                    seen.add(key)
                    total += tensor.numel() * tensor.element_size()
    return total
