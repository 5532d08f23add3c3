"""Fuzz, cost and read figures for the bank statement readers (app/services/banking/readers).

    python -m bench.statements_fuzz                  # 10,000 generated files per format
    python -m bench.statements_fuzz --count 500 --seed 7 --no-memory
    python -m bench.statements_fuzz --count 0 --hostile-size 5242880   # hostile files only

For each format: the files run, read, refused by kind, the unexpected (anything but the
three refusals; each with its case number to replay through harness.statement_files.cases),
the most CPU time one file took (time.process_time) and the peak memory one file's read
allocated (tracemalloc), and the costliest file against its size's budget
(statement_files.cpu_budget, memory_budget: 0.4 s of CPU per MiB, 40 bytes per byte, over
a floor). Then each hostile file (statement_files.HOSTILE: UTF-16 and XML declarations,
long lines, {x} groups, deep nesting, many tags, fields, accounts) written to
--hostile-size bytes: its CPU time, peak memory and answer. Then the time to read one
5,000-line statement of each format (best of --repeat).
Exit status 1 on any unexpected exception or any file over its budget.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from harness import statement_files


def read_times(lines: int, repeat: int) -> dict:
    from app.services.banking.readers import read

    figures = {}
    for kind in statement_files.FORMATS:
        data = statement_files.statement(kind, lines)
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            bank = read(data)
            best = min(best, time.perf_counter() - started)
        assert len(bank.statements[0].lines) == lines
        figures[kind] = {"bytes": len(data), "lines": lines, "best_ms": round(best * 1000, 1)}
    return figures


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.statements_fuzz", description=__doc__.splitlines()[0]
    )
    p.add_argument("--count", type=int, default=10_000, help="generated files per format")
    p.add_argument("--seed", type=int, default=statement_files.SEED)
    p.add_argument("--no-memory", action="store_true", help="skip tracemalloc (faster)")
    p.add_argument(
        "--format", choices=statement_files.FORMATS, action="append", help="default: all three"
    )
    p.add_argument("--lines", type=int, default=5_000, help="lines of the read benchmark")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument(
        "--hostile-size",
        type=int,
        default=5 * 1024 * 1024,
        help="bytes of each hostile file (0: none)",
    )
    args = p.parse_args(argv)
    report: dict = {"seed": args.seed, "fuzz": {}, "hostile": {}, "read": {}}
    unexpected = over_budget = 0
    for kind in args.format or statement_files.FORMATS:
        started = time.perf_counter()
        result = statement_files.run(kind, args.count, args.seed, not args.no_memory)
        unexpected += len(result.unexpected)
        over_budget += len(result.over_budget)
        report["fuzz"][kind] = {
            "run": result.run,
            "read": result.read,
            "refused": dict(sorted(result.refusals.items())),
            "unexpected": len(result.unexpected),
            "unexpected_cases": result.unexpected[:20],
            "max_cpu_ms_per_file": round(result.max_seconds * 1000, 1),
            "peak_kib_per_file": None if args.no_memory else result.peak_bytes // 1024,
            "worst_share_of_cpu_budget": round(result.worst_cpu_share, 3),
            "worst_share_of_memory_budget": (
                None if args.no_memory else round(result.worst_memory_share, 3)
            ),
            "over_budget_cases": result.over_budget[:20],
            "seconds": round(time.perf_counter() - started, 1),
        }
    if args.hostile_size:
        for cost in statement_files.hostile(args.hostile_size, memory=not args.no_memory):
            over_budget += not cost.within_budget
            report["hostile"][cost.name] = {
                "bytes": cost.size,
                "cpu_ms": round(cost.cpu_seconds * 1000, 1),
                "peak_mib": None if args.no_memory else round(cost.peak_bytes / 1048576, 1),
                "within_budget": cost.within_budget,
                "answer": cost.outcome[:100],
            }
    if args.lines:
        report["read"] = read_times(args.lines, args.repeat)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 1 if unexpected or over_budget else 0


if __name__ == "__main__":
    sys.exit(main())
