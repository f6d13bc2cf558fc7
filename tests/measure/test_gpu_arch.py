"""Architecture and bandwidth from real NVML device names; unknown names stay unknown."""

import pytest

from measure.run.context import resolve_arch
from schema.gpus import arch_for, bandwidth_gb_s

REAL_NAMES = [
    ("NVIDIA H200", "hopper"),
    ("NVIDIA H100 80GB HBM3", "hopper"),
    ("NVIDIA H100 PCIe", "hopper"),
    ("NVIDIA H100 NVL", "hopper"),
    ("NVIDIA GH200 480GB", "hopper"),
    ("NVIDIA H800", "hopper"),
    ("NVIDIA GeForce RTX 4090", "ada"),
    ("NVIDIA GeForce RTX 4090 D", "ada"),
    ("NVIDIA GeForce RTX 4060 Ti", "ada"),
    ("NVIDIA L4", "ada"),
    ("NVIDIA L40S", "ada"),
    ("NVIDIA L40", "ada"),
    ("NVIDIA RTX 6000 Ada Generation", "ada"),
    ("NVIDIA A100-SXM4-80GB", "ampere"),
    ("NVIDIA A100-PCIE-40GB", "ampere"),
    ("NVIDIA A100 80GB PCIe", "ampere"),
    ("NVIDIA A800 80GB PCIe", "ampere"),
    ("NVIDIA A10", "ampere"),
    ("NVIDIA A10G", "ampere"),
    ("NVIDIA A40", "ampere"),
    ("NVIDIA GeForce RTX 3090", "ampere"),
    ("NVIDIA GeForce RTX 3060 Laptop GPU", "ampere"),
    ("NVIDIA RTX A6000", "ampere"),
    ("NVIDIA GeForce RTX 5090", "blackwell"),
    ("NVIDIA B200", "blackwell"),
    ("NVIDIA GB200", "blackwell"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "blackwell"),
    ("Tesla T4", "turing"),
    ("NVIDIA GeForce RTX 2080 Ti", "turing"),
    ("Quadro RTX 8000", "turing"),
    ("Tesla V100-SXM2-16GB", "volta"),
    ("Tesla V100-PCIE-32GB", "volta"),
]


@pytest.mark.parametrize(("name", "arch"), REAL_NAMES)
def test_real_nvml_names(name, arch):
    assert arch_for(name) == arch


@pytest.mark.parametrize(
    "name",
    [
        "Tesla P100-PCIE-16GB",
        "NVIDIA GeForce GTX 1080 Ti",
        "Radeon RX 7900",
        "",
        "Simulated GPU (fake power source)",
        "NVIDIA A2000X",
    ],
)
def test_unknown_names_are_not_mapped(name):
    assert arch_for(name) is None
    assert resolve_arch(name, None) == (None, "unknown")


def test_override_wins_and_is_checked():
    assert resolve_arch("Tesla P100-PCIE-16GB", "volta") == ("volta", "override")
    with pytest.raises(ValueError):
        resolve_arch("NVIDIA H200", "kepler")


def test_datasheet_bandwidth():
    assert bandwidth_gb_s("NVIDIA H200") == 4800.0
    assert bandwidth_gb_s("NVIDIA H100 80GB HBM3") == 3350.0
    assert bandwidth_gb_s("NVIDIA H100 PCIe") == 2000.0
    assert bandwidth_gb_s("NVIDIA A100-SXM4-80GB") == 2039.0
    assert bandwidth_gb_s("NVIDIA GeForce RTX 4090") == 1008.0
    assert bandwidth_gb_s("Tesla P100-PCIE-16GB") is None
