"""What in one decode step needs the host: the operations that stop a CUDA graph from holding the step.

A CUDA graph freezes a sequence of kernel launches on fixed buffers, so a step can be captured only if
none of its operations (a) copies a device value to the host to decide something (``Tensor.item``,
``bool(tensor)``: a synchronisation, which stream capture refuses) or (b) allocates an output whose size
depends on the data (``nonzero``: the size is only known on the host after a sync, and a replay would
reuse the captured size whatever the new data). ``audit(step)`` runs the step once, uncaptured, and
lists such operations, so a refused capture names its cause instead of CUDA's "operation failed due to a
previous error during capture".

Two observers, both passive (the step computes exactly what it would without them):
- a ``TorchDispatchMode`` sees every operator the step dispatches, with its arguments. It sees
  bitsandbytes' custom operators as single calls (their Python kernels run below the mode), so LLM.int8()'s
  activation quantization is recognised by its arguments: ``bitsandbytes::int8_vectorwise_quant`` with
  ``threshold > 0`` returns the outlier columns, found with ``if outliers.any():`` and
  ``torch.argwhere(outliers.any(dim=0))`` inside the kernel (bitsandbytes 0.50.2
  ``backends/cuda/ops.py`` and ``backends/default/ops.py``): a sync and a data-dependent size;
- on CUDA, ``torch.cuda.set_sync_debug_mode("warn")`` reports every synchronising call, including those
  inside custom kernels (warnings are collected; nothing is raised).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# aten operators that read a device value on the host, or size their output from the data
HOST_OPS = {
    "aten._local_scalar_dense.default": "copies a device value to the host (Tensor.item / bool / int)",
    "aten.is_nonzero.default": "copies a device value to the host (bool(tensor))",
    "aten.item.default": "copies a device value to the host (Tensor.item)",
    "aten.nonzero.default": "output size depends on the data (nonzero / argwhere)",
    "aten.masked_select.default": "output size depends on the data (masked_select)",
    "aten._unique2.default": "output size depends on the data (unique)",
    "aten.unique_consecutive.default": "output size depends on the data (unique_consecutive)",
    "aten.repeat_interleave.Tensor": "output size depends on the data (repeat_interleave)",
}
INT8_QUANT_OPS = ("bitsandbytes.int8_vectorwise_quant.default", "bitsandbytes.int8_double_quant.default")
INT8_WHY = (
    "LLM.int8() outlier split: the kernel tests `if outliers.any():` (a host sync) and returns "
    "torch.argwhere(...) outlier columns (a data-dependent size); bitsandbytes backends/cuda/ops.py, "
    "int8_vectorwise_quant"
)


def _threshold(args: tuple, kwargs: dict) -> float:
    value = kwargs.get("threshold", args[1] if len(args) > 1 else 0.0)
    return float(value) if isinstance(value, (int, float)) else 0.0


class _Watch(TorchDispatchMode):
    """Records the host-dependent operators a step dispatches; computes nothing differently."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def _note(self, text: str) -> None:
        if text not in self.found:
            self.found.append(text)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        if name in HOST_OPS:
            self._note(f"{name.rsplit('.', 1)[0]}: {HOST_OPS[name]}")
        elif name in INT8_QUANT_OPS and _threshold(args, kwargs) > 0.0:
            self._note(f"{name.rsplit('.', 1)[0]}(threshold={_threshold(args, kwargs):g}): {INT8_WHY}")
        return func(*args, **kwargs)


def audit(step: Callable[[], object], cuda: bool | None = None) -> list[str]:
    """Run STEP once and return what in it needs the host (empty: nothing seen that stops a capture)."""
    cuda = torch.cuda.is_available() if cuda is None else cuda
    watch = _Watch()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        previous = torch.cuda.get_sync_debug_mode() if cuda else None
        if cuda:
            torch.cuda.set_sync_debug_mode("warn")
        try:
            with watch:
                step()
        finally:
            if cuda:
                torch.cuda.set_sync_debug_mode(previous)
    syncs = sorted({str(w.message).splitlines()[0] for w in caught if "synchroniz" in str(w.message)})
    return watch.found + [f"CUDA sync: {s}" for s in syncs]
