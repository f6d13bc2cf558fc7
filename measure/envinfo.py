"""`measure env`: what NVML, torch, CUDA and bitsandbytes see, and whether a measurement is possible."""

from __future__ import annotations

from measure.gpu_arch import bandwidth_gb_s, resolve_arch
from measure.provenance import package_version


def probe(device: int = 0, gpu_arch: str | None = None) -> dict:
    """A plain dict describing the environment; never raises."""
    env: dict = {
        "packages": {
            p: package_version(p)
            for p in ("torch", "transformers", "bitsandbytes", "accelerate", "nvidia-ml-py")
        }
    }
    env["cuda_available"] = False
    if env["packages"]["torch"]:
        try:
            import torch

            env["torch_cuda"] = torch.version.cuda
            env["cuda_available"] = bool(torch.cuda.is_available())
            if env["cuda_available"]:
                env["torch_device"] = torch.cuda.get_device_name(device)
        except Exception as exc:
            env["torch_error"] = str(exc)
    try:
        from measure.nvml import open_nvml

        src = open_nvml(device)
        try:
            info = src.device_info()
            info["power_w"] = src.power_w()
            info["temperature_c"] = src.temperature_c()
            if src.has_energy_counter:
                info["energy_counter_j"] = src.energy_j()
        finally:
            src.close()
        arch, how = resolve_arch(info["name"], gpu_arch)
        info.update(arch=arch, arch_from=how, datasheet_bandwidth_gb_s=bandwidth_gb_s(info["name"]))
        env["nvml"] = info
    except Exception as exc:
        env["nvml_error"] = getattr(exc, "message", None) or str(exc)
        # what to do depends on what is missing: the package, or the driver/GPU it talks to
        env["nvml_hint"] = (
            "pip install nvidia-ml-py"
            if env["packages"]["nvidia-ml-py"] is None
            else "nvidia-ml-py is installed; NVML needs the NVIDIA driver and a GPU (nvidia-smi lists it)"
        )
    reasons = []
    if not env["cuda_available"]:
        reasons.append("torch sees no CUDA GPU")
    if "nvml" not in env:
        reasons.append("NVML unavailable")
    if not env["packages"]["bitsandbytes"]:
        reasons.append("bitsandbytes missing (needed for NF4/INT8)")
    if "nvml" in env and env["nvml"].get("arch") is None:
        reasons.append("GPU architecture unknown: pass --gpu-arch")
    env["can_measure"] = not reasons[:2] and env["packages"]["bitsandbytes"] is not None
    env["reasons"] = reasons
    return env
