"""GPU name -> architecture and datasheet memory bandwidth (for the roofline).

The table lives in schema.gpus, so the validator derives a report's architecture by the same rule.
"""

from __future__ import annotations

from schema.gpus import arch_for, bandwidth_gb_s  # noqa: F401 - re-exported for measure's callers

ARCHS = ("hopper", "ada", "ampere", "blackwell", "turing", "volta")


def resolve_arch(name: str, override: str | None) -> tuple[str | None, str]:
    """(arch, how): the override wins; an unknown name stays None, never mapped to a neighbour."""
    if override:
        if override not in ARCHS:
            raise ValueError(f"--gpu-arch must be one of {', '.join(ARCHS)}, got {override!r}")
        return override, "override"
    arch = arch_for(name)
    return arch, ("table" if arch else "unknown")
