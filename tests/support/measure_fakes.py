"""Hand-written fakes for the protocol tests: a clocked sampler and arms that advance a fake clock.

FakeArm is the GPU seam: generating n tokens advances the shared FakeClock by n * seconds-per-token
(scaled by a host-speed drift function), and the FakePowerSource on the same clock integrates the
power trace over that time, so the true energy of every generation is known.
"""

from __future__ import annotations

import random

from measure.core.attribution import attribute
from measure.core.design import ProtocolConfig
from measure.core.outcome import Outcome
from measure.power.fake import FakeClock


def quick_config(**overrides) -> ProtocolConfig:
    """A protocol short enough for tests: a fixed number of blocks, one warmup, few prefill bursts; even
    turns, so its reports leave `protocol.allocation` out as every report before the option did."""
    settings = {"duration_s": None, "warmup_runs": 1, "prefill_reps": 2, "idle_window_s": 1.0,
                "allocation": "even", **overrides}
    return ProtocolConfig(**settings)


def measured(proto, arms: dict, out: Outcome) -> Outcome:
    """The protocol run over ARMS, then every window's energy attributed from the sampler's trace, as a
    run's reports are from its record."""
    proto.run(arms, out)
    return attribute(out, proto.sampler.trace(), proto.src.has_energy_counter)


class ClockedSampler:
    """Samples a power source at rate_hz on the fake clock, lazily, whenever the trace is read."""

    kind = "process"
    counter_every = 1  # power and counter on every tick

    def __init__(self, source, clock: FakeClock, rate_hz: float = 100.0, gaps=()):
        # gaps: [(start_s, end_s)] of absolute fake time in which no sample is taken (a stalled sampler)
        self.src, self.clock, self.rate_hz, self.gaps = source, clock, rate_hz, list(gaps)
        self.t: list[float] = []
        self.p: list[float] = []
        self.e: list[float] = []
        self.started = self.stopped = False
        self._failed = False
        self._dropped = 0

    def start(self) -> None:
        self.started = True
        self._next = self.clock()

    def _catch_up(self) -> None:
        now = self.clock.now_s
        while self._next <= now and not self._failed:
            t = self._next
            self._next += 1.0 / self.rate_hz
            if any(a <= t < b for a, b in self.gaps):
                self._dropped += 1
                continue
            saved = self.clock.now_s
            self.clock.now_s = t
            try:  # like the real sampler process: a power-source error ends sampling, flagged as failed
                p, e = self.src.power_w(), self.src.energy_j()
            except Exception:
                self._failed = True
            else:
                self.t.append(t)
                self.p.append(p)
                self.e.append(e)
            finally:
                self.clock.now_s = saved

    def wait_past(self, t_s: float, timeout_s: float = 2.0) -> None:
        while self.clock.now_s <= t_s + 1.0 / self.rate_hz:
            self.clock.sleep(1.0 / self.rate_hz)
        self._catch_up()

    def failed(self) -> bool:
        return self._failed

    def trace(self):
        self._catch_up()
        return self.t, self.p, self.e

    def achieved_rate_hz(self):
        return self.rate_hz if len(self.t) > 1 else None

    def dropped(self) -> int:
        return self._dropped

    def stop(self) -> None:
        self._catch_up()
        self.stopped = True


class FakeArm:
    """Generation advances the fake clock: prefill_s + (n - 1) * step_s, times drift(clock)."""

    def __init__(
        self,
        clock: FakeClock,
        step_s: float,
        prefill_s: float,
        drift=lambda t: 1.0,
        params_b: float = 1.1,
        weight_bytes: int = 2_200_000_000,
        fail_after: int | None = None,
        interrupt_after: int | None = None,
        exc: BaseException | None = None,
        noise: tuple[random.Random, float] | None = None,
        batch: int = 1,
    ):
        self.clock, self.step_s, self.prefill_s, self.drift = clock, step_s, prefill_s, drift
        self.noise = noise  # (rng, sd): each generation's time times a random 1 + N(0, sd)
        self.params_b, self.weight_bytes = params_b, weight_bytes
        self.batch = batch  # prompts decoded together: a generation of n tokens yields batch * n
        self.calls = 0
        self.chunks: list[tuple[int, bool, int]] = []
        self.streams: set[int] = set()
        self.fail_after, self.interrupt_after = fail_after, interrupt_after
        self.exc = exc or RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def generate(self, n: int) -> int:
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        if self.fail_after is not None and self.calls > self.fail_after:
            raise self.exc
        base = self.prefill_s + (n - 1) * self.step_s
        # the slowdown acts over the whole generation: evaluate it at the generation's midpoint
        duration = base * self.drift(self.clock.now_s)
        for _ in range(3):
            duration = base * self.drift(self.clock.now_s + duration / 2)
        if self.noise is not None:
            rng, sd = self.noise
            duration *= max(0.2, 1.0 + rng.gauss(0.0, sd))
        self.clock.sleep(duration)
        return n * self.batch

    def generate_chunk(self, n: int, stream: int, restart: bool) -> int:
        """A chunk of a generation: the prefill only when it starts one (`chunks` records every call)."""
        self.chunks.append((stream, restart, n))
        if not restart and stream not in self.streams:
            raise RuntimeError(f"stream {stream} continued before it was started")
        self.streams.add(stream)
        prefill, self.prefill_s = self.prefill_s, self.prefill_s if restart else self.step_s
        try:
            return self.generate(n)
        finally:
            self.prefill_s = prefill

    def prepare(self, n: int) -> None:
        """Nothing to capture: an eager arm."""

    def perplexity(self):
        return None, "random-init weights"

    def int8_thresholds(self) -> list[float]:
        return []

    def int8_outliers(self) -> dict | None:
        return None


class FakeWorkload:
    def __init__(self, arms: dict, fail_load: dict | None = None):
        self.arms, self.fail_load = arms, fail_load or {}

    def load(self, precision: str):
        if precision in self.fail_load:
            raise self.fail_load[precision]
        return self.arms[precision]

    def info(self) -> dict:
        return {"model_revision": None, "prompt_tokens": 16}
