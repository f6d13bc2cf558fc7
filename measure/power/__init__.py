"""Power: NVML, the sampler process, CPU pinning and the fake power source (the power seam)."""
