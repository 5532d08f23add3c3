"""Benchmarks and load: python -m bench.load, python -m bench.fuzz."""
