"""The schedule design: the arms, the protocol's settings, mirrored block orders and the paired rounds.

Why the blocks look as they do (measure/README.md has the measured figures):
- a block runs FP16 and one quantized arm twice each, in a seeded order followed by its mirror
  image (F Q Q F or Q F F Q): each arm's windows sit symmetrically in time, so a linear drift of
  host throughput inside the block cancels in the paired ratio. Blocks hold only the two arms being
  compared, so a slow arm (LLM.int8() decodes several times slower) never sits between the FP16 and
  NF4 windows it would otherwise separate; the quantized arms take turns in seeded shuffled rounds.
  `pairing="all"` runs every arm in each block instead (A B C C B A);
- `block_rounds` > 1 repeats the mirrored round inside one block (turning it each time), so the
  cooldown wait and the preroll are paid once for several rounds;
- a window is `window_reps` back-to-back generations: NVML's counter and instant power both refresh
  every ~100 ms, so a window has to span many refreshes for its edges not to matter;
- the per-token energy of a `tokens`-long generation is reconstructed from a prefill energy P
  (generate(1), measured in bursts before and after the blocks) and the block's per-step decode
  energy; see energy.reconstruct_per_token_j.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

BASELINE = "FP16"
QUANTIZED = ("NF4", "INT8")  # the arms a report compares with FP16, in the CLI's default order
PRECISIONS = (BASELINE, *QUANTIZED)
BACKENDS = ("eager", "static")
PAIRINGS = ("paired", "all")
ALLOCATIONS = ("target", "even")


@dataclass
class ProtocolConfig:
    """The protocol's settings. `measure run`'s options take their defaults from here, except the two
    that depend on other options: --block-tokens (default --tokens) and --window-reps (2 static)."""

    tokens: int = 256
    block_tokens: int = 32
    trials: int | None = None  # number of blocks; None -> until duration_s
    duration_s: float | None = 300.0  # budget for the block phase
    warmup_runs: int = 2
    seed: int = 0
    prefill_reps: int = 8
    pairing: str = "paired"  # "paired": FP16 + one quantized arm per block; "all": every arm per block
    window_reps: int = 1  # generations per measured window
    block_rounds: int = 1  # mirrored rounds per block: F Q Q F, then Q F F Q, ... (one cooldown per block)
    allocation: str = "target"  # paired blocks per quantized arm: "target" or "even" turns (allocation.py)
    direct_check_runs: int = 0
    preroll_tokens: int = 8
    cooldown_tolerance_w: float = 5.0
    cooldown_timeout_s: float = 30.0
    cooldown_window_s: float = 0.1
    idle_window_s: float = 5.0
    # prompts decoded together in every generation (the workload's batch); a window's `tokens` already
    # count all of them, so per-token energies divide by it only where a per-generation energy is used
    batch_size: int = 1
    # > 0: each arm's whole block_tokens generations are made in chunks of this many tokens that continue
    # their own KV cache, the block's generations taking turns chunk by chunk (chunk_schedule)
    chunk_tokens: int = 0


# What a raw record written before an option existed ran with: its absence there means this, whatever
# today's default is (allocation: even turns; one round per block; batch 1).
RECORD_DEFAULTS = {"allocation": "even", "block_rounds": 1, "batch_size": 1, "chunk_tokens": 0}


def block_order(arms: list[str], rng: random.Random) -> list[str]:
    """A seeded shuffled order followed by its mirror: A B C -> A B C C B A."""
    first = list(arms)
    rng.shuffle(first)
    return first + first[::-1]


def block_rounds(order: list[str], rounds: int) -> list[str]:
    """`rounds` mirrored rounds in one block, turning the first half round by round:
    F Q Q F -> F Q Q F Q F F Q F Q Q F ... Every round is balanced on its own, so a jump in host speed
    unbalances at most the round it falls in, while the cooldown and preroll are paid once per block."""
    half = order[: len(order) // 2]
    out: list[str] = []
    for k in range(rounds):
        first = half if k % 2 == 0 else half[::-1]
        out += first + first[::-1]
    return out


def chunk_schedule(order: list[str], generation_tokens: int, chunk_tokens: int) -> list[tuple[str, int, int]]:
    """The windows of a chunked block: (arm, stream, chunk) for every chunk of every generation in ORDER.

    Each place in the mirrored ORDER (F Q Q F) is one whole generation, its stream being the arm's k-th
    place; its GENERATION_TOKENS are made CHUNK_TOKENS at a time, each chunk continuing its own cache. The
    generations take turns chunk by chunk, the round turned each time as `block_rounds` turns it, so host
    speed that drifts over seconds inside one generation lands on both arms alike instead of on whichever
    generation it fell in (measure/README.md, "Chunked pairing")."""
    if chunk_tokens < 1 or generation_tokens % chunk_tokens:
        raise ValueError(f"chunk_tokens must divide {generation_tokens}, got {chunk_tokens}")
    turned, n = block_rounds(order, generation_tokens // chunk_tokens), len(order)
    # within each round an arm's k-th place is its k-th generation, whichever way the round is turned
    return [(arm, turned[i - i % n : i].count(arm), i // n) for i, arm in enumerate(turned)]


class Rounds:
    """Which arms the next block compares: paired -> FP16 and the next quantized arm of a seeded
    shuffled round (every quantized arm once per round); all -> every live arm."""

    def __init__(self, pairing: str, rng: random.Random):
        if pairing not in PAIRINGS:
            raise ValueError(f"pairing must be 'paired' or 'all', not {pairing!r}")
        self.pairing = pairing
        self.rng = rng
        self._queue: list[str] = []

    def next(self, live: list[str]) -> list[str]:
        quant = [a for a in live if a != BASELINE]
        if self.pairing == "all" or len(quant) <= 1:
            return list(live)
        self._queue = [a for a in self._queue if a in quant]
        if not self._queue:
            self._queue = list(quant)
            self.rng.shuffle(self._queue)
        return [BASELINE, self._queue.pop(0)]
