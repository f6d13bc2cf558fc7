"""GPU smoke test of the workload seam: arms resident together, exact counts, static == eager, tok/s.

Run on a CUDA machine (or ``--device cpu --model synthetic:tiny-llama`` for a dry run):

    python -m benchmarks.gpu_smoke_workload --out result.json

What it does, in order, writing the JSON after every stage so a killed run still leaves its figures:
1. loads FP16, NF4 and INT8 of the model (eager backend) resident together: load time, dtype,
   params, weight bytes, GPU memory after each;
2. exact token counts (1 and 17 new tokens, each arm);
3. eager tok/s for ``--tokens`` new tokens, arms interleaved per repeat;
4. a second workload with the static backend: per precision the capture (or the reason it fails), the
   capture time, captured tokens vs the eager arm's tokens (same weights, same prompt), vs the same
   static loop run uncaptured, and vs transformers' generate over a StaticCache; then static tok/s
   interleaved like eager;
5. a health check after any failed capture (the other arms still decode);
6. INT8 with bitsandbytes' outlier decomposition off (``llm_int8_threshold=0``, ``--int8-threshold 0`` of
   ``measure run``): what the capture audit saw, the capture, captured tokens vs the same loop uncaptured
   and vs eager at the same threshold, and tok/s. This is the capturable INT8 candidate
   (measure/README.md, "INT8 under CUDA graphs"); it is not LLM.int8().
The model is random-init (synthetic), so energy is not measured here: this is about the seam.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from measure.core.design import PRECISIONS
from measure.gpu.errors import WorkloadError
from measure.gpu.workload import Workload


def _mem(torch) -> dict:
    if not torch.cuda.is_available():
        return {}
    free_b, total_b = torch.cuda.mem_get_info()
    return {
        "allocated_bytes": torch.cuda.memory_allocated(),
        "reserved_bytes": torch.cuda.memory_reserved(),
        "max_allocated_bytes": torch.cuda.max_memory_allocated(),
        "device_used_bytes": total_b - free_b,
    }


def _first_divergence(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _top2_gap(torch, arm, prefix: list[int]) -> dict:
    """Logit gap between the two best tokens after PREFIX (teacher-forced): how close to a tie a split was."""
    seq = torch.tensor([arm.prompt_ids + prefix], device=arm._model.device)
    with torch.inference_mode():
        logits = arm._model(input_ids=seq, logits_to_keep=1).logits[0, -1].float()
    top = logits.topk(2)
    return {
        "top2_ids": top.indices.tolist(),
        "top2_logits": top.values.tolist(),
        "gap": float(top.values[0] - top.values[1]),
        "logit_sd": float(logits.std()),
    }


def _timed(torch, arm, tokens: int) -> float:
    start = time.perf_counter()
    got = arm.generate(tokens)
    elapsed = time.perf_counter() - start
    assert got == tokens, (got, tokens)
    return tokens / elapsed


def main() -> int:
    try:
        return _main()
    except Exception:  # a smoke run reports how far it got rather than losing the partial figures
        import traceback

        traceback.print_exc()
        return 1


def _main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="synthetic:tinyllama-1.1b")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--budget-s", type=float, default=210.0, help="skip remaining repeats past this (eager: 35 %% of it)"
    )
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", default="gpu_smoke_workload.json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out_path = Path(args.out)
    result: dict = {
        "model": args.model,
        "device": args.device,
        "tokens": args.tokens,
        "repeats": args.repeats,
        "python": platform.python_version(),
        "stages": {},
    }

    def save(stage: str) -> None:
        result["elapsed_s"] = round(time.perf_counter() - t0, 2)
        result["last_stage"] = stage
        out_path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        print(f"[{result['elapsed_s']:7.1f}s] {stage}", flush=True)

    import torch

    result["torch"] = torch.__version__
    result["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    eager_wl = Workload(args.model, backend="eager", device=args.device, cache_dir=args.cache_dir)
    t = time.perf_counter()
    eager_wl.source()
    result["materialize_s"] = round(time.perf_counter() - t, 2)
    result["info"] = eager_wl.info()
    save("materialized")

    # 1. arms resident together
    arms, loads = {}, {}
    for p in PRECISIONS:
        t = time.perf_counter()
        try:
            arm = eager_wl.load(p)
        except WorkloadError as exc:
            loads[p] = {"status": "unavailable", "kind": exc.kind, "error": str(exc)}
            continue
        arms[p] = arm
        loads[p] = {
            "status": "ok",
            "load_s": round(time.perf_counter() - t, 2),
            "dtype": arm.dtype,
            "params": arm.params,
            "params_b": round(arm.params_b, 4),
            "weight_bytes": arm.weight_bytes,
            "memory_after": _mem(torch),
        }
        print(p, loads[p], flush=True)
    result["stages"]["load_eager"] = loads
    save("loaded eager arms")

    # 2. exact counts
    counts = {
        p: {n: (arm.generate(n), len(arm.last_token_ids())) for n in (1, 17)} for p, arm in arms.items()
    }
    result["stages"]["exact_counts"] = {p: {str(n): list(v) for n, v in c.items()} for p, c in counts.items()}
    result["stages"]["exact_counts_ok"] = all(
        a == n and b == n for c in counts.values() for n, (a, b) in c.items()
    )
    save("exact counts")

    # 3. eager tok/s, interleaved
    eager_tps: dict[str, list[float]] = {p: [] for p in arms}
    eager_tokens: dict[str, list[int]] = {}
    t_stage = time.perf_counter()
    for r in range(args.repeats):
        if r and time.perf_counter() - t_stage > args.budget_s * 0.35:
            break
        for p, arm in arms.items():
            eager_tps[p].append(round(_timed(torch, arm, args.tokens), 2))
            eager_tokens[p] = arm.last_token_ids()
        print("eager tok/s", eager_tps, flush=True)
    result["stages"]["eager_tok_s"] = eager_tps
    save("eager timing")

    # 4. static backend: FP16 and NF4 captured and timed first, INT8 (expected refusal) last
    static_wl = Workload(args.model, backend="static", device=args.device, cache_dir=args.cache_dir)
    static_arms, static = {}, {}
    static_tps: dict[str, list[float]] = {}

    def try_static(p: str) -> None:
        t = time.perf_counter()
        try:
            arm = static_wl.load(p)
        except WorkloadError as exc:
            entry = {"status": "unavailable", "kind": exc.kind, "error": str(exc), "hint": exc.hint}
            cause = exc.__cause__
            while cause is not None and cause.__cause__ is not None:
                cause = cause.__cause__
            if cause is not None:
                entry["root_cause"] = f"{type(cause).__name__}: {str(cause).strip()[:600]}"
            static[p] = entry
            print(p, "static:", entry, flush=True)
            save(f"static {p} refused")
            return
        entry: dict = {"load_and_check_s": round(time.perf_counter() - t, 2)}
        entry["exact_counts_ok"] = all(
            arm.generate(n) == n and len(arm.last_token_ids()) == n for n in (1, 17)
        )
        t = time.perf_counter()
        arm.prepare(args.tokens)
        entry["capture_s"] = round(time.perf_counter() - t, 3)
        arm.generate(args.tokens)
        captured = arm.last_token_ids()
        entry["status"] = "ok"
        entry["tokens_generated"] = len(captured)
        if p in eager_tokens:
            k = _first_divergence(captured, eager_tokens[p])
            entry["equals_eager"] = k is None
            entry["first_divergence_vs_eager"] = k
            if k is not None:
                entry["divergence_gap"] = _top2_gap(torch, arm, eager_tokens[p][:k])
        if args.device.startswith("cuda"):
            from measure.gpu.static import StaticDecoder

            plain = StaticDecoder(arm._model, arm._prompt, arm._eos_ids, capture=False)
            plain.generate(args.tokens)
            k = _first_divergence(captured, plain.last_token_ids())
            entry["equals_uncaptured_static"] = k is None
            entry["first_divergence_vs_uncaptured"] = k
            plain.release()
        # transformers' own generate over a StaticCache: same cache and masks, launched eagerly
        with torch.inference_mode():
            ref = arm._model.generate(
                input_ids=arm._prompt,
                attention_mask=torch.ones_like(arm._prompt),
                max_new_tokens=args.tokens,
                min_new_tokens=args.tokens,
                cache_implementation="static",
            )
        k = _first_divergence(captured, ref[0, arm._prompt.shape[1] :].tolist())
        entry["equals_transformers_static_generate"] = k is None
        entry["first_divergence_vs_transformers_static"] = k
        static_arms[p] = arm
        static[p] = entry
        print(p, "static:", entry, flush=True)
        save(f"static {p}")

    for p in ("FP16", "NF4"):
        try_static(p)
    result["stages"]["static"] = static
    static_tps = {p: [] for p in static_arms}
    for r in range(args.repeats):
        if r and time.perf_counter() - t0 > args.budget_s * 0.8:
            break
        for p, arm in static_arms.items():
            static_tps[p].append(round(_timed(torch, arm, args.tokens), 2))
        print("static tok/s", static_tps, flush=True)
    result["stages"]["static_tok_s"] = static_tps
    save("static timing")
    try_static("INT8")
    if "INT8" in static_arms:
        static_tps["INT8"] = [round(_timed(torch, static_arms["INT8"], args.tokens), 2)]
    result["memory_final"] = _mem(torch)

    # 5. health check after the INT8 attempt: every other arm still decodes
    health = {}
    every = {
        **{f"eager-{k}": v for k, v in arms.items()},
        **{f"static-{k}": v for k, v in static_arms.items()},
    }
    for name, arm in every.items():
        try:
            health[name] = arm.generate(8) == 8
        except WorkloadError as exc:
            health[name] = f"{exc.kind}: {exc}"
    result["stages"]["health_after_static_attempts"] = health
    save("health check")

    # 6. INT8 without the outlier split: the capturable candidate
    result["stages"]["int8_threshold0"] = _int8_threshold0(torch, args)
    save("int8 threshold 0")

    print("\nSUMMARY")
    print(f"{'arm':6} {'weight MB':>10} {'eager tok/s':>24} {'static tok/s':>26}  static")
    for p in PRECISIONS:
        wb = loads.get(p, {}).get("weight_bytes")
        st = static.get(p, {})
        note = "ok" if st.get("status") == "ok" else f"{st.get('kind')}: {st.get('error', '')[:90]}"
        print(
            f"{p:6} {wb / 1e6 if wb else float('nan'):10.1f} {str(eager_tps.get(p)):>24} "
            f"{str(static_tps.get(p)):>26}  {note}"
        )
    print(
        json.dumps(
            {p: {k: v for k, v in e.items() if k.startswith(("equals", "first"))} for p, e in static.items()}
        )
    )
    return 0


def _int8_threshold0(torch, args) -> dict:
    entry: dict = {}
    try:
        eager = Workload(args.model, backend="eager", device=args.device, cache_dir=args.cache_dir,
                         int8_threshold=0.0).load("INT8")
        entry["thresholds_loaded"] = eager.int8_thresholds()
        reference = eager.eager_token_ids(args.tokens)
        entry["eager_tok_s"] = round(_timed(torch, eager, args.tokens), 2)
        static_wl = Workload(args.model, backend="static", device=args.device, cache_dir=args.cache_dir,
                             int8_threshold=0.0)
        arm = static_wl.load("INT8")
    except WorkloadError as exc:
        entry.update(status="unavailable", kind=exc.kind, error=str(exc))
        print("INT8 threshold 0:", entry, flush=True)
        return entry
    from measure.gpu.static import StaticDecoder

    try:
        entry["host_needs"] = arm._decoder.host_needs(args.tokens)
        t = time.perf_counter()
        arm.prepare(args.tokens)
        entry["capture_s"] = round(time.perf_counter() - t, 3)
        arm.generate(args.tokens)
    except WorkloadError as exc:
        entry.update(status="unavailable", kind=exc.kind, error=str(exc))
        return entry
    captured = arm.last_token_ids()
    entry["status"] = "ok"
    entry["first_divergence_vs_eager"] = _first_divergence(captured, reference)
    plain = StaticDecoder(arm._model, arm._prompt, arm._eos_ids, capture=False)
    plain.generate(args.tokens)
    entry["first_divergence_vs_uncaptured"] = _first_divergence(captured, plain.last_token_ids())
    plain.release()
    entry["static_tok_s"] = [round(_timed(torch, arm, args.tokens), 2) for _ in range(3)]
    print("INT8 threshold 0:", entry, flush=True)
    return entry


if __name__ == "__main__":
    raise SystemExit(main())
