"""audit trail: audit_events (append-only, hash-chained) and audit_head; backfill

Books that exist before the trail get their history as events here, so that
`ledger-service verify` holds from the first day: one account.created per account
(by id), one settings.changed when the book style is not the starting `personal`,
then one transaction.posted per transaction (by id, entries by id). Every backfilled
event is recorded as the migration that wrote it: `at` = when the migration ran,
via `cli`, no user, no client (the transactions keep their own author and
created_at in the ledger). The events hash exactly as the service's own
(app.services.ledger.audit: the one copy of CONTRACT's hash rule).

Big books are read in batches of BATCH transactions (keyset on id, entries by a
range of transaction ids), so memory stays flat; both dialects run the same code.

Revision ID: 0007_audit_trail
Revises: 0005_device_starts
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from app.services.ledger.audit import GENESIS, canonical, chain, event_text, transaction_object

revision = "0007_audit_trail"
down_revision = "0006_cimd_client_ids"
branch_labels = None
depends_on = None

BATCH = 2000
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade():
    op.create_table(
        "audit_events",
        sa.Column("seq", BigId, autoincrement=False, nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("user_email", sa.String(length=254), nullable=True),
        sa.Column("via", sa.String(length=16), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=True),
        sa.Column("client_name", sa.String(length=200), nullable=True),
        sa.Column("object", sa.Text(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_events")),
    )
    op.create_index("ix_audit_events_at_seq", "audit_events", ["at", "seq"])
    op.create_index("ix_audit_events_action_seq", "audit_events", ["action", "seq"])
    op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", BigId, nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_audit_head_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_head")),
    )
    backfill(op.get_bind())
    if op.get_bind().dialect.name == "sqlite":
        op.execute(SQLITE_HEAD_TRIGGER)


# SQLite: the head follows every appended event (services/ledger/audit/writing.py appends in
# one INSERT; PostgreSQL moves the head in the same statement instead).
SQLITE_HEAD_TRIGGER = """
CREATE TRIGGER audit_events_head AFTER INSERT ON audit_events BEGIN
    UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash WHERE id = 1;
END
"""


def downgrade():
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS audit_events_head")
    op.drop_table("audit_head")
    op.drop_index("ix_audit_events_action_seq", table_name="audit_events")
    op.drop_index("ix_audit_events_at_seq", table_name="audit_events")
    op.drop_table("audit_events")


EVENTS = sa.table(
    "audit_events",
    sa.column("seq", sa.BigInteger),
    sa.column("at", sa.DateTime),
    sa.column("action", sa.String),
    sa.column("user_email", sa.String),
    sa.column("via", sa.String),
    sa.column("client_id", sa.String),
    sa.column("client_name", sa.String),
    sa.column("object", sa.Text),
    sa.column("hash", sa.String),
)


class _Writer:
    """Chains and inserts backfilled events in batches."""

    def __init__(self, conn):
        self.conn = conn
        self.at = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
        self.at_text = self.at.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.seq = 0
        self.hash = GENESIS
        self.rows: list[dict] = []

    def add(self, action: str, obj: dict) -> None:
        self.seq += 1
        object_text = canonical(obj)
        event = event_text(self.seq, self.at_text, action, None, "cli", None, None, object_text)
        self.hash = chain(self.hash, event)
        self.rows.append(
            {
                "seq": self.seq,
                "at": self.at,
                "action": action,
                "user_email": None,
                "via": "cli",
                "client_id": None,
                "client_name": None,
                "object": object_text,
                "hash": self.hash,
            }
        )
        if len(self.rows) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.conn.execute(EVENTS.insert(), self.rows)
            self.rows = []


def backfill(conn) -> None:
    writer = _Writer(conn)
    for account_id, name, kind in conn.execute(
        sa.text("SELECT id, name, kind FROM accounts ORDER BY id")
    ).all():
        writer.add(
            "account.created",
            {"account": {"id": account_id, "name": name, "kind": kind, "archived": False}},
        )
    style = conn.execute(sa.text("SELECT book_style FROM settings WHERE id = 1")).scalar()
    if style is not None and style != "personal":
        writer.add("settings.changed", {"settings": {"book_style": style}})
    after = None
    while True:
        where = "" if after is None else "WHERE id > :after "
        headers = conn.execute(
            sa.text(
                "SELECT id, occurred_on, description FROM transactions "
                f"{where}ORDER BY id LIMIT {BATCH}"
            ),
            {"after": after},
        ).all()
        if not headers:
            break
        first, last = headers[0][0], headers[-1][0]
        entries: dict[int, list] = {}
        for tx_id, entry_id, account_id, cents in conn.execute(
            sa.text(
                "SELECT transaction_id, id, account_id, amount_cents FROM entries "
                "WHERE transaction_id BETWEEN :first AND :last ORDER BY transaction_id, id"
            ),
            {"first": first, "last": last},
        ):
            entries.setdefault(tx_id, []).append((entry_id, account_id, cents))
        for tx_id, occurred_on, description in headers:
            writer.add(
                "transaction.posted",
                transaction_object(tx_id, occurred_on, description, entries.get(tx_id, [])),
            )
        after = last
    writer.flush()
    if writer.seq:
        conn.execute(
            sa.text("INSERT INTO audit_head (id, seq, hash) VALUES (1, :seq, :hash)"),
            {"seq": writer.seq, "hash": writer.hash},
        )
