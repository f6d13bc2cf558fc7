"""Does pairing FP16 with a quantized arm chunk by chunk, inside one generation, cancel slow host noise?

Batch-1 eager decode speed drifts over seconds (``benchmarks.noise_scale``), so a block of whole
256-token generations (F Q Q F) carries the drift between its generations into the paired ratio. Here
each arm's greedy generation stays whole (same positions, same tokens) but is produced in chunks of K
tokens that continue its own KV cache, the four generations of a block (two per arm) taking turns chunk
by chunk in mirrored order. A generation's time is the sum of its chunk windows. Blocks of the two
schemes alternate (whole, chunked, whole, ...), timed with perf_counter (synchronised on CUDA); energy
is not read: at batch 1 eager the card sits near its power floor, so energy per token follows time.

    python -m benchmarks.chunk_pairing --synthetic qwen2-0.5b --precision nf4 --tokens 256 \\
        --chunk-tokens 32 --blocks 6 --seed 1 --out chunk-pairing.json

The figures per scheme: paired log ratio per block log((Q1+Q2)/(F1+F2)), dE% = 100·(exp(mean) − 1), its
sd and 95 % t half-width (100 × log units, ≈ pp), ms per token of each arm, FP16 jitter per generation
(sd of log(F2/F1)/√2) and the chunked/whole time-per-token ratio of each arm (what the T/K calls of
``generate`` cost; a bias in dE% shows if it differs between arms).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics as st
import time
from pathlib import Path

from measure.core.stats import summarise

SCHEMES = ("whole", "chunked")


def schedule(scheme: str, block: int, fp16: str, quant: str, tokens: int, chunk_tokens: int) -> list[tuple]:
    """The steps of one block in run order, as (arm, generation 0/1, chunk, tokens): whole blocks mirror
    F Q Q F / Q F F Q by block; chunked blocks mirror per chunk, alternating which arm leads."""
    def mirrored(first: bool) -> list[tuple[str, int]]:
        a, b = (fp16, quant) if first else (quant, fp16)
        return [(a, 0), (b, 0), (b, 1), (a, 1)]

    if scheme == "whole":
        return [(arm, gen, 0, tokens) for arm, gen in mirrored(block % 2 == 0)]
    return [(arm, gen, c, chunk_tokens) for c in range(tokens // chunk_tokens)
            for arm, gen in mirrored((block + c) % 2 == 0)]


def _r(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(x, nd)


def analyse(blocks: list[dict], fp16: str, quant: str) -> dict:
    """Figures per scheme from the windows of BLOCKS (each {"scheme", "windows": [{"arm", "gen", "tokens",
    "dur_s"}]}), plus the chunked/whole time-per-token ratio per arm. Pure: no clock, no torch."""
    out: dict = {}
    for scheme in SCHEMES:
        ratios, jitter, secs, toks = [], [], {fp16: 0.0, quant: 0.0}, {fp16: 0, quant: 0}
        for block in (b for b in blocks if b["scheme"] == scheme):
            gen = {(arm, g): 0.0 for arm in (fp16, quant) for g in (0, 1)}
            for w in block["windows"]:
                gen[(w["arm"], w["gen"])] += w["dur_s"]
                secs[w["arm"]] += w["dur_s"]
                toks[w["arm"]] += w["tokens"]
            ratios.append(math.log((gen[(quant, 0)] + gen[(quant, 1)]) / (gen[(fp16, 0)] + gen[(fp16, 1)])))
            jitter.append(math.log(gen[(fp16, 1)] / gen[(fp16, 0)]))
        summary = summarise(ratios)
        mean, sd, half = summary["mean"], summary["sd"], summary["ci95_half_width_pp"]
        jsd = st.stdev(jitter) / math.sqrt(2) if len(jitter) >= 2 else None
        out[scheme] = {
            "blocks": len(ratios), "log_ratios": [round(r, 6) for r in ratios],
            "dE_pct": None if mean is None else round(100 * (math.exp(mean) - 1), 2),
            "sd_pct": _r(None if sd is None else 100 * sd),
            "ci95_half_pp": _r(None if half is None else 100 * half),
            "ms_per_token": {a: _r(1e3 * secs[a] / toks[a], 4) if toks[a] else None for a in (fp16, quant)},
            "fp16_jitter_pct": _r(None if jsd is None else 100 * jsd),
        }
    w, c = out["whole"]["ms_per_token"], out["chunked"]["ms_per_token"]
    out["chunked_over_whole"] = {a: round(c[a] / w[a], 4) if w[a] and c[a] else None for a in (fp16, quant)}
    return out


def table(res: dict, fp16: str, quant: str) -> str:
    lines = [f"| scheme | blocks | dE% | sd % | ±95 % pp | {fp16} ms/tok | {quant} ms/tok | FP16 jitter % |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in SCHEMES:
        r = res[s]
        lines.append(f"| {s} | {r['blocks']} | {r['dE_pct']} | {r['sd_pct']} | {r['ci95_half_pp']} | "
                     f"{r['ms_per_token'][fp16]} | {r['ms_per_token'][quant]} | {r['fp16_jitter_pct']} |")
    over = res["chunked_over_whole"]
    return "\n".join(lines) + f"\n\nchunked/whole time per token: {fp16} {over[fp16]}, {quant} {over[quant]}"


def probe(arms: dict, fp16: str, quant: str, tokens: int, chunk_tokens: int, blocks: int,
          clock=time.perf_counter, on_block=None) -> dict:
    """Time BLOCKS blocks of each scheme, alternating, on loaded Arms: every window, and tokens_match per
    arm (every generation of the first whole and chunked blocks gave the first whole generation's tokens).
    A chunk's cache holds all but its last token, so the next chunk's generate forwards that one alone.
    `on_block(partial)` is called after every block, so a run stopped part-way keeps what it measured."""
    from measure.gpu.arm import cache_keyword

    torch = arms[fp16]._torch
    cuda = arms[fp16]._prompt.is_cuda
    key = cache_keyword()

    def call(arm, seq, cache, n: int, chunked: bool):
        """One timed generate: whole as Arm._eager calls it; a chunk also returns its cache to continue."""
        kw = {key: cache} if cache is not None else {}
        if chunked:
            kw["return_dict_in_generate"] = True
        mask = arm._attention if cache is None else torch.ones_like(seq)
        t0 = clock()
        out = arm._model.generate(input_ids=seq, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                                  **kw)
        if cuda:
            torch.cuda.synchronize()
        return (out.sequences, getattr(out, key)) if chunked else (out, None), t0, clock() - t0

    epoch, runs, first = clock(), [], {}
    match = {fp16: True, quant: True}
    with torch.inference_mode():
        for arm in (fp16, quant):  # warm-up: one whole generation each
            call(arms[arm], arms[arm]._prompt, None, tokens, False)
        for b in range(blocks):
            for scheme in SCHEMES:
                state, windows = {}, []
                for arm, gen, c, n in schedule(scheme, b, fp16, quant, tokens, chunk_tokens):
                    seq, cache = state.get((arm, gen), (arms[arm]._prompt, None))
                    state[(arm, gen)], t0, dur = call(arms[arm], seq, cache, n, scheme == "chunked")
                    windows.append({"arm": arm, "gen": gen, "chunk": c, "tokens": n,
                                    "start_s": round(t0 - epoch, 6), "dur_s": round(dur, 6)})
                for (arm, _), (seq, _) in state.items():
                    ids = seq[0, arms[arm]._prompt.shape[1]:].tolist()
                    if len(ids) != tokens:
                        raise RuntimeError(f"{arm} {scheme}: {len(ids)} tokens, asked for {tokens}")
                    if b == 0:
                        first.setdefault(arm, ids)
                        match[arm] = match[arm] and ids == first[arm]
                runs.append({"scheme": scheme, "block": b, "windows": windows})
                if on_block is not None:
                    on_block({"tokens_match": match, "blocks": runs})
    return {"tokens_match": match, "blocks": runs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", default="qwen2-0.5b", help="synthetic architecture name (no download)")
    ap.add_argument("--precision", default="nf4", type=str.upper, choices=["NF4", "INT8"])
    ap.add_argument("--tokens", type=int, default=256, help="new tokens per generation")
    ap.add_argument("--chunk-tokens", type=int, default=32, help="tokens per chunk (divides --tokens)")
    ap.add_argument("--blocks", type=int, default=6, help="blocks of each scheme")
    ap.add_argument("--seed", type=int, default=1, help="weights and prompt seed")
    ap.add_argument("--prompt-tokens", type=int, default=16)
    ap.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    ap.add_argument("--cache-dir", default=None, help="synthetic weights cache (default $QUANTJOULE_CACHE)")
    ap.add_argument("--out", type=Path, default=None, help="JSON with every window's duration")
    args = ap.parse_args(argv)
    if min(args.tokens, args.chunk_tokens, args.blocks) < 1 or args.tokens % args.chunk_tokens:
        ap.error("--tokens, --chunk-tokens and --blocks must be positive, --chunk-tokens dividing --tokens")

    import torch
    import transformers

    from measure.gpu.workload import Workload

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    wl = Workload(f"synthetic:{args.synthetic}", "eager", device, seed=args.seed,
                  prompt_tokens=args.prompt_tokens, cache_dir=args.cache_dir)
    arms = {p: wl.load(p) for p in ("FP16", args.precision)}
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    config.update(device=arms["FP16"].device, dtypes={p: a.dtype for p, a in arms.items()},
                  transformers=transformers.__version__, torch=torch.__version__,
                  gpu=torch.cuda.get_device_name() if device.startswith("cuda") else None)

    def write(raw: dict, done: bool) -> None:
        if args.out is not None:
            args.out.write_text(json.dumps({"config": config, "complete": done,
                                            "tokens_match": raw["tokens_match"],
                                            "analysis": analyse(raw["blocks"], "FP16", args.precision),
                                            "blocks": raw["blocks"]}, indent=1) + "\n")

    raw = probe(arms, "FP16", args.precision, args.tokens, args.chunk_tokens, args.blocks,
                on_block=lambda partial: write(partial, False))
    write(raw, True)
    print(table(analyse(raw["blocks"], "FP16", args.precision), "FP16", args.precision))
    print(f"tokens_match: {json.dumps(raw['tokens_match'])}")
    if args.out is not None:
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
