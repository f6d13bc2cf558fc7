"""The side effects a run is given (`Env`): the real GPU's, the simulated test run's, or none and why."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from measure.codes import MeasureError
from measure.core.seams import PowerSource, Sampler, Workload
from measure.power.pinning import choose_cpus
from measure.run.options import RunOptions

# (model_spec, backend, device, batch_size=, int8_threshold=) -> Workload
WorkloadFactory = Callable[..., Workload]


@dataclass
class Env:
    """Side effects of a run. `power` is None when there is no usable GPU/NVML (reason says why)."""

    power: PowerSource | None
    sampler: Sampler | None
    workload: WorkloadFactory | None
    reason: str | None = None
    device: str = "cuda:0"
    cpus: tuple[int, int] | None = None  # (measuring CPU, sampler CPU) when pinned
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    now_utc: Callable[[], datetime] = lambda: datetime.now(timezone.utc)

    def timestamp(self) -> str:
        return self.now_utc().strftime("%Y-%m-%dT%H:%M:%SZ")


# test-only: a real `python -m measure run` process on the fake power source and the CPU, so a real
# Ctrl-C can be sent to it; everything it writes is `simulated` and can never pass as a measurement
SIMULATE_ENV = "QUANTJOULE_SIMULATE_POWER"
SIMULATED_TRACE = ((0.0, 124.0), (0.25, 133.0), (0.5, 124.0))


def simulated_env(opts: RunOptions) -> Env:
    from measure.gpu.workload import Workload
    from measure.power.fake import FakePowerSource, open_fake
    from measure.power.sampler import ProcessSampler

    epoch = time.monotonic()
    src = FakePowerSource(SIMULATED_TRACE, epoch_s=epoch)
    sampler = ProcessSampler(functools.partial(open_fake, SIMULATED_TRACE, epoch), opts.sample_rate_hz)
    return Env(src, sampler, Workload, device="cpu")


def default_env(opts: RunOptions) -> Env:
    """The real GPU environment, or one with power=None and the reason."""
    if os.environ.get(SIMULATE_ENV) == "1":
        return simulated_env(opts)
    try:
        import torch
    except ImportError:
        return Env(None, None, None, reason="torch is not installed")
    if not torch.cuda.is_available():
        return Env(None, None, None, reason="no CUDA GPU is visible to torch")
    from measure.gpu.workload import Workload
    from measure.power.nvml import open_nvml
    from measure.power.sampler import ProcessSampler

    try:
        power = open_nvml(opts.device)
    except MeasureError as exc:
        return Env(None, None, None, reason=exc.message)
    cpus = choose_cpus() if opts.pin_cpu else None
    sampler = ProcessSampler(
        functools.partial(open_nvml, opts.device), opts.sample_rate_hz, cpu=cpus[1] if cpus else None
    )
    return Env(power, sampler, Workload, device=f"cuda:{opts.device}", cpus=cpus)
