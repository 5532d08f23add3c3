"""Benchmarks: `python -m bench --help` (the harness, see docs/performance.md),
`python -m bench.load` (concurrent mixed load) and `python -m bench.fuzz` (fuzz figures)."""
