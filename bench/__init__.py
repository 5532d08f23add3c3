"""The benchmark harness: `python -m bench --help` (see docs/performance.md)."""
