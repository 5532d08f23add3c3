"""Load: many concurrent clients against the real service under waitress, on loopback.

    python -m bench.load --dialect sqlite --clients 16 --seconds 20
    python -m bench.load --dialect postgresql --clients 16 --seconds 20 --json out.json

Starts `ledger-service serve` (waitress, 8 threads) on 127.0.0.1 and a free port over
a throwaway database, then runs CLIENTS threads, each with its own keep-alive
connection, its own bearer token and its own OAuth grant, mixing:

    reads     GET /accounts, /transactions?from&to, /reports/balances, /reports/balance-sheet
    postings  POST /transactions (balanced, 2 entries)
    tools     POST /mcp tools/call (account_balances, record_transaction)
    refreshes POST /oauth/token grant_type=refresh_token (rotating the client's grant)

It stops by itself when SECONDS have passed or REQUESTS have been sent, whichever is
first, then checks the books: every acknowledged posting is stored and balances, and
nothing else is. It prints requests/s, p50/p99 latency per kind, and the error count
(any status other than the expected one, and any connection failure). Exit status 1
if there was any error or the books do not add up.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from contextlib import ExitStack
from datetime import date, timedelta
from pathlib import Path

from harness import databases
from harness.databases import PG_ADMIN_URL
from harness.server import Service, cli, free_port

EMAIL = "load@example.com"
PASSWORD = "correct horse battery staple"
HOST = "127.0.0.1"  # loopback only, by construction
MIX = (("read", 50), ("post", 25), ("tool", 15), ("refresh", 10))
ACCOUNTS = (
    ("Checking", "asset"),
    ("Savings", "asset"),
    ("Card", "liability"),
    ("Opening", "equity"),
    ("Salary", "income"),
    ("Groceries", "expense"),
    ("Rent", "expense"),
)


def oauth_grants(database_url: str, origin: str, n: int) -> list[str]:
    """n refresh tokens of separate grants for svc-cli, issued by the service's own code."""
    from app import create_app, store
    from app.extensions import db
    from app.services.identity import users
    from app.services.oauth import tokens

    app = create_app({"DATABASE_URL": database_url, "API_ORIGIN": origin})
    with app.app_context():
        store.write_intent.set(True)
        user = users.find_user(EMAIL)
        grants = [tokens.issue_pair(user.id, "svc-cli")["refresh_token"] for _ in range(n)]
        store.commit()
        db.engine.dispose()
    return grants


class Client(threading.Thread):
    def __init__(self, k, port, token, refresh, account_ids, stop_at, budget, results, seed):
        super().__init__(daemon=True)
        self.k, self.port, self.token, self.refresh = k, port, token, refresh
        self.account_ids, self.stop_at, self.budget = account_ids, stop_at, budget
        self.results = results
        self.rng = random.Random(seed * 1000 + k)
        self.conn = None
        self.acknowledged: list[int] = []
        self.rpc = 0

    def request(self, method, path, body=None, content_type="application/json", auth=True):
        headers = {}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                return response.status, data
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def posting_body(self):
        a, b = self.rng.sample(self.account_ids, 2)
        cents = self.rng.randint(1, 100_000)
        day = date(2026, 1, 1) + timedelta(days=self.rng.randrange(365))
        return {
            "occurred_on": day.isoformat(),
            "description": f"load {self.k}",
            "entries": [
                {"account_id": a, "amount_cents": cents},
                {"account_id": b, "amount_cents": -cents},
            ],
        }

    def one(self, kind):
        rng = self.rng
        if kind == "read":
            start = date(2026, 1, 1) + timedelta(days=rng.randrange(300))
            path = rng.choice(
                [
                    "/accounts",
                    f"/transactions?from={start}&to={start + timedelta(days=30)}",
                    "/reports/balances",
                    f"/reports/balance-sheet?as_of={start}",
                ]
            )
            status, _ = self.request("GET", path)
            return status == 200, status
        if kind == "post":
            status, data = self.request("POST", "/transactions", json.dumps(self.posting_body()))
            if status == 201:
                self.acknowledged.append(json.loads(data)["id"])
            return status == 201, status
        if kind == "tool":
            self.rpc += 1
            if rng.random() < 0.5:
                params = {"name": "account_balances", "arguments": {}}
            else:
                params = {"name": "record_transaction", "arguments": self.posting_body()}
            payload = {"jsonrpc": "2.0", "id": self.rpc, "method": "tools/call", "params": params}
            status, data = self.request("POST", "/mcp", json.dumps(payload))
            ok = status == 200 and "result" in json.loads(data)
            if ok and params["name"] == "record_transaction":
                self.acknowledged.append(json.loads(data)["result"]["structuredContent"]["id"])
            return ok, status
        form = urllib.parse.urlencode(
            {"grant_type": "refresh_token", "refresh_token": self.refresh, "client_id": "svc-cli"}
        )
        status, data = self.request(
            "POST", "/oauth/token", form, "application/x-www-form-urlencoded", auth=False
        )
        if status == 200:
            pair = json.loads(data)
            self.refresh = pair["refresh_token"]
            # Use the fresh access token from now on: proves the refreshed pair works.
            self.token = pair["access_token"]
        return status == 200, status

    def run(self):
        kinds = [k for k, _ in MIX]
        weights = [w for _, w in MIX]
        while time.monotonic() < self.stop_at and self.budget.take():
            kind = self.rng.choices(kinds, weights)[0]
            began = time.perf_counter()
            try:
                ok, status = self.one(kind)
            except Exception as exc:  # noqa: BLE001 - every failure is counted, not raised
                ok, status = False, type(exc).__name__
            self.results.record(kind, time.perf_counter() - began, ok, status)
        if self.conn is not None:
            self.conn.close()


class Budget:
    def __init__(self, n):
        self.left = n
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {}
        self.errors: dict[str, int] = {}

    def record(self, kind, seconds, ok, status):
        with self.lock:
            self.latency.setdefault(kind, []).append(seconds)
            if not ok:
                key = f"{kind} {status}"
                self.errors[key] = self.errors.get(key, 0) + 1


def percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def check_books(database_url: str, acknowledged: set[int]) -> list[str]:
    """Every acknowledged posting is stored, complete and balanced; nothing else is."""
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT t.id, COUNT(e.id), COALESCE(SUM(e.amount_cents), 0) FROM transactions t "
                "LEFT JOIN entries e ON e.transaction_id = t.id GROUP BY t.id"
            )
        ).all()
    engine.dispose()
    problems = []
    stored = {r[0] for r in rows}
    if stored - acknowledged:
        problems.append(f"{len(stored - acknowledged)} stored transactions nobody was told about")
    if acknowledged - stored:
        problems.append(f"{len(acknowledged - stored)} acknowledged transactions lost")
    bad = [r[0] for r in rows if r[1] != 2 or int(r[2]) != 0]
    if bad:
        problems.append(f"{len(bad)} stored transactions incomplete or unbalanced")
    return problems


def run(dialect, clients, seconds, requests, seed, admin_url=PG_ADMIN_URL) -> dict:
    with ExitStack() as stack:
        url = stack.enter_context(databases.throwaway(dialect, admin_url))
        port = free_port()
        origin = f"http://{HOST}:{port}"
        env = {
            "API_ORIGIN": origin,
            "LEDGER_INSTANCE_PATH": stack.enter_context(
                tempfile.TemporaryDirectory(prefix="ledger-load-")
            ),
        }

        def command(*args, stdin=None) -> str:
            return cli(url, *args, stdin=stdin, **env).stdout.strip()

        command("user", "add", EMAIL, "--password", "-", stdin=PASSWORD + "\n")
        tokens = [command("mint-token", EMAIL, "--label", f"load{k}") for k in range(clients)]
        server = Service(url, port=port, **env).start()
        stack.callback(server.stop)
        account_ids = []
        for name, kind in ACCOUNTS:
            conn = http.client.HTTPConnection(HOST, port, timeout=30)
            conn.request(
                "POST",
                "/accounts",
                json.dumps({"name": name, "kind": kind}),
                {"Authorization": f"Bearer {tokens[0]}", "Content-Type": "application/json"},
            )
            account_ids.append(json.loads(conn.getresponse().read())["id"])
            conn.close()
        grants = oauth_grants(url, origin, clients)

        results = Results()
        budget = Budget(requests)
        began = time.monotonic()
        workers = [
            Client(
                k, port, tokens[k], grants[k], account_ids, began + seconds, budget, results, seed
            )
            for k in range(clients)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=seconds + 120)
        elapsed = time.monotonic() - began
        hung = sum(w.is_alive() for w in workers)
        acknowledged = {i for w in workers for i in w.acknowledged}
        problems = check_books(url, acknowledged)
        if hung:
            problems.append(f"{hung} clients still waiting after the time limit")
        server_errors, first_error = server.errors_logged()

    every = [s for values in results.latency.values() for s in values]
    return {
        "dialect": dialect,
        "clients": clients,
        "waitress_threads": 8,
        "seconds": round(elapsed, 1),
        "requests": len(every),
        "requests_per_second": round(len(every) / elapsed, 1),
        "p50_ms": round(percentile(every, 0.50) * 1000, 1),
        "p99_ms": round(percentile(every, 0.99) * 1000, 1),
        "by_kind": {
            kind: {
                "requests": len(v),
                "p50_ms": round(percentile(v, 0.5) * 1000, 1),
                "p99_ms": round(percentile(v, 0.99) * 1000, 1),
                "mean_ms": round(statistics.fmean(v) * 1000, 1),
            }
            for kind, v in sorted(results.latency.items())
        },
        "errors": sum(results.errors.values()),
        "error_kinds": results.errors,
        "server_errors_logged": server_errors,
        "first_server_error": first_error[-1500:] or None,
        "acknowledged_postings": len(acknowledged),
        "books": problems or "every acknowledged posting stored, complete and balanced",
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.splitlines()[0])
    p.add_argument("--dialect", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20.0, help="stop after this long")
    p.add_argument("--requests", type=int, default=20_000, help="stop after this many requests")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--admin-url", default=PG_ADMIN_URL)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    report = run(args.dialect, args.clients, args.seconds, args.requests, args.seed, args.admin_url)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    ok = (
        report["errors"] == 0
        and report["server_errors_logged"] == 0
        and isinstance(report["books"], str)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
