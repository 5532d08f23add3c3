"""python -m bench.verify: `ledger-service verify` on big books: time and peak memory.

Builds a ledger of --transactions synthetic transactions (bench/ledger_gen.py, bulk
loaded as `python -m bench` does) at the schema before the audit trail, then
migrates to the newest schema, whose migration 0007 writes the books' history as
events (the backfill, timed). Then runs `ledger-service verify` in a child process
twice: on the clean books (must exit 0) and after one amount was changed by direct
SQL (must exit 1 naming that entry), printing each run's wall time and the child's
peak resident set (ru_maxrss of the verify process alone).

Example: python -m bench.verify --dialect postgresql --transactions 1000000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from harness import databases
from harness.server import LEDGER_SERVICE, ROOT, _env

BEFORE_TRAIL = "0005_device_starts"


def migrate(url: str, revision: str | None = None) -> float:
    from flask_migrate import upgrade

    from app import create_app, store
    from app.extensions import db

    app = create_app({"DATABASE_URL": url})
    t0 = time.perf_counter()
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision=revision or "head")
        db.engine.dispose()
    return time.perf_counter() - t0


def run_verify(url: str) -> tuple[int, str, float, float]:
    """(exit code, output, seconds, peak RSS MiB) of one `ledger-service verify`.

    The peak is the verify process's own (os.wait4's rusage of that one child).
    """
    with tempfile.TemporaryFile(mode="w+") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            LEDGER_SERVICE + ["verify"], cwd=ROOT, env=_env(url), stdout=out, stderr=out, text=True
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    return proc.returncode, output.strip(), seconds, usage.ru_maxrss / 1024


def tamper(url: str) -> tuple[int, int]:
    """Double both legs of transaction 1000 by direct SQL (still balanced); (tx, entry)."""
    from sqlalchemy import create_engine, text

    from app.config import normalise_database_url

    engine = create_engine(normalise_database_url(url))
    with engine.begin() as conn:
        tx = conn.execute(text("SELECT min(id) FROM transactions WHERE id >= 1000")).scalar_one()
        entry = conn.execute(
            text("SELECT min(id) FROM entries WHERE transaction_id = :t"), {"t": tx}
        ).scalar_one()
        conn.execute(
            text("UPDATE entries SET amount_cents = amount_cents * 2 WHERE transaction_id = :t"),
            {"t": tx},
        )
    engine.dispose()
    return tx, entry


def prepare(url: str, transactions: int, seed: int) -> None:
    """Schema before the trail, bulk load, then the newest schema (the backfill, timed)."""
    from . import bulk

    migrate(url, BEFORE_TRAIL)
    t0 = time.perf_counter()
    dialect = "postgresql" if url.startswith("postgresql") else "sqlite"
    (bulk.load_postgresql if dialect == "postgresql" else bulk.load_sqlite)(url, transactions, seed)
    print(f"loaded {transactions} transactions in {time.perf_counter() - t0:.1f} s")
    print(f"migration 0007 (backfill) took {migrate(url):.1f} s", flush=True)
    # The load skipped the triggers that keep the balance tables (verify compares them
    # with the entries): build them from the entries, as python -m bench does.
    bulk.rebuild_and_analyze(url)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.verify", description=__doc__.splitlines()[0])
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--transactions", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--prepare", metavar="URL", help=argparse.SUPPRESS)  # the loading child
    p.add_argument("--tamper", metavar="URL", help=argparse.SUPPRESS)  # the tampering child
    args = p.parse_args(argv)
    if args.prepare:
        prepare(args.prepare, args.transactions, args.seed)
        return 0
    if args.tamper:
        print(*tamper(args.tamper))
        return 0
    with databases.throwaway(args.dialect) as url:
        # Loaded by a child process: a process forked from a parent that had loaded a
        # million rows would inherit that peak in its own ru_maxrss, so this process
        # stays small and the verify figures are the verify process's own.
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.verify",
                "--prepare",
                url,
                "--transactions",
                str(args.transactions),
                "--seed",
                str(args.seed),
            ],
            cwd=ROOT,
            check=True,
        )
        code, output, seconds, rss = run_verify(url)
        print(f"verify (clean): exit {code} in {seconds:.1f} s, peak RSS {rss:.0f} MiB")
        print(f"  {output}", flush=True)
        if code != 0:
            return 1
        tampered = subprocess.run(
            [sys.executable, "-m", "bench.verify", "--tamper", url],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        tx, entry = tampered.stdout.split()
        code, output, seconds, rss = run_verify(url)
        print(
            f"verify (entry {entry} of transaction {tx} doubled by SQL): exit {code} in "
            f"{seconds:.1f} s, peak RSS {rss:.0f} MiB"
        )
        print(f"  {output}", flush=True)
        return 0 if code == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
