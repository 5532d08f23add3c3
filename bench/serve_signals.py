"""Stopping `serve` at every moment of its start-up: SIGINT and SIGTERM, many times.

    python -m bench.serve_signals --trials 100

Each trial starts `ledger-service serve` (the API and the web app, on a new SQLite
database, so the migrations run) and sends it SIGINT or SIGTERM after a delay. The
delays are spread evenly from the moment of spawning to a little past the moment it
answers (measured by a first, calibrating start): during the interpreter's start,
the app's loading, the migrations, the binding of the sockets, the start of the
server threads and while serving. Every third trial starts serve with SIGINT
ignored, as a shell starts a background job (`ledger-service serve &` in a script),
and signals it once serve has begun (its first line printed): the case of issue 28,
item 10. A trial passes when:

- serve ended within --deadline seconds (default 15);
- nothing listens on its two ports any more;
- the database is either untouched or at the newest migration (never in between);
- the exit status is 0 with a "stopped (SIG...)" line, or, only while serve had not
  yet begun (nothing printed), the signal's default ending (SIGTERM: killed by it;
  SIGINT: KeyboardInterrupt, or click's exit 1 with its "Aborted!" and no traceback
  in the output), which comes before anything is written. An exit 1 that printed
  nothing is not the signal's ending: it fails.

Prints the counts by outcome and the slowest stop; exit status 1 on any failure.
tests/web/test_web_serve.py runs a short version (a few trials).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from harness.serve_trials import Trials


def run(trials: int, deadline: float = 15.0, folder: Path | None = None) -> dict:
    """trials spread over start-up, both signals; the summary and every failure."""
    with tempfile.TemporaryDirectory(prefix="ledger-serve-signals-") as scratch:
        runner = Trials(Path(folder or scratch), deadline)
        startup = runner.calibrate()
        began = time.monotonic()
        results = []
        for i in range(trials):
            sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
            if i % 3 == 2:
                # SIGINT inherited ignored; from serve's first line to past its answering
                fraction = i / max(1, trials - 1)
                results.append(runner.run(signal.SIGINT, 0.6 * fraction, sigint_ignored=True))
            else:
                fraction = i / max(1, trials - 1)
                results.append(runner.run(sig, 1.2 * startup * fraction))
        seconds = time.monotonic() - began
    failures = [r for r in results if r["outcome"] == "failed"]
    stops = [r["seconds"] for r in results if r["seconds"] is not None]
    return {
        "trials": len(results),
        "startup_seconds": round(startup, 2),
        "outcomes": dict(Counter(r["outcome"] for r in results)),
        "by_signal": dict(
            Counter(
                f"{r['signal']}{' (inherited ignored)' if r['sigint_ignored'] else ''}"
                for r in results
            )
        ),
        "failures": len(failures),
        "slowest_stop_seconds": max(stops) if stops else None,
        "wall_seconds": round(seconds, 1),
        "failed": failures,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.serve_signals", description=__doc__.splitlines()[0]
    )
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--deadline", type=float, default=15.0, help="seconds a stop may take")
    args = p.parse_args(argv)
    report = run(args.trials, args.deadline)
    print(json.dumps(report, indent=2))
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
