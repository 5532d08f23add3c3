"""bank_ref_once: one bank line booked once, a unique key on the entries' bank references

`entries` (account_id, bank_ref, amount_cents) is unique where bank_ref is not null
(`uq_entries_bank_ref`, partial on both stores): an account's entries hold one bank
reference with one amount at most once, so two requests posting or matching the same
bank line at once (two statements of one file) cannot both book it; the one that
loses is refused (docs/statements.md, "Acting on the lines"). It replaces 0020's
`ix_entries_bank_ref` (account_id, bank_ref), whose look-ups it serves as well.

Entries legitimately sharing a reference: none. A correction gives the original's
reference to the replacement and deletes the original in the same unit of work (the
original gives it up first); a deleted transaction takes its entries along; a file
listing one bank line twice is refused on its second line. Rows that already collide
can only come from the race this closes: in each (account, reference, amount) the
entry of the lowest transaction id (then entry id) keeps the reference (the one a
later upload named as the `duplicate`); the others keep their cleared mark and lose
the reference, each logged as a warning naming its transaction, so the doubled booking
can be found and deleted. `serve` writes a backup before it migrates books
(docs/export-import-backup.md), which keeps them as they were.

The downgrade puts 0020's index back; references taken off stay off.

Revision ID: 0021_bank_ref_once
Revises: 0020_statements
"""

import logging

import sqlalchemy as sa
from alembic import op

revision = "0021_bank_ref_once"
down_revision = "0020_statements"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")

_CHUNK = 900  # ids per IN list (SQLite's oldest parameter limit is 999)

# Each entry holding a reference and amount that an entry of a lower transaction id
# (or of the same transaction and a lower id) of the same account holds too.
_COLLIDING = sa.text(
    """
    SELECT e.id, e.transaction_id, e.account_id, e.bank_ref, e.amount_cents,
           (SELECT min(k.transaction_id) FROM entries k
            WHERE k.account_id = e.account_id AND k.bank_ref = e.bank_ref
              AND k.amount_cents = e.amount_cents) AS keeper
    FROM entries e
    WHERE e.bank_ref IS NOT NULL AND EXISTS (
        SELECT 1 FROM entries k
        WHERE k.account_id = e.account_id AND k.bank_ref = e.bank_ref
          AND k.amount_cents = e.amount_cents
          AND (k.transaction_id < e.transaction_id
               OR (k.transaction_id = e.transaction_id AND k.id < e.id)))
    ORDER BY e.id
    """
)


def upgrade():
    connection = op.get_bind()
    colliding = connection.execute(_COLLIDING).all()
    for entry_id, tx_id, account_id, ref, cents, keeper in colliding:
        log.warning(
            "0021: entry %s of transaction %s (account %s, %s cents) gives up bank "
            "reference %r, which transaction %s holds: the same bank line booked twice; "
            "delete the transaction booked twice (docs/statements.md)",
            entry_id,
            tx_id,
            account_id,
            cents,
            ref,
            keeper,
        )
    ids = [row[0] for row in colliding]
    release = sa.text("UPDATE entries SET bank_ref = NULL WHERE id IN :ids").bindparams(
        sa.bindparam("ids", expanding=True)
    )
    for i in range(0, len(ids), _CHUNK):
        connection.execute(release, {"ids": ids[i : i + _CHUNK]})
    if ids and connection.dialect.name == "postgresql":
        # The balance re-check (0001's deferred constraint trigger) queued by those
        # updates runs now (they change no amount), so the index may be built: PostgreSQL
        # builds none on a table with trigger events pending. Deferred again afterwards.
        op.execute("SET CONSTRAINTS entries_balance IMMEDIATE")
        op.execute("SET CONSTRAINTS entries_balance DEFERRED")
    op.drop_index("ix_entries_bank_ref", table_name="entries")
    op.create_index(
        "uq_entries_bank_ref",
        "entries",
        ["account_id", "bank_ref", "amount_cents"],
        unique=True,
        postgresql_where=sa.text("bank_ref IS NOT NULL"),
        sqlite_where=sa.text("bank_ref IS NOT NULL"),
    )


def downgrade():
    op.drop_index("uq_entries_bank_ref", table_name="entries")
    op.create_index(
        "ix_entries_bank_ref",
        "entries",
        ["account_id", "bank_ref"],
        postgresql_where=sa.text("bank_ref IS NOT NULL"),
        sqlite_where=sa.text("bank_ref IS NOT NULL"),
    )
