"""Software provenance: package versions, python, torch CUDA build, host OS."""

from __future__ import annotations

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


def provenance(tool_version: str, argv: list[str] | None = None) -> dict:
    args = argv if argv is not None else sys.argv[1:]
    return {
        "tool_version": tool_version,
        "command": " ".join(["python -m measure", *args])[:300],
        "host_os": platform.system(),
    }
