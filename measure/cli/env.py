"""`measure env`: what NVML, torch, CUDA and bitsandbytes see, and whether a measurement is possible."""

from __future__ import annotations

import json

import click

from measure.codes import MeasureError
from measure.run.context import resolve_arch
from measure.run.provenance import PACKAGES, package_version
from schema.gpus import bandwidth_gb_s


def probe(device: int = 0, gpu_arch: str | None = None) -> dict:
    """A plain dict describing the environment; never raises."""
    env: dict = {
        "packages": {p: package_version(p) for p in PACKAGES}
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
        from measure.power.nvml import open_nvml

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
        env["nvml_error"] = exc.message if isinstance(exc, MeasureError) else str(exc)
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


@click.command()
@click.option("--device", default=0, show_default=True, type=click.IntRange(0, 63))
@click.option("--gpu-arch", default=None, help="Architecture override to check.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON.")
def env(device, gpu_arch, as_json) -> None:
    """Show what NVML, torch, CUDA and bitsandbytes see, and whether a measurement is possible."""
    info = probe(device, gpu_arch)
    if as_json:
        click.echo(json.dumps(info, indent=1, sort_keys=True))
        return
    for k, v in info["packages"].items():
        click.echo(f"{k:14s} {v or 'not installed'}")
    click.echo(f"{'CUDA (torch)':14s} {info.get('torch_cuda')}  available: {info['cuda_available']}")
    nv = info.get("nvml")
    if nv:
        click.echo(f"{'GPU':14s} {nv['name']}  arch: {nv['arch'] or 'unknown'} ({nv['arch_from']})")
        click.echo(
            f"{'power':14s} {nv['power_w']:.1f} W via {nv['power_field']}; limit {nv['power_limit_w']} W; "
            f"energy counter: {'yes' if nv['has_energy_counter'] else 'no'}"
        )
        click.echo(f"{'driver':14s} {nv['driver']}")
    else:
        click.echo(f"{'NVML':14s} unavailable: {info.get('nvml_error')}")
        click.echo(f"{'':14s} hint: {info.get('nvml_hint')}")
    verdict = "yes" if info["can_measure"] and not info["reasons"] else "no"
    click.echo(
        f"measurement possible: {verdict}" + (f" ({'; '.join(info['reasons'])})" if info["reasons"] else "")
    )
