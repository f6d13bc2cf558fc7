"""CPU placement for a measurement: the decode on one CPU, the power sampler on another core.

Batch-1 eager decode runs at the speed of one host thread. Left to the scheduler it can land on a
CPU whose hyperthread sibling is busy, or move between CPUs, and decode speed then changes from one
generation to the next; pinning it to one CPU, and the sampler to a CPU of a different physical
core, takes that out. Reads Linux sysfs only; anywhere else there is nothing to pin.
"""

from __future__ import annotations

import os
from pathlib import Path

SYSFS = Path("/sys/devices/system/cpu")


def _siblings(cpu: int, root: Path) -> set[int]:
    """The CPUs sharing `cpu`'s physical core (itself included), from sysfs's "0,8" / "0-1" lists."""
    try:
        text = (root / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text().strip()
    except OSError:
        return {cpu}
    out: set[int] = set()
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out or {cpu}


def choose_cpus(allowed: set[int] | None = None, root: Path = SYSFS) -> tuple[int, int] | None:
    """(measure_cpu, sampler_cpu) on different physical cores, avoiding CPU 0 (interrupts land there
    first); None when fewer than two cores are allowed."""
    if allowed is None:
        if not hasattr(os, "sched_getaffinity"):
            return None
        allowed = set(os.sched_getaffinity(0))
    cores: list[set[int]] = []
    for cpu in sorted(allowed):
        if not any(cpu in c for c in cores):
            cores.append(_siblings(cpu, root) & allowed or {cpu})
    if len(cores) < 2:
        return None
    # prefer cores without CPU 0; the measuring CPU and the sampler CPU come from two such cores
    ranked = sorted(cores, key=lambda c: (0 in c, min(c)))
    return min(ranked[0]), min(ranked[1])


def pin_current_process(cpu: int) -> None:
    """Pin this process's calling thread and every thread it starts from now on to `cpu`."""
    os.sched_setaffinity(0, {cpu})
