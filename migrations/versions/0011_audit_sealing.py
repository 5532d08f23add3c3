"""audit sealing: concurrent changes no longer wait on the chain's head; audit client ids
as long as any client id

1. audit_pending and, on PostgreSQL, the function audit_seal(). A change writes its
   event into audit_pending in its own database transaction (no seq, no hash, no lock
   on the chain's head). audit_seal() moves every committed pending event into
   audit_events, in the order they were written, giving each the next seq and its
   hash (CONTRACT's rule, over the same bytes as app.services.ledger.audit.chain), and
   moves the head. It runs after every SEAL_EVERY-th change's COMMIT, in the same
   round trip ("COMMIT; SELECT audit_seal()", app/store/postgresql.py), and before
   anyone reads the trail (GET /audit, /audit/head, verify, backup). Before this, a
   change locked the head until its COMMIT had been flushed, so concurrent postings
   committed one at a time, and each paid for the head and the hash itself
   (docs/performance.md, "The audit trail's cost").

   audit_seal() takes no lock when nothing is pending; otherwise it locks the head
   row, so seals run one at a time and seq stays gapless, and only then reads the
   pending rows (PL/pgSQL takes a fresh snapshot per statement under READ COMMITTED),
   so a seal that waited sees what the seal before it did. audit_pending is a queue
   (every row is deleted soon after it is written), so it is only ever read in id
   order through its primary key: a sequential scan would read every row deleted
   since the last vacuum. The seal's commit does not wait for the WAL flush
   (synchronous_commit off for that transaction only): should a crash lose a seal,
   the pending rows it took are back and are sealed again, in the same order, to the
   same hashes. It never raises (an error is a server-log warning, the rows stay
   pending for the next seal): sent with a change's COMMIT, an error of its own could
   not be told apart from a failed commit.

   SQLite keeps appending to audit_events directly (one writer at a time, nothing to
   wait for); its audit_pending stays empty but for a restored backup (sealed by the
   restore, in Python: audit.seal_here).

2. audit_events.client_id widened to 2,000 characters (CLIENT_ID_LENGTH, migration
   0006): the trail was made with the old 64, so on PostgreSQL a change by a client
   whose id is a metadata document's URL longer than 64 characters failed.

Revision ID: 0011_audit_sealing
Revises: 0010_description_search
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_audit_sealing"
down_revision = "0010_description_search"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WIDE, NARROW = 2000, 64

# The event's canonical JSON is text_before_object || object || ',"seq":' || seq ||
# text_after_seq; its hash is sha256 hex of the previous hash's 64 characters and that.
AUDIT_SEAL = """
CREATE OR REPLACE FUNCTION audit_seal() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    head_seq bigint;
    head_hash text;
    sealed bigint := 0;
    batch integer;
    p record;
BEGIN
    PERFORM 1 FROM audit_pending ORDER BY id LIMIT 1;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);
    BEGIN
        SELECT seq, hash INTO head_seq, head_hash FROM audit_head WHERE id = 1 FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO audit_head (id, seq, hash)
            SELECT 1, COALESCE(max(seq), 0),
                   COALESCE((SELECT hash FROM audit_events ORDER BY seq DESC LIMIT 1),
                            repeat('0', 64))
            FROM audit_events
            ON CONFLICT (id) DO NOTHING;
            SELECT seq, hash INTO head_seq, head_hash FROM audit_head WHERE id = 1 FOR UPDATE;
        END IF;
        LOOP
            batch := 0;
            FOR p IN SELECT * FROM audit_pending ORDER BY id LIMIT 1000 LOOP
                head_seq := head_seq + 1;
                head_hash := encode(sha256(convert_to(
                    head_hash || p.text_before_object || p.object || ',"seq":'
                    || head_seq::text || p.text_after_seq, 'UTF8')), 'hex');
                INSERT INTO audit_events
                    (seq, at, action, user_email, via, client_id, client_name, object, hash)
                VALUES (head_seq, p.at, p.action, p.user_email, p.via, p.client_id,
                        p.client_name, p.object, head_hash);
                DELETE FROM audit_pending WHERE id = p.id;
                batch := batch + 1;
            END LOOP;
            sealed := sealed + batch;
            EXIT WHEN batch < 1000;
        END LOOP;
        IF sealed > 0 THEN
            UPDATE audit_head SET seq = head_seq, hash = head_hash WHERE id = 1;
        END IF;
        RETURN sealed;
    EXCEPTION WHEN OTHERS THEN
        -- Sent with a change's COMMIT (app/store/postgresql.py): failing here must not
        -- read as a failed commit. Nothing is sealed; the next seal takes the events.
        RAISE WARNING 'audit_seal: nothing sealed: % (SQLSTATE %)', SQLERRM, SQLSTATE;
        RETURN -1;
    END;
END
$$
"""

# As migration 0007 made it: a table rebuild on SQLite drops its triggers.
SQLITE_HEAD_TRIGGER = """
CREATE TRIGGER audit_events_head AFTER INSERT ON audit_events BEGIN
    UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash WHERE id = 1;
END
"""


def _client_id_width(width: int) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS audit_events_head")
        with op.batch_alter_table("audit_events", recreate="always") as batch:
            batch.alter_column("client_id", type_=sa.String(length=width), existing_nullable=True)
        op.execute(SQLITE_HEAD_TRIGGER)
    else:
        op.alter_column(
            "audit_events", "client_id", type_=sa.String(length=width), existing_nullable=True
        )


def upgrade():
    op.create_table(
        "audit_pending",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("user_email", sa.String(length=254), nullable=True),
        sa.Column("via", sa.String(length=16), nullable=False),
        sa.Column("client_id", sa.String(length=WIDE), nullable=True),
        sa.Column("client_name", sa.String(length=200), nullable=True),
        sa.Column("object", sa.Text(), nullable=False),
        sa.Column("text_before_object", sa.Text(), nullable=False),
        sa.Column("text_after_seq", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_pending")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(AUDIT_SEAL)
    _client_id_width(WIDE)


def downgrade():
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.execute(sa.text("SELECT audit_seal()"))  # nothing pending is lost
        op.execute("DROP FUNCTION audit_seal()")
    elif bind.execute(sa.text("SELECT count(*) FROM audit_pending")).scalar():
        raise RuntimeError(
            "audit_pending holds events not yet in the trail: start the service once "
            "(or run `ledger-service verify`) to seal them, then downgrade"
        )
    longest = bind.execute(sa.text("SELECT max(length(client_id)) FROM audit_events")).scalar()
    if longest is not None and longest > NARROW:
        raise RuntimeError(
            f"audit_events names a client id of {longest} characters, which the schema "
            f"before 0011 cannot hold (events cannot be changed): downgrade refused"
        )
    _client_id_width(NARROW)
    op.drop_table("audit_pending")
