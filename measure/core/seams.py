"""The typed seams between the pure core and its side effects: power source, sampler, arm, workload.

`measure.power` and `measure.gpu` implement them for real (NVML, the sampler process, torch), the fakes
in `measure.power.fake` and the tests implement them by hand; the protocol loop and the run code against
these classes only, never probing an object for what it happens to have.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

Trace = tuple[list[float], list[float], list[float]]  # (times_s, power_w, energy_j); NaN = not read


@runtime_checkable
class PowerSource(Protocol):
    """One GPU's power readings, in W, J and degC."""

    measurement_source: str  # what the report says measured it: nvml-energy-counter, ..., simulated
    power_field: str  # the NVML field instant power comes from (or "simulated")
    has_energy_counter: bool

    def power_w(self) -> float: ...

    def energy_j(self) -> float: ...

    def temperature_c(self) -> float: ...

    def device_info(self) -> dict: ...

    def close(self) -> None: ...


@runtime_checkable
class Sampler(Protocol):
    """The power trace, recorded apart from the measuring process."""

    kind: str  # "process" for the real sampler
    counter_every: int  # the energy counter is read on every n-th tick

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def trace(self) -> Trace: ...

    def wait_past(self, t_s: float) -> None: ...

    def failed(self) -> bool: ...

    def dropped(self) -> int: ...

    def achieved_rate_hz(self) -> float | None: ...


@runtime_checkable
class Arm(Protocol):
    """One loaded precision of the model, resident, ready to decode."""

    params_b: float
    weight_bytes: int

    def prepare(self, new_tokens: int) -> None:
        """Whatever a length needs before it is measured (the static backend's capture); may do nothing."""

    def generate(self, new_tokens: int) -> int:
        """Greedy-decode exactly `new_tokens` per prompt, synchronised; the tokens generated."""

    def generate_chunk(self, new_tokens: int, stream: int, restart: bool) -> int:
        """Continue generation STREAM by exactly `new_tokens` per prompt, from the prompt when RESTART,
        reusing the stream's own KV cache, synchronised; the tokens generated (eager only)."""

    def perplexity(self) -> tuple[float | None, str]:
        """(perplexity, how), or (None, why not)."""

    def int8_thresholds(self) -> list[float]:
        """The LLM.int8() outlier threshold of every int8 layer as loaded (empty for other precisions)."""

    def int8_outliers(self) -> dict | None:
        """What share of the int8 layers' input columns reached their threshold over a few decode steps
        (`columns_fraction`, `layers_with_outliers_fraction`, `decode_steps`, ...); None when not INT8 or
        no outlier decomposition. Run after the sampler has stopped: it syncs."""


@runtime_checkable
class Workload(Protocol):
    """One model on one device, loading arms on request."""

    def load(self, precision: str) -> Arm: ...

    def info(self) -> dict: ...
