"""audit sealing in sets: audit_seal() moves a batch with one INSERT and one DELETE

Migration 0011's audit_seal() hashed each pending event and then ran one INSERT into
audit_events and one DELETE from audit_pending for that event: two statements, each
with its executor start-up, per event, and a seal moves about SEAL_EVERY (16) events
(services/ledger/audit/writing.py). This version computes the batch's seqs and hashes
in the same loop (the chain is sequential: each hash covers the one before it), then
moves the whole batch with one INSERT ... SELECT FROM unnest(...) and one DELETE ...
WHERE id = ANY(...): the same events, seqs and hashes byte for byte (the rule is
unchanged: CONTRACT's chain over the same text, see 0011), with two statements per
batch of up to 1,000 instead of two per event (docs/performance.md, "Fourth pass").

Everything else is as 0011 made it: no lock when nothing is pending; the head row
locked first, so seals run one at a time and seq stays gapless; the pending rows read
in id order through their primary key, after the lock; its commit not waiting for the
WAL flush; it never raises (an error is a server-log warning and the rows stay
pending). The DELETE names the ids the loop read (never "id <= last"): a pending row
with a lower id that committed after the loop's read stays for the next seal.

SQLite has no audit_seal() (its events go straight into the chain): nothing to do.

Revision ID: 0016_audit_seal_sets
Revises: 0015_documents
"""

from alembic import context, op

revision = "0016_audit_seal_sets"
down_revision = "0015_documents"
branch_labels = None
depends_on = None

AUDIT_SEAL = """
CREATE OR REPLACE FUNCTION audit_seal() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    head_seq bigint;
    head_hash text;
    sealed bigint := 0;
    batch integer;
    ids bigint[];
    hashes text[];
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
            ids := '{}';
            hashes := '{}';
            FOR p IN SELECT id, object, text_before_object, text_after_seq
                     FROM audit_pending ORDER BY id LIMIT 1000 LOOP
                head_seq := head_seq + 1;
                head_hash := encode(sha256(convert_to(
                    head_hash || p.text_before_object || p.object || ',"seq":'
                    || head_seq::text || p.text_after_seq, 'UTF8')), 'hex');
                ids := ids || p.id;
                hashes := hashes || head_hash;
            END LOOP;
            batch := cardinality(ids);
            EXIT WHEN batch = 0;
            -- The batch's seqs run from head_seq - batch + 1 to head_seq, in the order
            -- read (ORDINALITY); the rows are the ones the loop read (the head lock keeps
            -- every other seal out, so none has gone since).
            INSERT INTO audit_events
                (seq, at, action, user_email, via, client_id, client_name, object, hash)
            SELECT head_seq - batch + b.n, w.at, w.action, w.user_email, w.via, w.client_id,
                   w.client_name, w.object, b.hash
            FROM unnest(ids, hashes) WITH ORDINALITY AS b (id, hash, n)
            JOIN audit_pending AS w ON w.id = b.id
            ORDER BY b.n;
            DELETE FROM audit_pending WHERE id = ANY (ids);
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


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(AUDIT_SEAL)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        # 0011's audit_seal() as that migration wrote it (Alembic has its module loaded).
        op.execute(context.script.get_revision("0011_audit_sealing").module.AUDIT_SEAL)
