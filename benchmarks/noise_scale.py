"""On what time scale a host's decode speed moves: would alternating the arms faster cancel more of it?

A block pairs FP16 with a quantized arm over whole generations (several seconds each), so host speed that
drifts slower than a block cancels from the paired ΔE% and faster jitter does not. Where the jitter sits
on the time axis decides whether finer interleaving could help. Each run's windows of one arm give that
directly, with no model of the host: for every pair of windows of the same arm, half the squared
difference of log(time per token) is binned by their separation in seconds (the structure function,
or variogram, of the host's speed). Its square root at separation Δt is the relative difference between
two windows Δt apart, / √2 (the sd one window would have against the other if both were independent).

- Flat across separations: the speed is white noise at the window's scale; interleaving at any finer
  step cancels nothing more, and only the count of windows narrows the interval.
- Rising with separation: part of the noise is slow; alternating the arms at a step Δt removes the part
  that builds up beyond Δt. The row's `slow_share` says how much of the variance at the longest
  separation is missing at the shortest, i.e. the most that the finest interleaving seen could remove.

The 8-token-window runs (`recon8`) see sub-second scales, whole-generation runs seconds and up.

    python -m benchmarks.noise_scale measurements/hopper-campaign
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from measure.core.record import RAW_NAME, read

# separation bins in seconds: below one 256-token generation, about one, a block, several blocks, a run
EDGES_S = (0.0, 0.6, 1.5, 4.0, 10.0, 30.0, 100.0)
MIN_PAIRS = 20  # a bin with fewer pairs prints no figure


def windows(blocks: list[dict], arm: str) -> tuple[np.ndarray, np.ndarray]:
    """Midpoint (s) and log(seconds per token) of each of one arm's decode windows, in time order."""
    mids, logs = [], []
    for block in blocks:
        for w in block["windows"]:
            d = w["end_s"] - w["start_s"]
            if w["arm"] == arm and d > 0 and w.get("tokens", 0) > 0:
                mids.append((w["start_s"] + w["end_s"]) / 2)
                logs.append(math.log(d / w["tokens"]))
    order = np.argsort(mids)
    return np.asarray(mids)[order], np.asarray(logs)[order]


def structure(mids: np.ndarray, logs: np.ndarray, edges: tuple[float, ...] = EDGES_S) -> list[dict]:
    """Per separation bin: pairs and the root of half the mean squared log difference, in %."""
    i, j = np.triu_indices(len(mids), 1)
    sep = np.abs(mids[j] - mids[i])
    half_sq = (logs[j] - logs[i]) ** 2 / 2
    out = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (sep >= lo) & (sep < hi)
        n = int(inside.sum())
        out.append({"from_s": lo, "to_s": hi, "pairs": n,
                    "sd_pct": round(100 * math.sqrt(half_sq[inside].mean()), 1) if n >= MIN_PAIRS else None})
    return out


def slow_share(bins: list[dict]) -> float | None:
    """1 − γ(shortest)/γ(longest) over the bins that have a figure: the share of the long-range variance
    that the shortest separation seen does not carry (0 = white, near 1 = all slow drift)."""
    seen = [b["sd_pct"] for b in bins if b["sd_pct"] is not None]
    if len(seen) < 2 or seen[-1] == 0:
        return None
    return round(max(0.0, 1 - (seen[0] / seen[-1]) ** 2), 2)


def collect(folders: list[Path]) -> list[dict]:
    """One row per run and arm with at least two bins of figures."""
    rows = []
    for folder in folders:
        for path in sorted(folder.glob(f"*/{RAW_NAME}")):
            record = read(path)
            outcome = record.get("outcome", {})
            blocks = outcome.get("blocks") or []
            window_tokens = (outcome.get("config") or {}).get("block_tokens")
            backend = (record.get("context", {}).get("workload") or {}).get("backend", "eager")
            for arm in sorted({a for b in blocks for a in b["order"]}):
                bins = structure(*windows(blocks, arm))
                share = slow_share(bins)
                if share is None:
                    continue
                rows.append({"run": f"{folder.name}/{path.parent.name}", "arm": arm, "backend": backend,
                             "window_tokens": window_tokens, "bins": bins, "slow_share": share})
    return rows


def table(rows: list[dict]) -> str:
    heads = [f"{lo:g}–{hi:g} s" for lo, hi in zip(EDGES_S[:-1], EDGES_S[1:], strict=True)]
    lines = ["| run | arm | backend | window tokens | " + " | ".join(heads) + " | slow share |",
             "| --- | --- | --- | --- | " + " | ".join("---" for _ in heads) + " | --- |"]
    for r in rows:
        cells = ["" if b["sd_pct"] is None else f"{b['sd_pct']}" for b in r["bins"]]
        lines.append(f"| {r['run']} | {r['arm']} | {r['backend']} | {r['window_tokens']} | "
                     + " | ".join(cells) + f" | {r['slow_share']} |")
    return "\n".join(lines)


def footer(rows: list[dict]) -> str:
    return ("figures: % sd of log(time per token) between two windows of one arm that far apart (/√2); "
            "slow share: the part of the longest separation's variance the shortest does not carry")


def main(argv: list[str] | None = None) -> int:
    from benchmarks.folder_table import run

    return run(__doc__.split("\n\n")[0], argv, collect, table, footer)


if __name__ == "__main__":
    raise SystemExit(main())
