"""What the tests share: fakes at the GitHub/NVML/GPU seams, the report factory, the hostile harness."""
