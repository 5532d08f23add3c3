"""books_currency: the books' currency on the settings row

`settings.currency` (three capital letters, an ISO 4217 code; null until a person sets
it with PUT /books/currency): the commodity the exports write (docs/ledger.md, "The
books' currency"). Null keeps what the exports wrote before: USD.

The downgrade drops the column (and with it the currency set).

Revision ID: 0023_books_currency
Revises: 0022_statement_payee_hash
"""

import sqlalchemy as sa
from alembic import op

revision = "0023_books_currency"
down_revision = "0022_statement_payee_hash"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("settings", sa.Column("currency", sa.String(3), nullable=True))


def downgrade():
    # Plain DROP COLUMN on both stores (SQLite >= 3.35), as 0008 does: a batch copy of
    # the settings table could lose its CHECK constraints.
    op.execute("ALTER TABLE settings DROP COLUMN currency")
