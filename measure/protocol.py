"""The measurement protocol: resident arms, loaded-idle cooldown, mirrored interleaved blocks.

Side effects are injected (power source, sampler, clock, sleep, arms), so the whole loop runs in
tests against fakes. Design, driven by what an H200 does with batch-1 decode:
- every arm stays resident; loaded-idle power is measured after loading, and each block starts only
  once power is back within `tolerance_w` of it (or `timeout_s` passes; the wait is recorded);
- a block runs FP16 and one quantized arm twice each, in a seeded order followed by its mirror
  image (F Q Q F or Q F F Q): each arm's windows sit symmetrically in time, so a linear drift of
  host throughput inside the block cancels in the paired ratio. Blocks are short (block_tokens) and
  hold only the two arms being compared, so a slow arm (LLM.int8() decodes 3x slower) never sits
  between the FP16 and NF4 windows it would otherwise separate; the quantized arms take turns in
  seeded shuffled rounds. `pairing="all"` runs every arm in each block instead (A B C C B A);
- `block_rounds` > 1 repeats the mirrored round inside one block (turning it each time), so the
  cooldown wait and the preroll are paid once for several rounds;
- a window is `window_reps` back-to-back generations: NVML's counter and instant power both refresh
  every ~100 ms, so a window has to span many refreshes for its edges not to matter (the static
  backend decodes 32 tokens in ~90 ms);
- the per-token energy of a `tokens`-long generation is reconstructed from a prefill energy P
  (generate(1), measured in bursts before and after the blocks) and the block's per-step decode
  energy; see energy.reconstruct_per_token_j.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from measure.allocation import block_delta_pct, choose, covered
from measure.energy import (
    COUNTER_STALL_S,
    counter_stall_s,
    counter_steps,
    counter_window_j,
    gap_limit_s,
    integrate_j,
    power_steps,
    trace_gap_s,
)


@dataclass
class ProtocolConfig:
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
    allocation: str = "even"  # paired blocks per quantized arm: "even" turns, or "target" (see allocation.py)
    direct_check_runs: int = 0
    preroll_tokens: int = 8
    cooldown_tolerance_w: float = 5.0
    cooldown_timeout_s: float = 30.0
    cooldown_window_s: float = 0.1
    idle_window_s: float = 5.0
    # prompts decoded together in every generation (the workload's batch); a window's `tokens` already
    # count all of them, so per-token energies divide by it only where a per-generation energy is used
    batch_size: int = 1


@dataclass
class Window:
    arm: str
    start_s: float
    end_s: float
    counter_j: float | None
    tokens: int
    generations: int = 1
    trace_j: float | None = None
    notes: list[str] = field(default_factory=list)  # why an energy source was set aside
    fault: str | None = None  # no sound energy at all: the trial is failed with this reason


class PowerLost(Exception):
    """The power source failed while the protocol needed it: stop, keep what was measured."""


@dataclass
class Outcome:
    """Everything the protocol observed; the report is built from it."""

    config: ProtocolConfig
    arms: list[str]
    blocks: list[dict] = field(default_factory=list)
    orders: list[list[str]] = field(default_factory=list)
    waits_s: list[float] = field(default_factory=list)
    timeouts: int = 0
    idle_power_bare_w: float | None = None
    idle_power_loaded_w: float | None = None
    prefill: dict = field(default_factory=dict)  # arm -> {"energy_j", "duration_s", "reps"}
    direct: dict = field(default_factory=dict)  # arm -> {"energy_j", "duration_s", "tokens"}
    failed: dict = field(default_factory=dict)  # arm -> reason
    prefill_windows: list = field(default_factory=list)
    direct_windows: list = field(default_factory=list)
    interrupted: bool = False
    power_error: str | None = None  # the power source failed mid-run (NVML error): partial
    faults: dict = field(default_factory=dict)  # trace gaps and counter stalls seen by finalise
    time_split_s: dict = field(default_factory=dict)


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


class Rounds:
    """Which arms the next block compares: paired -> FP16 and the next quantized arm of a seeded
    shuffled round (every quantized arm once per round); all -> every live arm."""

    def __init__(self, pairing: str, rng: random.Random):
        if pairing not in ("paired", "all"):
            raise ValueError(f"pairing must be 'paired' or 'all', not {pairing!r}")
        self.pairing = pairing
        self.rng = rng
        self._queue: list[str] = []

    def next(self, live: list[str]) -> list[str]:
        quant = [a for a in live if a != "FP16"]
        if self.pairing == "all" or len(quant) <= 1:
            return list(live)
        self._queue = [a for a in self._queue if a in quant]
        if not self._queue:
            self._queue = list(quant)
            self.rng.shuffle(self._queue)
        return ["FP16", self._queue.pop(0)]


def cooldown(
    read_power: Callable[[], float],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    target_w: float,
    tolerance_w: float,
    timeout_s: float,
    window_s: float = 0.1,
    period_s: float = 0.02,
) -> tuple[float, bool, float]:
    """Read power every `period_s` until the mean of the readings over the last `window_s` is
    <= target + tolerance.

    A rolling window rather than fixed rounds: NVML's instant power refreshes every 100 ms and after a
    block it is back under target within ~0.08 s (median on an H200; at most 0.15 s), so the wait ends
    one window after that, not at the next round boundary. Returns (waited_s, timed_out, last_mean_w);
    a timeout does not stop the run, it is recorded.
    """
    start = clock()
    readings: list[tuple[float, float]] = []
    while True:
        now = clock()
        readings.append((now, read_power()))
        readings = [(t, p) for t, p in readings if t >= now - window_s - 1e-9]
        mean_w = sum(p for _, p in readings) / len(readings)
        waited = clock() - start
        covered = now - start >= window_s - 1e-9  # a full window of readings, never a single one
        if covered and mean_w <= target_w + tolerance_w:
            return waited, False, mean_w
        if waited >= timeout_s:
            return waited, True, mean_w
        sleep(period_s)


class Protocol:
    """Runs the protocol over resident `arms` ({name: Arm}); FP16 must be among them."""

    def __init__(
        self,
        config: ProtocolConfig,
        source,
        sampler,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        progress: Callable[..., None] | None = None,
    ):
        self.cfg = config
        self.src = source
        self.sampler = sampler
        self.clock = clock
        self.sleep = sleep
        self.progress = progress or (lambda *a, **k: None)

    # -- measurement primitives -------------------------------------------------------------
    def _gen(self, name: str, arm, n: int, reps: int = 1) -> Window:
        # No NVML call in the measuring process while decoding: the counter is read by the sampler
        # process and interpolated onto the window afterwards (see finalise).
        t0 = self.clock()
        got = sum(int(arm.generate(n)) for _ in range(reps))
        t1 = self.clock()
        return Window(name, t0, t1, None, got, reps)

    def _idle_w(self, seconds: float) -> float:
        t0 = self.clock()
        self.sleep(seconds)
        t1 = self.clock()
        self.sampler.wait_past(t1)
        t, p, _ = self.sampler.trace()
        steps = power_steps(t, p)
        if trace_gap_s(t, t0, t1) == float("inf") or not steps[0]:  # holding a last sample would invent it
            raise PowerLost(self._sampler_stopped())
        return integrate_j(*steps, t0, t1) / (t1 - t0)

    def _sampler_stopped(self) -> str:
        failed = getattr(self.sampler, "failed", lambda: False)()
        return "the power sampler stopped" + (": the power source raised an error" if failed else "")

    def _read(self, fn):
        """A power-source reading in the measuring process; an NVML error stops the protocol."""
        try:
            return fn()
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            raise PowerLost(f"power source error: {type(exc).__name__}: {str(exc)[:160]}") from exc

    # -- phases -----------------------------------------------------------------------------
    def measure_bare_idle(self, seconds: float = 3.0) -> float:
        return self._idle_w(seconds)

    def run(self, arms: dict, out: Outcome) -> Outcome:
        """Warmup, loaded idle, prefill bursts, blocks, direct check. Fills and returns `out`."""
        cfg = self.cfg
        rng = random.Random(cfg.seed)
        live = [a for a in out.arms if a in arms and a not in out.failed]
        split = out.time_split_s
        try:
            t = self.clock()
            for name in live:
                if hasattr(arms[name], "prepare"):  # static backend: capture every length used, up front
                    for n in sorted({1, cfg.block_tokens, cfg.tokens, cfg.preroll_tokens} - {0}):
                        self._safe(out, name, lambda a=arms[name], n=n: a.prepare(n))
                for _ in range(cfg.warmup_runs):
                    self._safe(out, name, lambda a=arms[name]: a.generate(1))
                    self._safe(out, name, lambda a=arms[name]: a.generate(cfg.block_tokens))
                if cfg.block_tokens != cfg.tokens and cfg.direct_check_runs:
                    self._safe(out, name, lambda a=arms[name]: a.generate(cfg.tokens))
            split["warmup"] = self.clock() - t
            t = self.clock()
            out.idle_power_loaded_w = self._idle_w(cfg.idle_window_s)
            split["idle"] = self.clock() - t
            split.setdefault("cooldown", 0.0)
            split.setdefault("decode", 0.0)
            self._prefill(arms, out, rng)
            self._blocks(arms, out, rng)
            self._prefill(arms, out, rng)
            if cfg.block_tokens != cfg.tokens:
                for _ in range(cfg.direct_check_runs):
                    self._direct(arms, out, rng)
        except KeyboardInterrupt:
            out.interrupted = True
        except PowerLost as exc:
            out.power_error = str(exc)
        self.finalise(out)
        if out.power_error is None and getattr(self.sampler, "failed", lambda: False)():
            out.power_error = self._sampler_stopped()
        return out

    def _safe(self, out: Outcome, name: str, fn):
        if name in out.failed:
            return None
        try:
            return fn()
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # an arm's failure (OOM, NVML error) must not lose the other arms
            out.failed[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return None

    def _wait_cool(self, out: Outcome) -> float:
        t = self.clock()
        waited, timed_out, mean_w = cooldown(
            lambda: self._read(self.src.power_w),
            self.clock,
            self.sleep,
            out.idle_power_loaded_w,
            self.cfg.cooldown_tolerance_w,
            self.cfg.cooldown_timeout_s,
            self.cfg.cooldown_window_s,
        )
        out.waits_s.append(round(waited, 3))
        out.timeouts += int(timed_out)
        out.time_split_s["cooldown"] += self.clock() - t
        return mean_w

    def _prefill(self, arms: dict, out: Outcome, rng: random.Random) -> None:
        reps = self.cfg.prefill_reps
        live = [a for a in out.arms if a not in out.failed]
        for name in block_order(live, rng)[: len(live)]:
            w = self._safe(out, name, lambda n=name: self._burst(n, arms[n], reps))
            if w is not None:
                out.prefill_windows.append(w)

    def _burst(self, name: str, arm, reps: int) -> Window:
        t0 = self.clock()
        for _ in range(reps):
            arm.generate(1)
        return Window(name, t0, self.clock(), None, reps)

    def _blocks(self, arms: dict, out: Outcome, rng: random.Random) -> None:
        cfg = self.cfg
        start = self.clock()
        recent_s: list[float] = []  # the last round's block times: paired blocks differ in length
        b = 0
        rounds = Rounds(cfg.pairing, rng)
        pairs: dict[str, int] = {}  # blocks run per quantized arm; trials counts pairs per arm
        running: dict[str, list[float]] = {}  # trace-based dE% per finished block, for allocation
        pending: list[dict] = []  # finished blocks the trace did not yet cover
        while True:
            live = [a for a in out.arms if a not in out.failed]
            if "FP16" not in live or len(live) < 2:
                break
            if cfg.trials is not None:
                live = ["FP16", *(a for a in live if a != "FP16" and pairs.get(a, 0) < cfg.trials)]
                if len(live) < 2:
                    break
            next_s = max(recent_s[-max(1, len(live) - 1) :], default=0.0)
            if cfg.duration_s is not None and self.clock() - start + next_s > cfg.duration_s:
                break
            t_block = self.clock()
            idle_w = self._wait_cool(out)
            temp_c = self._read(self.src.temperature_c)
            compared = rounds.next(live)
            if cfg.allocation == "target" and cfg.trials is None and cfg.pairing == "paired":
                pick = self._allocate(pending, running, compared, live)
                if pick is not None:
                    compared = ["FP16", pick]
            for a in compared:
                pairs[a] = pairs.get(a, 0) + (a != "FP16")
            order = block_rounds(block_order(compared, rng), cfg.block_rounds)
            windows: list[Window] = []
            t_dec = self.clock()
            if cfg.preroll_tokens:  # unmeasured: brings the GPU and host out of the idle wait first
                self._safe(out, order[0], lambda n=order[0]: arms[n].generate(cfg.preroll_tokens))
            for name in order:
                w = self._safe(
                    out, name, lambda n=name: self._gen(n, arms[n], cfg.block_tokens, cfg.window_reps)
                )
                if w is not None:
                    windows.append(w)
            out.time_split_s["decode"] += self.clock() - t_dec
            out.orders.append(order)
            out.blocks.append(
                {
                    "block": b,
                    "order": order,
                    "idle_power_w": idle_w,
                    "temps_c": {a: temp_c for a in order},
                    "windows": windows,
                    "trace_j": [],
                }
            )
            pending.append(out.blocks[-1])
            b += 1
            recent_s.append(self.clock() - t_block)
            self.progress(
                "block",
                block=b,
                trials=None if cfg.trials is None else cfg.trials * (len(out.arms) - 1),
                elapsed_s=self.clock() - start,
                duration_s=cfg.duration_s,
                last_block_s=recent_s[-1],
                arms=compared,
            )

    def _allocate(
        self, pending: list[dict], running: dict[str, list[float]], compared: list[str], live: list[str]
    ) -> str | None:
        """The quantized arm the next block should compare (allocation "target"), or None to keep the
        even rounds' choice. Folds every block the trace now covers into `running` first."""
        t, p, _ = self.sampler.trace()
        for blk in [b for b in pending if covered(b["windows"], t)]:
            pending.remove(blk)
            est = block_delta_pct(blk["windows"], t, p)
            if est is not None:
                running.setdefault(est[0], []).append(est[1])
        # candidates in the even rounds' order, so a tie keeps the seeded choice
        quant = [compared[1], *(a for a in live if a not in ("FP16", compared[1]))]
        return choose(running, quant)

    def _direct(self, arms: dict, out: Outcome, rng: random.Random) -> None:
        live = [a for a in out.arms if a not in out.failed]
        self._wait_cool(out)
        t = self.clock()
        for name in block_order(live, rng):
            w = self._safe(out, name, lambda n=name: self._gen(n, arms[n], self.cfg.tokens))
            if w is not None:
                out.direct_windows.append(w)
        out.time_split_s["direct_check"] = self.clock() - t

    def finalise(self, out: Outcome) -> None:
        """Energies of every window from the sampler's record: interpolated counter, trapezoid trace.

        A window whose counter did not advance falls back to the trace, one with a trace gap keeps the
        counter; either way the window says why. A window with neither (the sampler stopped, or a gap
        and no counter) is a fault and its trial is failed, never a zero-energy ok.
        """
        ends = [w.end_s for blk in out.blocks for w in blk["windows"]]
        ends += [w.end_s for w in out.prefill_windows + out.direct_windows]
        if not ends:
            return
        last = max(ends)
        # the counter moves every ~100 ms: wait for a step after the last window so it can be interpolated
        while self.clock() < last + 0.3:
            self.sleep(0.05)
        self.sampler.wait_past(last + 0.3)
        t, p, e = self.sampler.trace()
        has_counter = self.src.has_energy_counter
        steps = counter_steps(t, e) if has_counter else ([], [])
        power_pts = power_steps(t, p)
        reads = [ti for ti, ei in zip(t, e, strict=True) if ei == ei]
        last_read = reads[-1] if reads else float("-inf")
        limit_s = gap_limit_s(t)
        faults = out.faults
        stopped = out.power_error or self._sampler_stopped()

        def fill(w: Window) -> float | None:
            gap = trace_gap_s(t, w.start_s, w.end_s)
            sound = gap != float("inf") and bool(power_pts[0])  # no finite reading at all: no trace energy
            w.trace_j = integrate_j(*power_pts, w.start_s, w.end_s) if sound else None
            if w.trace_j is not None and gap > limit_s:
                faults["trace_gaps"] = faults.get("trace_gaps", 0) + 1
                faults["max_trace_gap_s"] = round(max(faults.get("max_trace_gap_s", 0.0), gap), 3)
                w.notes.append(f"power trace gap of {gap:.3g} s (over {limit_s:.3g} s)")
            w.counter_j = None
            if has_counter:
                stall = counter_stall_s(steps, w.start_s, w.end_s, last_read)
                counter = counter_window_j(steps, w.start_s, w.end_s)
                if stall > COUNTER_STALL_S and stall != float("inf"):
                    faults["counter_stalls"] = faults.get("counter_stalls", 0) + 1
                    w.notes.append(f"energy counter did not advance for {stall:.3g} s")
                elif counter is not None and counter <= 0:
                    w.notes.append("energy counter did not advance")
                else:
                    w.counter_j = counter
            trace_sound = w.trace_j is not None and gap <= limit_s and w.trace_j > 0
            if w.counter_j is None and not trace_sound:
                if w.trace_j is None:
                    w.notes.append(f"no power samples to the end of this window ({stopped})")
                w.fault = "; ".join(w.notes) + "; no sound energy source"
            elif w.notes:
                w.notes.append(f"energy from the {'counter' if w.counter_j is not None else 'power trace'}")
            return w.trace_j

        for blk in out.blocks:
            blk["trace_j"] = [fill(w) for w in blk["windows"]]
        for target, windows, unit in (
            (out.prefill, out.prefill_windows, "reps"),
            (out.direct, out.direct_windows, "tokens"),
        ):
            for w in windows:
                trace = fill(w)
                if w.fault:
                    continue
                acc = target.setdefault(w.arm, {"energy_j": 0.0, "duration_s": 0.0, unit: 0})
                acc["energy_j"] += w.counter_j if w.counter_j is not None else trace
                acc["duration_s"] += w.end_s - w.start_s
                acc[unit] += w.tokens
