"""Generators of large valid documents for tests and benchmarks."""
