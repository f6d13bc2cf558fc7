"""quantjoule measurement CLI: FP16 vs NF4/INT8 energy per token with NVML."""

__version__ = "0.1.0"
