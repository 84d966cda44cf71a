"""benchmarks: see README.md."""
