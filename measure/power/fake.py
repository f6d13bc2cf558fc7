"""Hand-written fake power source and clock for tests: replays a power trace; always `simulated`."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence

from measure.core.energy import integrate_j, power_at


class FakeClock:
    """A clock that only moves when told to (sleep advances it)."""

    def __init__(self, start_s: float = 0.0):
        self.now_s = start_s

    def __call__(self) -> float:
        return self.now_s

    def sleep(self, seconds: float) -> None:
        self.now_s += max(0.0, seconds)


class FakeNvmlError(RuntimeError):
    """What the fake raises where NVML would (e.g. NVML_ERROR_GPU_IS_LOST): a power-source fault."""


class FakePowerSource:
    """Replays `trace` [(t_s, power_w), ...] (repeated with its period) against `clock`.

    The energy counter is the exact integral of the trace, so tests know the true energy of any window.
    Everything measured with it is labelled `simulated` and can never pass as a measurement.
    Faults, in seconds after `epoch_s`: from `error_after_s` every reading raises FakeNvmlError (the
    GPU fell off the bus mid-run); from `counter_stuck_after_s` the energy counter keeps its last value
    while the power stays real (a counter that stops advancing).
    """

    measurement_source = "simulated"
    power_field = "simulated"
    has_energy_counter = True

    def __init__(
        self,
        trace: Sequence[tuple[float, float]],
        clock: Callable[[], float] = time.monotonic,
        epoch_s: float = 0.0,
        name: str = "Simulated GPU (fake power source)",
        power_limit_w: float = 700.0,
        temperature_c: float = 35.0,
        error_after_s: float | None = None,
        counter_stuck_after_s: float | None = None,
    ):
        if len(trace) < 2:
            raise ValueError("a trace needs at least two points")
        self._t = [float(t) for t, _ in trace]
        self._p = [float(p) for _, p in trace]
        self._period = self._t[-1] - self._t[0]
        self._period_j = integrate_j(self._t, self._p, self._t[0], self._t[-1])
        self._clock = clock
        self._epoch = epoch_s
        self._name = name
        self._limit = power_limit_w
        self._temp = temperature_c
        self.error_after_s = error_after_s
        self.counter_stuck_after_s = counter_stuck_after_s

    def open(self) -> FakePowerSource:
        return self

    def close(self) -> None:
        pass

    def _phase(self, t: float) -> tuple[int, float]:
        rel = t - self._epoch
        cycles = int(rel // self._period)
        return cycles, self._t[0] + rel - cycles * self._period

    def _now(self) -> float:
        now = self._clock()
        if self.error_after_s is not None and now - self._epoch >= self.error_after_s:
            raise FakeNvmlError("NVML_ERROR_GPU_IS_LOST (simulated): the GPU is lost")
        return now

    def power_w(self) -> float:
        return power_at(self._t, self._p, self._phase(self._now())[1])

    def energy_j(self) -> float:
        now = self._now()
        if self.counter_stuck_after_s is not None:
            now = min(now, self._epoch + self.counter_stuck_after_s)
        cycles, phase = self._phase(now)
        return cycles * self._period_j + integrate_j(self._t, self._p, self._t[0], phase)

    def temperature_c(self) -> float:
        self._now()
        return self._temp

    def power_limit_w(self) -> float:
        return self._limit

    def device_info(self) -> dict:
        return {
            "name": self._name,
            "memory_total_gb": None,
            "power_limit_w": self._limit,
            "gpu_uuid_sha256": hashlib.sha256(b"fake-gpu").hexdigest(),
            "driver": None,
            "power_field": self.power_field,
            "has_energy_counter": True,
            "sm_mhz": None,
            "mem_mhz": None,
        }


def open_fake(trace: Sequence[tuple[float, float]], epoch_s: float, **faults) -> FakePowerSource:
    """Factory for the sampler process: a fake on the real monotonic clock sharing the parent's epoch."""
    return FakePowerSource(trace, epoch_s=epoch_s, **faults)
