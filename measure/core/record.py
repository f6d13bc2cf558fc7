"""The raw record of a run (every power sample and window) and its replay into attributed energies.

A measured report is a function of this record: `measure run` writes it, then computes every energy
from it through `replay`, so `measure replay energy-raw.json.gz` rebuilds the same reports anywhere,
with no GPU: the recorded trace goes straight into `attribution.attribute`.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import asdict
from pathlib import Path

from measure.codes import MeasureError
from measure.core.attribution import attribute
from measure.core.design import RECORD_DEFAULTS, ProtocolConfig
from measure.core.outcome import Outcome, Window
from measure.core.seams import Trace

FORMAT = "quantjoule-raw/1"
RAW_NAME = "energy-raw.json.gz"
# time is stored as microseconds after the first sample, power in mW and energy in mJ: NVML's own
# units, so the record loses nothing the card reported
_US, _MW, _MJ = 1e6, 1e3, 1e3


def _encode_trace(t: list[float], p: list[float], e: list[float]) -> dict:
    t0 = t[0] if t else 0.0
    return {
        "t0_s": t0,
        "t_us": [round((x - t0) * _US) for x in t],
        "power_mw": [None if x != x else round(x * _MW) for x in p],
        "energy_mj": [None if x != x else round(x * _MJ) for x in e],
    }


def _decode_trace(d: dict) -> Trace:
    t0 = d["t0_s"]
    t = [t0 + x / _US for x in d["t_us"]]
    p = [math.nan if x is None else x / _MW for x in d["power_mw"]]
    e = [math.nan if x is None else x / _MJ for x in d["energy_mj"]]
    return t, p, e


def _window(d: dict) -> Window:
    return Window(d["arm"], d["start_s"], d["end_s"], None, d["tokens"], generations=d.get("generations", 1))


def _plain_window(w: Window) -> dict:
    return {
        "arm": w.arm,
        "start_s": w.start_s,
        "end_s": w.end_s,
        "tokens": w.tokens,
        "generations": w.generations,
    }


def encode(out: Outcome, trace: Trace, ctx: dict, source: dict, sampler: dict, options: dict) -> dict:
    """The record: what the protocol did (windows as times only), every sample, and the run context."""
    o = asdict(out)
    o["config"] = asdict(out.config)
    o["blocks"] = [
        {k: v for k, v in b.items() if k not in ("windows", "trace_j")}
        | {"windows": [_plain_window(w) for w in b["windows"]]}
        for b in out.blocks
    ]
    o["prefill_windows"] = [_plain_window(w) for w in out.prefill_windows]
    o["direct_windows"] = [_plain_window(w) for w in out.direct_windows]
    for derived in ("prefill", "direct", "faults"):  # recomputed from the trace by replay
        o.pop(derived)
    return {
        "format": FORMAT,
        "options": options,
        "context": {k: v for k, v in ctx.items() if k != "notes"},
        "source": source,
        "sampler": sampler,
        "outcome": o,
        "trace": _encode_trace(*trace),
    }


def decode_outcome(o: dict) -> Outcome:
    """The protocol's outcome as recorded: windows timed, no energy attributed yet."""
    cfg = ProtocolConfig(**{**RECORD_DEFAULTS, **o["config"]})
    blocks = [
        {
            **{k: v for k, v in b.items() if k != "windows"},
            "windows": [_window(w) for w in b["windows"]],
        }
        for b in o["blocks"]
    ]
    fields = {
        k: v for k, v in o.items() if k not in ("config", "blocks", "prefill_windows", "direct_windows")
    }
    return Outcome(
        config=cfg,
        blocks=blocks,
        prefill_windows=[_window(w) for w in o["prefill_windows"]],
        direct_windows=[_window(w) for w in o["direct_windows"]],
        **fields,
    )


def replay(record: dict) -> Outcome:
    """Window energies, prefill and direct-check totals and faults, from the recorded samples."""
    has_counter = bool(record["source"]["has_energy_counter"])
    return attribute(decode_outcome(record["outcome"]), recorded_trace(record), has_counter)


def recorded_trace(record: dict) -> Trace:
    return _decode_trace(record["trace"])


def write(path: Path, record: dict) -> None:
    """Deterministic gzip (no name, no time stamp in the header): same record, same bytes.

    Written after the GPU work is done, so it must never fail on a value: a non-finite float (an
    overflowing perplexity, say) is kept as JSON's NaN/Infinity extension, which `read` takes back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(record, separators=(",", ":"), default=str).encode()
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fh:
        fh.write(data)


def read(path: Path) -> dict:
    try:
        with gzip.open(path, "rb") as fh:
            record = json.loads(fh.read())
    except FileNotFoundError as exc:
        raise MeasureError("QJ416", f"no raw record at {path}") from exc
    except (OSError, EOFError, ValueError) as exc:
        raise MeasureError(
            "QJ416", f"{path} is not a readable raw record: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise MeasureError("QJ416", f"{path} is not a {FORMAT} record")
    return record
