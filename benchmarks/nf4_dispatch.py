"""Which NF4 layers bitsandbytes runs as "dequantize, then F.linear" at a decode batch, by its own rule.

bitsandbytes' CUDA ``gemm_4bit`` picks, per call, between its fused 4-bit kernel and a fallback that
dequantizes the whole weight to FP16 and calls ``F.linear`` (``backends/cuda/ops.py``: ``M <= 4`` always
fused, then ``_gemm_4bit_use_custom_cuda(device, dtype, M, N, K)``, then nothing fused past M = 1536).
This script reads that rule from the installed package's source (or a wheel), without importing it (the
CUDA backend cannot import on a CPU-only machine), and evaluates it for every quantized linear layer of a
synthetic model at decode rows M = batch size on a card with a given SM count and compute capability.

    python -m benchmarks.nf4_dispatch --batch 1 --batch 8 --batch 32 --batch 64
    python -m benchmarks.nf4_dispatch --wheel .whl/bitsandbytes-0.50.2-*.whl --sms 132 --cc 9.0

The byte model is the reason it matters for energy: a fused step reads the 4-bit weight (0.5 byte per
parameter, absmax aside); a fallback step reads it, writes an FP16 copy and reads that back (4.5 bytes per
parameter), where FP16 reads 2. `bytes vs FP16` is the weight bytes one NF4 decode step moves over FP16's.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib.util
import sys
import types
import zipfile
from pathlib import Path

from measure.gpu.synthetic import SYNTHETIC_MODELS, SyntheticSpec

OPS = "bitsandbytes/backends/cuda/ops.py"
RULE = "_gemm_4bit_use_custom_cuda"
FLOOR = "_GEMM_4BIT_CUSTOM_FLOOR_M"
MAX_M = 1536  # the CUDA branch's `_gemm_4bit_custom_max_m` in the same file
BYTES_FUSED, BYTES_FALLBACK, BYTES_FP16 = 0.5, 4.5, 2.0
DEFAULT_MODELS = ("qwen2-0.5b", "tinyllama-1.1b", "qwen2-1.5b", "qwen2.5-3b", "qwen2-7b")


def ops_source(wheel: Path | None) -> tuple[str, str]:
    """The text of bitsandbytes' CUDA ops module and where it came from."""
    if wheel is not None:
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(OPS).decode(), f"{wheel.name}:{OPS}"
    spec = importlib.util.find_spec("bitsandbytes")  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bitsandbytes is not installed here; pass --wheel PATH")
    path = Path(next(iter(spec.submodule_search_locations))) / "backends" / "cuda" / "ops.py"
    return path.read_text(), str(path)


def load_rule(source: str, sms: int, cc: tuple[int, int]):
    """The rule as a function of (M, N, K) for FP16 activations on a card with SMS SMs and compute cc."""
    tree = ast.parse(source)
    keep = [n for n in tree.body
            if (isinstance(n, ast.FunctionDef) and n.name == RULE)
            or (isinstance(n, ast.Assign) and any(getattr(t, "id", None) == FLOOR for t in n.targets))]
    if len(keep) != 2:
        raise SystemExit(f"{RULE} or {FLOOR} not found: this bitsandbytes has another dispatch")
    # Only dtype identity is used by the rule, so plain sentinels stand in for torch's dtypes.
    fake_torch = types.SimpleNamespace(float16="float16", bfloat16="bfloat16", float32="float32")
    ns = {"functools": functools, "torch": fake_torch,
          "_gpu_dispatch_props": lambda _index: (sms, cc[0], cc[1])}
    exec(compile(ast.Module(body=keep, type_ignores=[]), OPS, "exec"), ns)  # noqa: S102 (the package's own code)
    rule = ns[RULE]

    def fused(m: int, n: int, k: int) -> bool:
        return m <= MAX_M and rule(0, "float16", m, n, k)
    return fused


def linear_shapes(spec: SyntheticSpec) -> list[tuple[str, int, int]]:
    """(name, N out, K in) of one decoder layer's quantized linears (lm_head stays FP16)."""
    h, i = spec.hidden_size, spec.intermediate_size
    kv = spec.num_key_value_heads * (h // spec.num_attention_heads)
    return [("q", h, h), ("k", kv, h), ("v", kv, h), ("o", h, h),
            ("gate", i, h), ("up", i, h), ("down", h, i)]


def dispatch(spec: SyntheticSpec, batch: int, fused) -> dict:
    """Per-layer path at M = batch and the weight bytes one decode step moves against FP16."""
    shapes = linear_shapes(spec)
    params = sum(n * k for _, n, k in shapes)
    fallback = [(name, n * k) for name, n, k in shapes if not fused(batch, n, k)]
    f = sum(p for _, p in fallback) / params
    nf4_bytes = f * BYTES_FALLBACK + (1 - f) * BYTES_FUSED
    return {"fallback_layers": [name for name, _ in fallback], "fallback_share": f,
            "bytes_vs_fp16_pct": 100.0 * (nf4_bytes / BYTES_FP16 - 1.0)}


def table(models: list[str], batches: list[int], fused) -> str:
    lines = ["| model | batch | dequantize + F.linear | share of weights | weight bytes vs FP16 |",
             "| --- | --- | --- | --- | --- |"]
    for name in models:
        spec = SYNTHETIC_MODELS[name]
        for b in batches:
            d = dispatch(spec, b, fused)
            layers = ", ".join(d["fallback_layers"]) or "none"
            lines.append(f"| {spec.model_name} | {b} | {layers} | {100 * d['fallback_share']:.0f} % "
                         f"| {d['bytes_vs_fp16_pct']:+.0f} % |")
    return "\n".join(lines)


def describe(models: list[str], batches: list[int], sms: int, cc: str, wheel: Path | None = None) -> str:
    """Where the rule was read, for which card, and its table: what the command prints."""
    major, minor = (int(x) for x in cc.split("."))
    source, where = ops_source(wheel)
    fused = load_rule(source, sms, (major, minor))
    return f"rule: {where}; {sms} SMs, sm{major}{minor}\n" + table(models, batches, fused)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, help="read the rule from this bitsandbytes wheel")
    ap.add_argument("--sms", type=int, default=132, help="SM count (H100 SXM and H200: 132)")
    ap.add_argument("--cc", default="9.0", help="compute capability (Hopper: 9.0)")
    ap.add_argument("--batch", type=int, action="append", help="decode batch size (repeatable)")
    ap.add_argument("--model", action="append", choices=sorted(SYNTHETIC_MODELS), help="(repeatable)")
    a = ap.parse_args(argv)
    print(describe(a.model or list(DEFAULT_MODELS), a.batch or [1, 8, 32, 64], a.sms, a.cc, a.wheel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
