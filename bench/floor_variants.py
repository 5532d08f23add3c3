"""Where the gap to the stack's floor goes: the service with ONE guarantee or layer
removed, against the floor of its own stack in the same run.

    python -m bench.floor_variants run --stack-floor PATH/stack_floor.py \
        [--exe .venv/bin/ledger-service] [--variants ours,no-audit,...] \
        [--rounds 4] [--seconds 3] [--dialects sqlite,postgresql]

PATH/stack_floor.py is the floor benchmark (`stack_floor.py compare EXE`: the service
beside the least a correct double-entry posting costs on Flask + waitress + SQLAlchemy
Core + the driver, alternated rounds from one client; docs/performance.md, "The write
path against its own stack's floor, and reports at 1M (issue 39)"). For each variant
this makes a throwaway `ledger-service` (a two-line script in a temporary folder,
beside a `python` script that runs the venv's, so that the floor runs on the same
interpreter) that boots the checkout with the
variant applied in memory, then runs stack_floor's compare against it. Nothing of a
variant is ever written to the checkout: each is a patch applied at boot (a function
replaced) or, for what the database keeps by trigger or index, DDL run on the
benchmark's own throwaway database right after `serve` migrated it.

Every variant except `ours` breaks a guarantee the service keeps (or drops a layer it
needs): they exist only to measure what each costs. Prints one row per variant: the
median share of the floor per store, its range, and the difference from `ours` in the
same run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

VARIANTS = {
    "ours": "the service as it is (the control)",
    "no-audit": "no audit event (SQLite: no INSERT into the chain; PostgreSQL: no pending "
    "event in the posting's statement, no seal)",
    "no-derived": "no day and month balances (their triggers dropped)",
    "no-search": "no description index (SQLite: the FTS trigger, which also keeps the words "
    "table, dropped; PostgreSQL: the trigram and the words indexes dropped)",
    "no-recheck": "no balance re-check at commit (SQLite: the pending triggers dropped and "
    "the pre-commit DELETE skipped; PostgreSQL: the constraint triggers dropped)",
    "no-lock-archived": "the header inserted without reading the lock date or checking the "
    "accounts are open (the ownership check stays, as the floor has it)",
    "no-idempotency": "the view calls the posting directly (no Idempotency-Key handling)",
    "no-schedules": "no read of the schedules a posting may meet (schedule_meeting.candidates "
    "answers none without asking the database)",
    "no-hooks": "no after-request headers (nosniff, Vary, CORS) and no actor reset at teardown",
    "floor-ish": "all of the above at once",
}


# ---------------------------------------------------------------- the variants (boot)
def _drop_objects(patterns: list[str], pg_indexes: tuple[str, ...] = ()) -> None:
    """Drop the triggers whose names contain one of patterns (and pg_indexes) on the
    app's database: the benchmark's throwaway one."""
    from sqlalchemy import text

    from app.extensions import db

    with db.engine.begin() as conn:
        if conn.dialect.name == "sqlite":
            names = conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
            for (name,) in list(names):
                if any(p in name for p in patterns):
                    conn.execute(text(f'DROP TRIGGER "{name}"'))
        else:
            rows = conn.execute(
                text(
                    "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c "
                    "ON c.oid = t.tgrelid WHERE NOT t.tgisinternal"
                )
            )
            for name, table in list(rows):
                if any(p in name for p in patterns):
                    conn.execute(text(f'DROP TRIGGER "{name}" ON "{table}"'))
            for index in pg_indexes:
                conn.execute(text(f"DROP INDEX IF EXISTS {index}"))


def _after_migration(step) -> None:
    """Run step() once `serve` has migrated its database (inside its app context)."""
    from app.cli import serve

    upgrade = serve.upgrade_schema

    def upgraded(*args, **kwargs):
        result = upgrade(*args, **kwargs)
        step()
        return result

    serve.upgrade_schema = upgraded


def _retext(old, sql: str):
    """old's text() statement with new SQL, keeping the typed parameters still in it."""
    new = old.__class__(sql)
    kept = [b for k, b in old._bindparams.items() if k in new._bindparams]
    return new.bindparams(*kept)


def _no_audit() -> None:
    from app.services.ledger import audit, transactions

    transactions.audit.record = lambda action, obj: None
    audit.pending = lambda connection, pending_id: None
    sql = transactions._INSERT_CHECKED.text
    cut = sql.index("    event AS (")
    end = sql.index(")", sql.index("RETURNING id", cut)) + 1
    transactions._INSERT_CHECKED = _retext(
        transactions._INSERT_CHECKED,
        sql[:cut] + "    event AS (SELECT CAST(NULL AS bigint) AS id FROM obj)" + sql[end:],
    )


def _no_derived() -> None:
    _after_migration(lambda: _drop_objects(["derived"]))


def _no_search() -> None:
    indexes = ("ix_transactions_description_trgm", "ix_transactions_description_words")
    _after_migration(lambda: _drop_objects(["search"], indexes))


def _no_schedules() -> None:
    from app.services.ledger import schedule_meeting

    schedule_meeting.candidates = lambda entries: []


def _no_recheck() -> None:
    from app.store import sqlite

    sqlite._check_sqlite_balance = lambda session: None
    _after_migration(lambda: _drop_objects(["balance"]))


def _no_lock_archived() -> None:
    from app import store
    from app.services.ledger import transactions

    old = transactions._INSERT_CHECKED_SQLITE.statement
    sql = old.text.replace("AND NOT archived)", ")")
    sql = re.sub(r"AND NOT EXISTS \(SELECT 1 FROM settings WHERE [^)]*\)", "", sql)
    transactions._INSERT_CHECKED_SQLITE = store.FixedStatement(_retext(old, sql))
    old = transactions._INSERT_CHECKED
    sql = old.text.replace(" AND NOT archived", "").replace(
        "AND NOT EXISTS (SELECT 1 FROM books WHERE locked_through >= :occurred_on)", ""
    )
    sql = sql.replace("SELECT locked_through FROM settings WHERE id = 1 FOR KEY SHARE", "SELECT 1")
    sql = sql.replace("FOR SHARE) AS usable", ") AS usable")
    transactions._INSERT_CHECKED = _retext(old, sql)


def _no_idempotency() -> None:
    from flask import jsonify

    from app.routes import support, transactions

    def created(operation, body, fn, *args):
        response = jsonify(fn(*args))
        response.status_code = 201
        return response

    support.created_once = created
    transactions.created_once = created


def _no_hooks() -> None:
    from app import extensions, routes
    from app.routes import support

    routes.common_headers = lambda response: response
    routes.forget_principal = lambda _error=None: None
    support.common_headers = routes.common_headers
    extensions.cors.init_app = lambda app, **kwargs: None


PATCHES = {
    "no-audit": [_no_audit],
    "no-derived": [_no_derived],
    "no-search": [_no_search],
    "no-recheck": [_no_recheck],
    "no-lock-archived": [_no_lock_archived],
    "no-idempotency": [_no_idempotency],
    "no-schedules": [_no_schedules],
    "no-hooks": [_no_hooks],
}


def _floorish() -> None:
    # each DDL variant wraps serve's upgrade in turn: all of them run after it
    for steps in list(PATCHES.values()):
        for step in steps:
            if step is not _floorish:
                step()


PATCHES["floor-ish"] = [_floorish]


def boot(variant: str, argv: list[str]) -> None:
    for step in PATCHES.get(variant, []):
        step()
    from app.cli import cli

    cli.main(args=argv, prog_name="ledger-service")


# ---------------------------------------------------------------- the comparison (run)
ROUND = re.compile(r"^(\w+) round \d+: ours (\d+)/s, floor (\d+)/s, share ([\d.]+)")


def run_variant(variant: str, a) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"floor-variant-{variant}-"))
    exe = Path(a.exe).resolve()
    script = work / "ledger-service"
    script.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="{ROOT}" exec "{exe.parent / "python"}" -m bench.floor_variants '
        f'boot {variant} "$@"\n'
    )
    script.chmod(0o755)
    # the floor runs with "the python beside EXE": the venv's own (a link would not
    # find the venv's pyvenv.cfg)
    py = work / "python"
    py.write_text(f'#!/bin/sh\nexec "{exe.parent / "python"}" "$@"\n')
    py.chmod(0o755)
    cmd = [sys.executable, a.stack_floor, "compare", str(script), "--rounds", str(a.rounds)]
    cmd += ["--seconds", str(a.seconds), "--dialects", a.dialects]
    load = os.getloadavg()[0]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    rounds: dict[str, list[tuple[int, int, float]]] = {}
    for line in out.splitlines():
        m = ROUND.match(line)
        if m:
            rounds.setdefault(m[1], []).append((int(m[2]), int(m[3]), float(m[4])))
    if not rounds:
        print(out, file=sys.stderr)
    return {"rounds": rounds, "load": (load + os.getloadavg()[0]) / 2}


def run(a) -> int:
    names = a.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    results = {}
    for name in names:
        results[name] = r = run_variant(name, a)
        for dialect, rs in r["rounds"].items():
            shares = [s for _, _, s in rs]
            print(
                f"{name} {dialect}: share {statistics.median(shares):.3f} "
                f"({min(shares):.2f}-{max(shares):.2f}), ours "
                f"{statistics.median(o for o, _, _ in rs):.0f}/s, floor "
                f"{statistics.median(f for _, f, _ in rs):.0f}/s, load {r['load']:.1f}",
                flush=True,
            )
    dialects = a.dialects.split(",")
    print()
    print(
        "| Variant | " + " | ".join(f"{d} share (range) | vs ours" for d in dialects) + " | load |"
    )
    print("|---|" + "---|---|" * len(dialects) + "---|")
    base = {}
    for name in names:
        cells = []
        for d in dialects:
            rs = results[name]["rounds"].get(d)
            if not rs:
                cells += ["not measured", ""]
                continue
            shares = [s for _, _, s in rs]
            med = statistics.median(shares)
            base.setdefault(d, med if name == "ours" else None)
            ref = base.get(d)
            delta = "" if ref is None or name == "ours" else f"{med - ref:+.3f}"
            cells += [f"{med:.3f} ({min(shares):.2f}-{max(shares):.2f})", delta]
        print(
            f"| {name}: {VARIANTS[name]} | "
            + " | ".join(cells)
            + f" | {results[name]['load']:.1f} |"
        )
    return 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "boot":
        boot(sys.argv[2], sys.argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--stack-floor", required=True, help="the floor benchmark, stack_floor.py")
    r.add_argument("--exe", default=str(ROOT / ".venv" / "bin" / "ledger-service"))
    r.add_argument("--variants", default=",".join(VARIANTS))
    r.add_argument("--rounds", type=int, default=4)
    r.add_argument("--seconds", type=float, default=3)
    r.add_argument("--dialects", default="sqlite,postgresql")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
