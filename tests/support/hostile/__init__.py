"""The hostile corpus, its harness, and the fault, fuzz and concurrency drivers of tests/hostile."""
