"""derived balances: per-account per-day and per-month sums kept by triggers

Revision ID: 0002_issue7_day_balances
Revises: 0001
Create Date: 2026-11-21 07:00:00

Reports read these two tables instead of scanning the entries (see
services/ledger/reports.py). Both are DERIVED: every figure in them is the sum of
entries.amount_cents grouped by (account, transactions.occurred_on) or by
(account, first day of that month). The rule lives here, in triggers, so that no
write path (the service, an import, a restore, hand-written SQL) can skip it,
and it runs inside the same database transaction as the posting or deletion.

Which trigger handles what:
- an entry inserted, deleted or updated: add / subtract its amount at its
  transaction's date (deleted entries whose transaction is already gone are
  skipped: the transaction trigger below has subtracted them);
- a transaction deleted (its entries then go by ON DELETE CASCADE): a BEFORE
  DELETE trigger subtracts its entries while they are still visible;
- a transaction's occurred_on changed: its entries move from the old day to the new.

Rows whose sum returns to 0 are kept (deleting them would only add work and
churn); readers and `ledger-service check` treat a missing row as 0.

PostgreSQL: statement-level triggers with transition tables on entries, so one
INSERT of n entries does one upsert per table; every upsert is INSERT ... ON
CONFLICT DO UPDATE (safe under concurrency) and visits rows in one global order
(day or month, then account), so two postings never lock the same rows in
opposite orders (no deadlocks). SQLite: row triggers with UPSERT (one writer at
a time, so no ordering concern).
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_issue7_day_balances"
down_revision = "0001"
branch_labels = None
depends_on = None

TABLES = (("account_day_balances", "day"), ("account_month_balances", "month"))


def upgrade():
    for table, key in TABLES:
        op.create_table(
            table,
            sa.Column(key, sa.Date(), nullable=False),
            sa.Column("account_id", sa.Integer(), nullable=False),
            sa.Column("cents", sa.BigInteger(), nullable=False),
            sa.ForeignKeyConstraint(
                ["account_id"],
                ["accounts.id"],
                name=op.f(f"fk_{table}_account_id_accounts"),
                ondelete="CASCADE",
            ),
            # (date, account) order serves date-range reads directly and is the
            # one lock order of the PostgreSQL upserts.
            sa.PrimaryKeyConstraint(key, "account_id", name=op.f(f"pk_{table}")),
            sqlite_with_rowid=False,
        )
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for statement in PG_STATEMENTS:
            op.execute(statement)
    else:
        for statement in SQLITE_STATEMENTS:
            op.execute(statement)
    for statement in BACKFILL[dialect]:
        op.execute(statement)


def downgrade():
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for statement in PG_DROP:
            op.execute(statement)
    else:
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_table("account_month_balances")
    op.drop_table("account_day_balances")


# --- PostgreSQL ---------------------------------------------------------------

PG_MONTH = "date_trunc('month', {})::date"


def _pg_upserts(source: str) -> str:
    """Two upserts applying `source` (rows: account_id, day, cents) to both tables."""
    day = f"""
        INSERT INTO account_day_balances AS b (day, account_id, cents)
        SELECT d.day, d.account_id, sum(d.cents) FROM ({source}) AS d
        GROUP BY d.day, d.account_id ORDER BY d.day, d.account_id
        ON CONFLICT (day, account_id) DO UPDATE SET cents = b.cents + EXCLUDED.cents;"""
    month = f"""
        INSERT INTO account_month_balances AS b (month, account_id, cents)
        SELECT {PG_MONTH.format("d.day")} AS m, d.account_id, sum(d.cents)
        FROM ({source}) AS d
        GROUP BY m, d.account_id ORDER BY m, d.account_id
        ON CONFLICT (month, account_id) DO UPDATE SET cents = b.cents + EXCLUDED.cents;"""
    return day + month


_NEW = """SELECT n.account_id, t.occurred_on AS day, n.amount_cents AS cents
          FROM new_entries n JOIN transactions t ON t.id = n.transaction_id"""
_OLD = """SELECT o.account_id, t.occurred_on AS day, -o.amount_cents AS cents
          FROM old_entries o JOIN transactions t ON t.id = o.transaction_id"""

PG_STATEMENTS = (
    f"""
    CREATE FUNCTION ledger_derived_entries() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            {_pg_upserts(_NEW)}
        ELSIF TG_OP = 'DELETE' THEN
            {_pg_upserts(_OLD)}
        ELSE
            {_pg_upserts(_OLD + " UNION ALL " + _NEW)}
        END IF;
        RETURN NULL;
    END;
    $$
    """,
    f"""
    CREATE FUNCTION ledger_derived_transaction_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        {
        _pg_upserts('''SELECT e.account_id, OLD.occurred_on AS day, -e.amount_cents AS cents
                        FROM entries e WHERE e.transaction_id = OLD.id''')
    }
        RETURN OLD;
    END;
    $$
    """,
    f"""
    CREATE FUNCTION ledger_derived_transaction_move() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        {
        _pg_upserts('''SELECT e.account_id, OLD.occurred_on AS day, -e.amount_cents AS cents
                        FROM entries e WHERE e.transaction_id = OLD.id
                        UNION ALL
                        SELECT e.account_id, NEW.occurred_on AS day, e.amount_cents AS cents
                        FROM entries e WHERE e.transaction_id = NEW.id''')
    }
        RETURN NULL;
    END;
    $$
    """,
    """CREATE TRIGGER entries_derived_insert AFTER INSERT ON entries
       REFERENCING NEW TABLE AS new_entries
       FOR EACH STATEMENT EXECUTE FUNCTION ledger_derived_entries()""",
    """CREATE TRIGGER entries_derived_delete AFTER DELETE ON entries
       REFERENCING OLD TABLE AS old_entries
       FOR EACH STATEMENT EXECUTE FUNCTION ledger_derived_entries()""",
    """CREATE TRIGGER entries_derived_update AFTER UPDATE ON entries
       REFERENCING OLD TABLE AS old_entries NEW TABLE AS new_entries
       FOR EACH STATEMENT EXECUTE FUNCTION ledger_derived_entries()""",
    """CREATE TRIGGER transactions_derived_delete BEFORE DELETE ON transactions
       FOR EACH ROW EXECUTE FUNCTION ledger_derived_transaction_delete()""",
    """CREATE TRIGGER transactions_derived_move AFTER UPDATE OF occurred_on ON transactions
       FOR EACH ROW WHEN (OLD.occurred_on IS DISTINCT FROM NEW.occurred_on)
       EXECUTE FUNCTION ledger_derived_transaction_move()""",
)

PG_DROP = (
    "DROP TRIGGER IF EXISTS transactions_derived_move ON transactions",
    "DROP TRIGGER IF EXISTS transactions_derived_delete ON transactions",
    "DROP TRIGGER IF EXISTS entries_derived_update ON entries",
    "DROP TRIGGER IF EXISTS entries_derived_delete ON entries",
    "DROP TRIGGER IF EXISTS entries_derived_insert ON entries",
    "DROP FUNCTION IF EXISTS ledger_derived_transaction_move()",
    "DROP FUNCTION IF EXISTS ledger_derived_transaction_delete()",
    "DROP FUNCTION IF EXISTS ledger_derived_entries()",
)


# --- SQLite -------------------------------------------------------------------

SQLITE_MONTH = "substr({}, 1, 8) || '01'"


def _sqlite_upserts(account: str, day: str, cents: str, source: str) -> str:
    """Two UPSERTs adding `cents` for (account, day) from `source` (FROM ... WHERE ...)."""
    # The WHERE in `source` is required: it disambiguates UPSERT after a SELECT.
    return f"""
        INSERT INTO account_day_balances (day, account_id, cents)
        SELECT {day}, {account}, {cents} {source}
        ON CONFLICT (day, account_id) DO UPDATE SET cents = cents + excluded.cents;
        INSERT INTO account_month_balances (month, account_id, cents)
        SELECT {SQLITE_MONTH.format(day)}, {account}, {cents} {source}
        ON CONFLICT (month, account_id) DO UPDATE SET cents = cents + excluded.cents;"""


_TX_OF_NEW = "FROM transactions t WHERE t.id = NEW.transaction_id"
_TX_OF_OLD = "FROM transactions t WHERE t.id = OLD.transaction_id"
_ENTRIES_OF_OLD = "FROM entries e WHERE e.transaction_id = OLD.id GROUP BY e.account_id"
_ENTRIES_OF_NEW = "FROM entries e WHERE e.transaction_id = NEW.id GROUP BY e.account_id"

SQLITE_TRIGGERS = (
    "entries_derived_insert",
    "entries_derived_delete",
    "entries_derived_update",
    "transactions_derived_delete",
    "transactions_derived_move",
)

SQLITE_STATEMENTS = (
    f"""CREATE TRIGGER entries_derived_insert AFTER INSERT ON entries BEGIN
        {_sqlite_upserts("NEW.account_id", "t.occurred_on", "NEW.amount_cents", _TX_OF_NEW)}
    END""",
    f"""CREATE TRIGGER entries_derived_delete AFTER DELETE ON entries BEGIN
        {_sqlite_upserts("OLD.account_id", "t.occurred_on", "-OLD.amount_cents", _TX_OF_OLD)}
    END""",
    f"""CREATE TRIGGER entries_derived_update AFTER UPDATE ON entries BEGIN
        {_sqlite_upserts("OLD.account_id", "t.occurred_on", "-OLD.amount_cents", _TX_OF_OLD)}
        {_sqlite_upserts("NEW.account_id", "t.occurred_on", "NEW.amount_cents", _TX_OF_NEW)}
    END""",
    f"""CREATE TRIGGER transactions_derived_delete BEFORE DELETE ON transactions BEGIN
        {
        _sqlite_upserts("e.account_id", "OLD.occurred_on", "-sum(e.amount_cents)", _ENTRIES_OF_OLD)
    }
    END""",
    f"""CREATE TRIGGER transactions_derived_move AFTER UPDATE OF occurred_on ON transactions
        WHEN OLD.occurred_on IS NOT NEW.occurred_on BEGIN
        {
        _sqlite_upserts("e.account_id", "OLD.occurred_on", "-sum(e.amount_cents)", _ENTRIES_OF_OLD)
    }
        {_sqlite_upserts("e.account_id", "NEW.occurred_on", "sum(e.amount_cents)", _ENTRIES_OF_NEW)}
    END""",
)


# --- backfill from the entries already stored -----------------------------------


def _backfill(month_expr: str) -> tuple[str, str]:
    return (
        """INSERT INTO account_day_balances (day, account_id, cents)
           SELECT t.occurred_on, e.account_id, sum(e.amount_cents)
           FROM entries e JOIN transactions t ON t.id = e.transaction_id
           GROUP BY t.occurred_on, e.account_id
           ORDER BY t.occurred_on, e.account_id""",
        f"""INSERT INTO account_month_balances (month, account_id, cents)
           SELECT {month_expr.format("day")}, account_id, sum(cents)
           FROM account_day_balances
           GROUP BY {month_expr.format("day")}, account_id
           ORDER BY {month_expr.format("day")}, account_id""",
    )


BACKFILL = {"postgresql": _backfill(PG_MONTH), "sqlite": _backfill(SQLITE_MONTH)}
