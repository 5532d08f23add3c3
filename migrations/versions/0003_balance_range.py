"""derived balances stay 64-bit integers: SQLite refuses an overflow instead of storing REAL

On SQLite, `cents + excluded.cents` that leaves the signed 64-bit range silently becomes
a floating-point value, and the reports built on it lose cents. These triggers make such
a write fail (RAISE ABORT, an integrity error the service answers with 400) as
PostgreSQL already does (bigint out of range, SQLSTATE 22003).

Revision ID: 0003_balance_range
Revises: 0002_issue7_day_balances
"""

from alembic import op

revision = "0003_balance_range"
down_revision = "0002_issue7_day_balances"
branch_labels = None
depends_on = None

MESSAGE = "balance out of 64-bit range"
TABLES = ("account_day_balances", "account_month_balances")


def upgrade():
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        for event in ("INSERT", "UPDATE"):
            op.execute(
                f"""CREATE TRIGGER {table}_{event.lower()}_range BEFORE {event} ON {table}
                WHEN typeof(NEW.cents) <> 'integer'
                BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"""
            )


def downgrade():
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        for event in ("insert", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_{event}_range")
