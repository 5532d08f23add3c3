"""Render a benchmark run's figures as a plain-text table."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def render(r: dict) -> str:
    out = [
        f"ledger-service benchmark: {r['dialect']}, {r['transactions']:,} transactions,"
        f" seed {r['seed']}",
        f"machine {r['machine']}, {r.get('cpus')} CPUs, Python {r['python']},"
        f" started {r['started']}, load average {_loads(r.get('load_average_start'))}",
        f"service: `ledger-service serve` with WORKERS={r.get('workers', 1)}"
        f" ({r.get('workers', 1)} serving process(es), 8 threads each)",
        f"bulk load {r['load_seconds']:.1f} s; derived tables rebuilt {r['rebuild_seconds']:.1f} s;"
        f" `ledger-service check` {r['check_seconds']:.1f} s: no differences",
        "",
        f"{'read over HTTP':32} {'median':>9} {'p95':>9} {'raw agg.':>10} {'raw/served':>11}",
    ]
    for name, t in r["timings"].items():
        if "median_ms" not in t or name.startswith("POST"):
            continue
        raw = t.get("raw_aggregate_ms")
        ratio = f"{raw / t['median_ms']:.1f}x" if raw else "-"
        raw_text = f"{raw:.1f} ms" if raw else "-"
        out.append(
            f"{name:32} {t['median_ms']:7.1f}ms {t['p95_ms']:7.1f}ms {raw_text:>10} {ratio:>11}"
        )
    out += [
        "",
        f"{'write over HTTP':32} {'per s':>9} {'raw per s':>10} {'served/raw':>11}"
        f" {'p95':>9} {'errors':>7}",
    ]
    for name, t in r["timings"].items():
        if not name.startswith("POST"):
            continue
        ratio = t["per_second"] / t["raw_per_second"] if t["raw_per_second"] else 0
        out.append(
            f"{name:32} {t['per_second']:9.0f} {t['raw_per_second']:10.0f}"
            f" {ratio:10.0%} {t.get('p95_ms', 0):7.1f}ms {t['error_count']:7}"
        )
        out += [f"    error: {e}" for e in t["errors"]]
        out += [f"    raw-driver error: {e}" for e in t.get("raw_errors", [])]
    out.append("")
    out.append(
        f"service peak memory: {r.get('peak_pss_mib', 0):.0f} MiB (highest sum of PSS"
        f" sampled every 0.1 s); VmHWM summed over its processes"
        f" {r['peak_memory_mib']:.0f} MiB"
    )
    out.append(
        "check after the POST runs: "
        + ("no differences" if r.get("check_after_posts") else "DIFFERENCES FOUND")
    )
    h = r.get("hledger")
    if h:
        out.append(h["summary"])
    out.append(f"load average at the end: {_loads(r.get('load_average_end'))}")
    out += [f"note: {n}" for n in r["notes"]]
    return "\n".join(out)


def _loads(values) -> str:
    return " ".join(f"{v:.2f}" for v in values) if values else "unknown"


def main(
    argv, parse_args: Callable, run: Callable[..., dict], render: Callable[[dict], str]
) -> int:
    """A bench module's command line: parse argv, run, print the rendered figures and,
    with --json, write them to that file too."""
    args = parse_args(argv)
    results = run(args)
    print(render(results))
    if args.json:
        with Path(args.json).open("w") as f:
            json.dump(results, f, indent=2)
    return 0
