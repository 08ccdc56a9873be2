"""Reproducible benchmarks: every figure is a ratio against a named baseline in the same run."""
