"""The GPU side: model loading, arms, the static backend, synthetic models, weight accounting, the quality
probe and the capture audit (torch, transformers and bitsandbytes live here only)."""
