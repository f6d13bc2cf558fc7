"""GPU name -> architecture and datasheet memory bandwidth: the one table `measure` writes reports by and
the validator checks them against (a report's gpu_arch must be the architecture of the GPU it names)."""

from __future__ import annotations

import re

# Ordered: the first matching pattern wins, so specific names come before generic ones.
# Patterns are matched against the upper-cased NVML name with "NVIDIA " and "GEFORCE " removed.
ARCH_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bGH200\b", "hopper"),
    (r"\bH(100|200|800|20)\b", "hopper"),
    (r"\bGB200\b", "blackwell"),
    (r"\bB(100|200|300)\b", "blackwell"),
    (r"\bRTX PRO \d{4}\b.*BLACKWELL", "blackwell"),
    (r"\bRTX 50\d0", "blackwell"),
    (r"\bRTX 40\d0", "ada"),
    (r"\bL40S?\b", "ada"),
    (r"\bL4\b", "ada"),
    (r"\bRTX \d{4} ADA\b", "ada"),
    (r"\bA(100|800|10|10G|40|30|16|2)\b", "ampere"),
    (r"\bRTX A\d{4}\b", "ampere"),
    (r"\bRTX 30\d0", "ampere"),
    (r"\bT4\b", "turing"),
    (r"\bRTX 20\d0", "turing"),
    (r"\bQUADRO RTX\b", "turing"),
    (r"\bTITAN RTX\b", "turing"),
    (r"\bV100\b", "volta"),
    (r"\bTITAN V\b", "volta"),
)

# Datasheet peak memory bandwidth in GB/s (vendor product pages / datasheets):
# H200 SXM 4800, H200 NVL 4800, H100 SXM 3350, H100 PCIe 2000, H100 NVL 3900, GH200 (HBM3) 4000,
# A100 80GB SXM 2039, A100 80GB PCIe 1935, A100 40GB 1555, A10 600, A40 696, L4 300, L40/L40S 864,
# RTX 4090 1008, RTX 4090 D 1008, RTX 3090 936, RTX A6000 768, T4 320, V100 SXM2 900, B200 8000,
# RTX 5090 1792, RTX PRO 6000 Blackwell 1792.
_BANDWIDTH_GB_S: tuple[tuple[str, float], ...] = (
    (r"\bH200\b", 4800.0),
    (r"\bGH200\b", 4000.0),
    (r"\bH100\b.*\bNVL\b", 3900.0),
    (r"\bH100\b.*\bPCIE\b", 2000.0),
    (r"\bH100\b", 3350.0),
    (r"\bA100\b.*\bPCIE\b.*80GB|\bA100\b.*80GB.*\bPCIE\b", 1935.0),
    (r"\bA100\b.*80GB", 2039.0),
    (r"\bA100\b", 1555.0),
    (r"\bA10\b", 600.0),
    (r"\bA40\b", 696.0),
    (r"\bL40S?\b", 864.0),
    (r"\bL4\b", 300.0),
    (r"\bRTX 4090\b", 1008.0),
    (r"\bRTX 3090\b", 936.0),
    (r"\bRTX A6000\b", 768.0),
    (r"\bT4\b", 320.0),
    (r"\bV100\b", 900.0),
    (r"\bB200\b", 8000.0),
    (r"\bRTX 5090\b", 1792.0),
    (r"\bRTX PRO 6000\b.*BLACKWELL", 1792.0),
)


def _normalise(name: str) -> str:
    n = name.upper().replace("NVIDIA ", " ").replace("GEFORCE ", " ")
    return " " + re.sub(r"\s+", " ", n).strip() + " "


def arch_for(name: str) -> str | None:
    """The architecture of an NVML device name, or None when the name is not in the table."""
    n = _normalise(name)
    for pattern, arch in ARCH_PATTERNS:
        if re.search(pattern, n):
            return arch
    return None


def bandwidth_gb_s(name: str) -> float | None:
    """Datasheet memory bandwidth in GB/s, or None when the card is not in the table."""
    n = _normalise(name)
    for pattern, bw in _BANDWIDTH_GB_S:
        if re.search(pattern, n):
            return bw
    return None


def derived_arch(gpu: object, stated: object) -> tuple[str | None, str]:
    """(architecture to grade against, how it was decided) for a report's GPU name and stated gpu_arch:
    the table's architecture when it knows the name ("table"), else the stated one ("stated", unverified)."""
    table = arch_for(gpu) if isinstance(gpu, str) else None
    if table is not None:
        return table, "table"
    return (stated if isinstance(stated, str) and stated else None), "stated"
