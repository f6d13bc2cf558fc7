"""What the protocol observed: timed windows and blocks (an `Outcome`), before and after attribution."""

from __future__ import annotations

from dataclasses import dataclass, field

from measure.core.design import ProtocolConfig


@dataclass
class Window:
    """One measured stretch of decoding; the energies are filled in by `attribution.attribute`."""

    arm: str
    start_s: float
    end_s: float
    counter_j: float | None
    tokens: int
    generations: int = 1
    trace_j: float | None = None
    notes: list[str] = field(default_factory=list)  # why an energy source was set aside
    fault: str | None = None  # no sound energy at all: the trial is failed with this reason


@dataclass
class Outcome:
    """Everything the protocol observed; the report is built from it once it is attributed."""

    config: ProtocolConfig
    arms: list[str]
    blocks: list[dict] = field(default_factory=list)
    orders: list[list[str]] = field(default_factory=list)
    waits_s: list[float] = field(default_factory=list)
    timeouts: int = 0
    idle_power_bare_w: float | None = None
    idle_power_loaded_w: float | None = None
    prefill: dict = field(default_factory=dict)  # arm -> {"energy_j", "duration_s", "reps"} (attributed)
    direct: dict = field(default_factory=dict)  # arm -> {"energy_j", "duration_s", "tokens"} (attributed)
    failed: dict = field(default_factory=dict)  # arm -> reason
    prefill_windows: list = field(default_factory=list)
    direct_windows: list = field(default_factory=list)
    interrupted: bool = False
    power_error: str | None = None  # the power source failed mid-run (NVML error): partial
    faults: dict = field(default_factory=dict)  # trace gaps and counter stalls found by attribution
    time_split_s: dict = field(default_factory=dict)


def window_ends_s(out: Outcome) -> list[float]:
    """The end of every timed window (blocks, prefill bursts, direct checks)."""
    ends = [w.end_s for blk in out.blocks for w in blk["windows"]]
    return ends + [w.end_s for w in out.prefill_windows + out.direct_windows]
