"""Software provenance: package versions, python, torch CUDA build, host OS."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

PACKAGES = ("torch", "transformers", "bitsandbytes", "accelerate", "nvidia-ml-py")


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def torch_cuda() -> str | None:
    """CUDA version torch was built with, without importing torch when it is absent."""
    if package_version("torch") is None:
        return None
    import torch

    return torch.version.cuda


def software(driver: str | None) -> dict:
    return {
        "python": platform.python_version(),
        "packages": {p: package_version(p) for p in PACKAGES},
        "torch_cuda": torch_cuda(),
        "nvidia_driver": driver,
    }


def host_cpu() -> str | None:
    """The host CPU's model name (Linux /proc/cpuinfo, else platform.processor()): batch-1 eager decode
    runs at the host's kernel-launch speed, so the host is part of what a run measured."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()[:120] or None
    except OSError:
        pass
    return platform.processor()[:120] or None


def provenance(tool_version: str, argv: list[str] | None = None) -> dict:
    args = argv if argv is not None else sys.argv[1:]
    return {
        "tool_version": tool_version,
        "command": " ".join(["python -m measure", *args])[:300],
        "host_os": platform.system(),
        "host_cpu": host_cpu(),
        "host_cpu_count": os.cpu_count(),
    }
