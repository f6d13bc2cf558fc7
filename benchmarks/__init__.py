"""Calibration, speed, stress and GPU scripts, run from the repository root: `python -m benchmarks.<name>`."""
