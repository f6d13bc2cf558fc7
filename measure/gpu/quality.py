"""The quality probe: teacher-forced perplexity of one arm, and each report's quality block."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

from measure.core.seams import Arm

QUALITY_TEXT = Path(__file__).parents[1] / "data" / "declaration-of-independence.txt"
PERPLEXITY_WINDOW_TOKENS = 128
PERPLEXITY_MAX_WINDOWS = 16


def perplexity(torch, model, tokenizer, text: str | None = None) -> tuple[float | None, str]:
    """Teacher-forced perplexity on the vendored text (or TEXT), fixed windows; (None, reason) if not."""
    if text is None:
        raw = QUALITY_TEXT.read_bytes()
        text = raw.decode("utf-8")
        label = f"{QUALITY_TEXT.name} sha256:{hashlib.sha256(raw).hexdigest()[:16]}"
    else:
        label = "supplied text"
    ids = tokenizer(text, return_tensors="pt").input_ids[0]
    w = PERPLEXITY_WINDOW_TOKENS
    windows = [ids[i:i + w] for i in range(0, len(ids) - 1, w)][:PERPLEXITY_MAX_WINDOWS]
    windows = [win for win in windows if len(win) >= 2]
    if not windows:
        return None, "text too short for a perplexity window"
    nll, count = 0.0, 0
    with torch.inference_mode():
        for win in windows:
            batch = win.unsqueeze(0).to(model.device)
            logits = model(input_ids=batch).logits.float()
            nll += torch.nn.functional.cross_entropy(logits[0, :-1], batch[0, 1:], reduction="sum").item()
            count += batch.shape[1] - 1
    ppl = math.exp(nll / count)
    return ppl, f"teacher-forced, {len(windows)} window(s) of <= {w} tokens, {count} predictions, {label}"


def quality_blocks(arms: dict[str, Arm]) -> dict[str, dict]:
    """Each arm's `quality` block: its perplexity against FP16's, or unavailable with the reason. Run
    after the sampler has stopped, so it costs the measurement nothing."""
    vals, notes = {}, {}
    for name, arm in arms.items():
        try:
            vals[name], notes[name] = arm.perplexity()
        except Exception as exc:
            vals[name], notes[name] = None, f"perplexity failed: {type(exc).__name__}"
    out = {}
    for name in arms:
        v, f = vals.get(name), vals.get("FP16")
        if v is None:
            out[name] = {
                "metric": "perplexity",
                "basis": "unavailable",
                "note": notes.get(name) or "perplexity unavailable",
            }
        else:
            out[name] = {
                "metric": "perplexity",
                "basis": "measured",
                "value": v,
                "fp16_value": f,
                "delta_vs_fp16_pct": (v - f) / f * 100 if f else None,
                "note": "teacher-forced perplexity on the vendored text, after the sampler stopped",
            }
    return out
