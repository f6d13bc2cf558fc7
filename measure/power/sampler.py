"""Power sampler in its own process: timestamps, instant power and energy counter at a fixed rate.

Batch-1 eager decode is bound by the Python launch path, so a sampling thread would compete with
it for the interpreter lock. The sampler therefore runs in a separate (spawned) process that opens
its own power source, and writes into shared memory that the parent reads without locking.
Timestamps are time.monotonic() (CLOCK_MONOTONIC), which is the same clock in every process.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable

from measure.codes import MeasureError

_FIELDS = 3  # t_s, power_w, energy_j


def _loop(factory, rate_hz, counter_every, cpu, buf, count, dropped, capacity, stop, ready, failed, running):
    # Ctrl-C (and a SIGTERM sent to the process group) reaches the sampler too; the parent decides what
    # an interrupt means, so the sampler keeps sampling until it is told to stop, and stops by itself
    # when the parent is gone (killed outright), so it is never left running as an orphan.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent = os.getppid()
    if cpu is not None:  # off the CPU the decode is pinned to (a spawned child inherits its mask)
        os.sched_setaffinity(0, {cpu})
    try:
        src = factory()
    except Exception:  # reported to the parent through `failed`
        failed.value = 1
        ready.set()
        return
    period = 1.0 / rate_hz
    has_counter = src.has_energy_counter
    ready.set()
    next_t = time.monotonic()
    n = 0
    try:
        while not stop.is_set() and n < capacity:
            if n % 50 == 0 and os.getppid() != parent:
                break
            if not running.is_set():  # paused (the sampler on/off benchmark): sleep without sampling
                running.wait(0.05)
                next_t = time.monotonic()
                continue
            t0 = time.monotonic()
            p = src.power_w()
            t1 = time.monotonic()
            # the counter moves in ~100 ms steps and is slow to read, so it is read on
            # every counter_every-th tick (default 5). Finer reads buy nothing for windows over ~0.5 s:
            # this 10 ms tick and the card's 100 ms refresh are phase-locked, so where a step falls
            # inside its bracket is one constant offset for every step, which cancels across a window
            # (measure/README.md: records replayed with the counter on every 1st, 5th and 10th tick).
            e = src.energy_j() if has_counter and n % counter_every == 0 else math.nan
            base = n * _FIELDS
            buf[base] = 0.5 * (t0 + t1)
            buf[base + 1] = p
            buf[base + 2] = e
            n += 1
            count.value = n  # published last so the parent never reads a half-written sample
            next_t += period
            now = time.monotonic()
            if now > next_t + period:
                missed = int((now - next_t) // period)
                dropped.value += missed
                next_t += missed * period
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    except Exception:
        failed.value = 2
    finally:
        src.close()


class ProcessSampler:
    """Samples `factory()`'s power source at `rate_hz` in a child process until stop()."""

    def __init__(
        self,
        factory: Callable,
        rate_hz: float = 100.0,
        max_duration_s: float = 7200.0,
        counter_every: int = 5,
        cpu: int | None = None,
    ):
        if rate_hz <= 0 or counter_every < 1:
            raise ValueError("rate_hz must be positive and counter_every at least 1")
        self.factory = factory
        self.rate_hz = float(rate_hz)
        self.counter_every = int(counter_every)
        self.cpu = cpu
        self.capacity = int(rate_hz * max_duration_s) + 16
        self.kind = "process"
        self._proc = None
        self._cache_t: list[float] = []
        self._cache_p: list[float] = []
        self._cache_e: list[float] = []

    def start(self, timeout_s: float = 60.0) -> None:
        ctx = mp.get_context("spawn")
        self._buf = ctx.RawArray("d", self.capacity * _FIELDS)
        self._count = ctx.RawValue("q", 0)
        self._dropped = ctx.RawValue("q", 0)
        self._failed = ctx.RawValue("i", 0)
        self._stop = ctx.Event()
        self._running = ctx.Event()
        self._running.set()
        ready = ctx.Event()
        self._proc = ctx.Process(
            target=_loop,
            daemon=True,
            args=(
                self.factory,
                self.rate_hz,
                self.counter_every,
                self.cpu,
                self._buf,
                self._count,
                self._dropped,
                self.capacity,
                self._stop,
                ready,
                self._failed,
                self._running,
            ),
        )
        self._proc.start()
        if not ready.wait(timeout_s) or self._failed.value:
            self.stop()
            raise MeasureError("QJ402", "the power sampler process could not open the power source")

    def _pull(self) -> None:
        # Ctrl-C lands between any two statements, so a pull can stop after one column grew; cutting the
        # columns back to their common length first re-aligns them, and this pull re-reads the rest
        have = min(len(self._cache_t), len(self._cache_p), len(self._cache_e))
        for column in (self._cache_t, self._cache_p, self._cache_e):
            del column[have:]
        n = self._count.value
        if n > have:
            flat = self._buf[have * _FIELDS : n * _FIELDS]
            self._cache_t.extend(flat[0::3])
            self._cache_p.extend(flat[1::3])
            self._cache_e.extend(flat[2::3])

    def wait_past(self, t_s: float, timeout_s: float = 15.0) -> None:
        """Block until a sample later than t_s exists, so a window's right edge is interpolated.

        A live sampler on a loaded host (its spawn start-up, a busy CPU) can lag by seconds; only a dead
        or failed one ends the wait early, and the timeout bounds a hung one."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._pull()
            if self._cache_t and self._cache_t[-1] > t_s:
                return
            dead = self._proc is not None and not self._proc.is_alive()
            if time.monotonic() > deadline or self._failed.value or dead:
                return
            time.sleep(0.5 / self.rate_hz)

    def trace(self) -> tuple[list[float], list[float], list[float]]:
        """(times_s, power_w, energy_j) of every sample so far."""
        self._pull()
        return self._cache_t, self._cache_p, self._cache_e

    def pause(self) -> None:
        """Stop sampling but keep the process (used to compare decode speed with sampling on/off)."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def dropped(self) -> int:
        return int(self._dropped.value)

    def failed(self) -> bool:
        return bool(self._failed.value)

    def achieved_rate_hz(self) -> float | None:
        t, _, _ = self.trace()
        if len(t) < 2 or t[-1] <= t[0]:
            return None
        return (len(t) - 1) / (t[-1] - t[0])

    def stop(self) -> None:
        if self._proc is None:
            return
        self._stop.set()
        self._proc.join(5.0)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(2.0)
        self._pull()
        self._proc = None
