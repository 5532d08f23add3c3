"""posting triggers: the same checks and derived balances for less of the server's work

PostgreSQL only (issue 30; docs/performance.md, "Fourth pass"). A posting fires two
kinds of trigger that 0001 and 0002 wrote, and each did more than its rule needs:

1. The balance check (deferred to COMMIT; 0001's ledger_assert_balanced, called once for
   the new header and once per entry). It first asked whether the transaction still
   exists, then counted and summed its entries: two lookups per call. Now the count
   and sum come first, and the existence question is asked only when they fail (an
   entry's transaction always exists: entries reference it and go with it, so a
   transaction whose entries balance needs no second lookup). Same rule, same error
   (P0001, the same message), same outcome for a deleted transaction.
2. The derived balances (0002's ledger_derived_entries, once per statement on
   entries). It ran two upserts, each joining the statement's entries to their
   transactions and grouping them again: one for account_day_balances, one for
   account_month_balances. Now one statement does both: the entries joined and
   summed per (day, account) once (a materialised CTE), the day upsert a CTE of it,
   the month upsert summing those day sums. Same rows, same sums (a month's sum of
   the day sums is the month's sum), the same upserts in the same order (rows locked
   in key order, as before), the same 64-bit range errors.

The row triggers on transactions (a deletion, a moved date) are unchanged.
Downgrade: 0001's and 0002's functions as they were.

Revision ID: 0018_posting_triggers
Revises: 0017_search_batches
"""

from alembic import context, op

revision = "0018_posting_triggers"
down_revision = "0017_search_batches"
branch_labels = None
depends_on = None

ASSERT_BALANCED = """
CREATE OR REPLACE FUNCTION ledger_assert_balanced(tx_id bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
    total numeric;
BEGIN
    SELECT count(*), coalesce(sum(amount_cents), 0) INTO n, total
      FROM entries WHERE transaction_id = tx_id;
    IF n >= 2 AND total = 0 THEN
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM transactions WHERE id = tx_id) THEN
        RETURN;  -- the whole transaction was deleted
    END IF;
    RAISE EXCEPTION 'transaction % does not balance (% entries, sum %)', tx_id, n, total
        USING ERRCODE = 'P0001';
END;
$$
"""


def _both_upserts(source: str) -> str:
    """ONE statement applying `source` (rows: account_id, day, cents) to the day and the
    month table."""
    return f"""
        WITH d AS MATERIALIZED (
            SELECT s.day, s.account_id, sum(s.cents) AS cents FROM ({source}) AS s
            GROUP BY s.day, s.account_id
        ), by_day AS (
            INSERT INTO account_day_balances AS b (day, account_id, cents)
            SELECT d.day, d.account_id, d.cents FROM d ORDER BY d.day, d.account_id
            ON CONFLICT (day, account_id) DO UPDATE SET cents = b.cents + EXCLUDED.cents
        )
        INSERT INTO account_month_balances AS b (month, account_id, cents)
        SELECT date_trunc('month', d.day)::date AS m, d.account_id, sum(d.cents) FROM d
        GROUP BY m, d.account_id ORDER BY m, d.account_id
        ON CONFLICT (month, account_id) DO UPDATE SET cents = b.cents + EXCLUDED.cents;"""


_NEW = """SELECT n.account_id, t.occurred_on AS day, n.amount_cents AS cents
          FROM new_entries n JOIN transactions t ON t.id = n.transaction_id"""
_OLD = """SELECT o.account_id, t.occurred_on AS day, -o.amount_cents AS cents
          FROM old_entries o JOIN transactions t ON t.id = o.transaction_id"""

DERIVED_ENTRIES = f"""
CREATE OR REPLACE FUNCTION ledger_derived_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_both_upserts(_NEW)}
    ELSIF TG_OP = 'DELETE' THEN
        {_both_upserts(_OLD)}
    ELSE
        {_both_upserts(_OLD + " UNION ALL " + _NEW)}
    END IF;
    RETURN NULL;
END;
$$
"""


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(ASSERT_BALANCED)
        op.execute(DERIVED_ENTRIES)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        initial = _migration("0001")
        day_balances = _migration("0002_issue7_day_balances")
        op.execute(_or_replace(initial.PG_FUNCTIONS[0]))
        op.execute(_or_replace(day_balances.PG_STATEMENTS[0]))


def _or_replace(sql: str) -> str:
    return sql.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def _migration(revision: str):
    """An earlier migration's module, as Alembic loaded it (its SQL as it was written)."""
    return context.script.get_revision(revision).module
