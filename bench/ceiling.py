"""The raw-driver ceiling for the same work, measured with psycopg / sqlite3 directly.

Reads: the plain aggregate over the entries (what a report would cost without the
derived tables): all-time per-account SUM, and the balance sheet "as of" by join.
Writes: header + 2 entries committed per transaction, from 1 and 4 connections,
with the schema's triggers in place (they are part of the work every posting does).
"""

from __future__ import annotations

import sqlite3
import time

from .http_timing import run_clients, summary

ALL_TIME = "SELECT account_id, SUM(amount_cents) FROM entries GROUP BY account_id"
AS_OF = (
    "SELECT e.account_id, SUM(e.amount_cents) FROM entries e"
    " JOIN transactions t ON t.id = e.transaction_id"
    " WHERE t.occurred_on <= '{as_of}' GROUP BY e.account_id"
)
WINDOW = (
    "SELECT e.account_id, SUM(e.amount_cents) FROM entries e"
    " JOIN transactions t ON t.id = e.transaction_id"
    " WHERE t.occurred_on BETWEEN '{start}' AND '{end}' GROUP BY e.account_id"
)


class Raw:
    def __init__(self, url: str):
        self.url = url
        self.postgres = url.startswith("postgresql")

    def connect(self):
        if self.postgres:
            import psycopg

            return psycopg.connect(self.url.replace("postgresql+psycopg://", "postgresql://"))
        conn = sqlite3.connect(
            self.url.removeprefix("sqlite:///"), isolation_level=None, timeout=30
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def time_query(self, sql: str, repeat: int) -> dict:
        conn = self.connect()
        try:
            conn.execute(sql).fetchall()  # warm the cache
            samples = []
            for _ in range(repeat):
                start = time.perf_counter()
                conn.execute(sql).fetchall()
                samples.append(time.perf_counter() - start)
                if not self.postgres:
                    continue
                conn.rollback()
            return summary(samples)
        finally:
            conn.close()

    def _post_one(self, conn, day: str, a: int, b: int, cents: int) -> None:
        if self.postgres:
            tx = conn.execute(
                "INSERT INTO transactions (occurred_on, description, created_at)"
                " VALUES (%s, 'raw', now()) RETURNING id",
                (day,),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO entries (transaction_id, account_id, amount_cents)"
                " VALUES (%s, %s, %s), (%s, %s, %s)",
                (tx, a, cents, tx, b, -cents),
            )
            conn.commit()
            return
        conn.execute("BEGIN IMMEDIATE")
        tx = conn.execute(
            "INSERT INTO transactions (occurred_on, description, created_at)"
            " VALUES (?, 'raw', datetime('now')) RETURNING id",
            (day,),
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO entries (transaction_id, account_id, amount_cents)"
            " VALUES (?, ?, ?), (?, ?, ?)",
            (tx, a, cents, tx, b, -cents),
        )
        conn.execute("DELETE FROM ledger_balance_pending")
        conn.execute("COMMIT")

    def post_throughput(self, make_posting, clients: int, seconds: float) -> dict:
        counts = [0] * clients
        errors: list[str] = []
        stop_at = time.perf_counter() + seconds

        def loop(k: int) -> None:
            conn = self.connect()
            i = 0
            try:
                while time.perf_counter() < stop_at:
                    day, a, b, cents = make_posting(k, i)
                    i += 1
                    try:
                        self._post_one(conn, day, a, b, cents)
                        counts[k] += 1
                    except Exception as exc:  # noqa: BLE001 - counted and shown
                        errors.append(f"{type(exc).__name__}: {exc}"[:200])
                        if self.postgres:
                            conn.rollback()
                        else:
                            conn.execute("ROLLBACK")
            finally:
                conn.close()

        elapsed = run_clients(loop, clients)
        return {
            "per_second": sum(counts) / elapsed,
            "ok": sum(counts),
            "error_count": len(errors),
            "errors": errors[:5],
        }
