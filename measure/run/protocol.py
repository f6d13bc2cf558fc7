"""The live protocol loop: resident arms, loaded-idle cooldown, mirrored blocks, timed windows.

Side effects come in through the typed seams (power source, sampler, arms, clock, sleep), so the whole
loop runs in tests against fakes. The loop only times windows; their energies are attributed afterwards
from the recorded trace (`measure.core.attribution`), the same way `measure replay` does.
- every arm stays resident; loaded-idle power is measured after loading, and each block starts only
  once power is back within `tolerance_w` of it (or `timeout_s` passes; the wait is recorded);
- the blocks follow `measure.core.design` (mirrored orders, paired rounds) and, in a duration-bounded
  paired run with allocation "target", `measure.core.allocation`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from measure.core.allocation import block_delta_pct, choose, covered
from measure.core.attribution import SAMPLER_STOPPED
from measure.core.design import ProtocolConfig, Rounds, block_order, block_rounds, chunk_schedule
from measure.core.energy import integrate_j, power_steps, trace_gap_s
from measure.core.outcome import Outcome, Window, window_ends_s
from measure.core.seams import Arm, PowerSource, Sampler

# after the last window the counter needs one more step (it moves every ~100 ms) to be interpolated
SETTLE_S = 0.3


class PowerLost(Exception):
    """The power source failed while the protocol needed it: stop, keep what was measured."""


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
    block it is back under target within a refresh or two (measure/README.md), so the wait ends one
    window after that, not at the next round boundary. Returns (waited_s, timed_out, last_mean_w);
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
        source: PowerSource,
        sampler: Sampler,
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
    def _gen(self, name: str, arm: Arm, n: int, reps: int = 1) -> Window:
        # No NVML call in the measuring process while decoding: the counter is read by the sampler
        # process and interpolated onto the window afterwards (measure.core.attribution).
        t0 = self.clock()
        got = sum(int(arm.generate(n)) for _ in range(reps))
        t1 = self.clock()
        return Window(name, t0, t1, None, got, reps)

    def _chunk(self, name: str, arm: Arm, stream: int, chunk: int) -> Window:
        """One chunk of generation STREAM; the window counts the generation once, on its last chunk."""
        cfg = self.cfg
        t0 = self.clock()
        got = int(arm.generate_chunk(cfg.chunk_tokens, stream, chunk == 0))
        t1 = self.clock()
        return Window(name, t0, t1, None, got, int(chunk == cfg.block_tokens // cfg.chunk_tokens - 1))

    def _chunked_generation(self, arm: Arm) -> None:
        """An unmeasured warm-up of the chunked path: one whole generation in chunks."""
        for c in range(self.cfg.block_tokens // self.cfg.chunk_tokens):
            arm.generate_chunk(self.cfg.chunk_tokens, 0, c == 0)

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
        failed = self.sampler.failed()
        return SAMPLER_STOPPED + (": the power source raised an error" if failed else "")

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

    def run(self, arms: dict[str, Arm], out: Outcome) -> Outcome:
        """Warmup, loaded idle, prefill bursts, blocks, direct check, then the wait for the trace to cover
        the last window. Fills `out` with timed windows (no energies) and returns it."""
        cfg = self.cfg
        rng = random.Random(cfg.seed)
        live = [a for a in out.arms if a in arms and a not in out.failed]
        split = out.time_split_s
        try:
            t = self.clock()
            for name in live:
                # static backend: capture every length used, up front (a no-op for eager arms)
                for n in sorted({1, cfg.block_tokens, cfg.tokens, cfg.preroll_tokens} - {0}):
                    self._safe(out, name, lambda a=arms[name], n=n: a.prepare(n))
                for _ in range(cfg.warmup_runs):
                    self._safe(out, name, lambda a=arms[name]: a.generate(1))
                    self._safe(out, name, lambda a=arms[name]: a.generate(cfg.block_tokens))
                    if cfg.chunk_tokens:
                        self._safe(out, name, lambda a=arms[name]: self._chunked_generation(a))
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
        self.settle(out)
        if out.power_error is None and self.sampler.failed():
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

    def _prefill(self, arms: dict[str, Arm], out: Outcome, rng: random.Random) -> None:
        reps = self.cfg.prefill_reps
        live = [a for a in out.arms if a not in out.failed]
        for name in block_order(live, rng)[: len(live)]:
            w = self._safe(out, name, lambda n=name: self._burst(n, arms[n], reps))
            if w is not None:
                out.prefill_windows.append(w)

    def _burst(self, name: str, arm: Arm, reps: int) -> Window:
        t0 = self.clock()
        for _ in range(reps):
            arm.generate(1)
        return Window(name, t0, self.clock(), None, reps)

    def _blocks(self, arms: dict[str, Arm], out: Outcome, rng: random.Random) -> None:
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
            if cfg.chunk_tokens:
                for name, stream, c in chunk_schedule(order, cfg.block_tokens, cfg.chunk_tokens):
                    w = self._safe(out, name, lambda n=name, s=stream, c=c: self._chunk(n, arms[n], s, c))
                    if w is not None:
                        windows.append(w)
            else:
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

    def _direct(self, arms: dict[str, Arm], out: Outcome, rng: random.Random) -> None:
        live = [a for a in out.arms if a not in out.failed]
        self._wait_cool(out)
        t = self.clock()
        for name in block_order(live, rng):
            w = self._safe(out, name, lambda n=name: self._gen(n, arms[n], self.cfg.tokens))
            if w is not None:
                out.direct_windows.append(w)
        out.time_split_s["direct_check"] = self.clock() - t

    def settle(self, out: Outcome) -> None:
        """Wait until the trace reaches SETTLE_S past the last window, so its right edge is interpolated."""
        ends = window_ends_s(out)
        if not ends:
            return
        last = max(ends)
        while self.clock() < last + SETTLE_S:
            self.sleep(0.05)
        self.sampler.wait_past(last + SETTLE_S)
