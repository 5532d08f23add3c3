"""initial schema: ledger, identity and OAuth tables; the balance safety net; seeds

Revision ID: 0001
Revises:
Create Date: 2026-11-21 06:46:07.927041

"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.CheckConstraint(
            "kind IN ('asset', 'liability', 'equity', 'income', 'expense')",
            name=op.f("ck_accounts_kind"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("name", name=op.f("uq_accounts_name")),
    )
    op.create_index("ix_accounts_kind_name", "accounts", ["kind", "name"])

    op.create_table(
        "login_throttles",
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("email", name=op.f("pk_login_throttles")),
    )
    op.create_table(
        "oauth_clients",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("dynamic", sa.Boolean(), nullable=False),
        sa.Column("redirect_uris", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("first_used_at", sa.DateTime(), nullable=True),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_clients")),
    )
    op.create_table(
        "settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_style", sa.String(length=16), nullable=False),
        sa.CheckConstraint(
            "book_style IN ('club', 'personal')", name=op.f("ck_settings_book_style")
        ),
        sa.CheckConstraint("id = 1", name=op.f("ck_settings_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_settings")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("webauthn_handle", sa.LargeBinary(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("email", name=op.f("uq_users_email")),
    )
    op.create_table(
        "authorization_codes",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("redirect_uri", sa.Text(), nullable=False),
        sa.Column("code_challenge", sa.String(length=200), nullable=False),
        sa.Column("resource", sa.String(length=400), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["client_id"],
            ["oauth_clients.id"],
            name=op.f("fk_authorization_codes_client_id_oauth_clients"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_authorization_codes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_authorization_codes")),
    )
    op.create_index("ix_authorization_codes_client_id", "authorization_codes", ["client_id"])

    op.create_table(
        "device_records",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_code", sa.String(length=9), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("resource", sa.String(length=400), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("decided_by_session", sa.String(length=64), nullable=True),
        sa.Column("interval", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("last_poll_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'approved', 'declined')", name=op.f("ck_device_records_status")
        ),
        sa.ForeignKeyConstraint(
            ["client_id"],
            ["oauth_clients.id"],
            name=op.f("fk_device_records_client_id_oauth_clients"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_device_records_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_device_records")),
        sa.UniqueConstraint("user_code", name=op.f("uq_device_records_user_code")),
    )
    op.create_index("ix_device_records_client_id", "device_records", ["client_id"])

    op.create_table(
        "passkeys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("credential_id", sa.String(length=1400), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("sign_count", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("transports", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_passkeys_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_passkeys")),
        sa.UniqueConstraint("credential_id", name=op.f("uq_passkeys_credential_id")),
    )
    op.create_index("ix_passkeys_user_id", "passkeys", ["user_id"])

    op.create_table(
        "sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("mfa_complete", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("device_attempts", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"])

    op.create_table(
        "tokens",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("audience", sa.String(length=400), nullable=False),
        sa.Column("parent_id", sa.String(length=64), nullable=True),
        sa.Column("family_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.Column("retired_at", sa.DateTime(), nullable=True),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint("kind IN ('access', 'refresh')", name=op.f("ck_tokens_kind")),
        sa.ForeignKeyConstraint(
            ["client_id"],
            ["oauth_clients.id"],
            name=op.f("fk_tokens_client_id_oauth_clients"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
    )
    op.create_index("ix_tokens_client_id", "tokens", ["client_id"])
    op.create_index("ix_tokens_family_id", "tokens", ["family_id"])
    op.create_index("ix_tokens_parent_id", "tokens", ["parent_id"])
    op.create_index("ix_tokens_user_id", "tokens", ["user_id"])

    op.create_table(
        "transactions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("occurred_on", sa.Date(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_transactions_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_transactions")),
    )
    op.create_index("ix_transactions_created_by", "transactions", ["created_by"])
    op.create_index("ix_transactions_occurred_on_id", "transactions", ["occurred_on", "id"])

    op.create_table(
        "entries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "transaction_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_entries_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["transaction_id"],
            ["transactions.id"],
            name=op.f("fk_entries_transaction_id_transactions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entries")),
    )
    op.create_index(
        "ix_entries_account_id_amount", "entries", ["account_id", "transaction_id", "amount_cents"]
    )
    op.create_index("ix_entries_transaction_id", "entries", ["transaction_id", "id"])

    op.create_table(
        "webauthn_challenges",
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("challenge", sa.LargeBinary(length=128), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            name=op.f("fk_webauthn_challenges_session_id_sessions"),
            onupdate="CASCADE",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_id", name=op.f("pk_webauthn_challenges")),
    )

    create_balance_check()
    seed()


def downgrade():
    drop_balance_check()
    op.drop_table("webauthn_challenges")
    op.drop_table("entries")
    op.drop_table("transactions")
    op.drop_table("tokens")
    op.drop_table("sessions")
    op.drop_table("passkeys")
    op.drop_table("device_records")
    op.drop_table("authorization_codes")
    op.drop_table("users")
    op.drop_table("settings")
    op.drop_table("oauth_clients")
    op.drop_table("login_throttles")
    op.drop_table("accounts")


# --- the balance safety net -------------------------------------------------
# PostgreSQL: a DEFERRABLE INITIALLY DEFERRED constraint trigger re-checks every
# transaction touched in the database transaction at COMMIT and raises SQLSTATE
# P0001 when its entries number fewer than 2 or do not sum to 0 (hordak 0002).
# A transaction deleted as a whole is skipped: its header row is gone.
# SQLite has no deferred triggers: plain triggers note each touched transaction
# in ledger_balance_pending and app.store re-checks those rows just before COMMIT.

PG_FUNCTIONS = (
    """
    CREATE FUNCTION ledger_assert_balanced(tx_id bigint) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
        n integer;
        total numeric;
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM transactions WHERE id = tx_id) THEN
            RETURN;  -- the whole transaction was deleted
        END IF;
        SELECT count(*), coalesce(sum(amount_cents), 0) INTO n, total
          FROM entries WHERE transaction_id = tx_id;
        IF n < 2 OR total <> 0 THEN
            RAISE EXCEPTION 'transaction % does not balance (% entries, sum %)', tx_id, n, total
                USING ERRCODE = 'P0001';
        END IF;
    END;
    $$
    """,
    """
    CREATE FUNCTION ledger_entries_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' OR TG_OP = 'UPDATE' THEN
            PERFORM ledger_assert_balanced(NEW.transaction_id);
        END IF;
        IF TG_OP = 'DELETE' OR TG_OP = 'UPDATE' THEN
            PERFORM ledger_assert_balanced(OLD.transaction_id);
        END IF;
        RETURN NULL;
    END;
    $$
    """,
    """
    CREATE FUNCTION ledger_transactions_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM ledger_assert_balanced(NEW.id);
        RETURN NULL;
    END;
    $$
    """,
)

PG_TRIGGERS = (
    """CREATE CONSTRAINT TRIGGER entries_balance
       AFTER INSERT OR UPDATE OR DELETE ON entries
       DEFERRABLE INITIALLY DEFERRED
       FOR EACH ROW EXECUTE FUNCTION ledger_entries_balance()""",
    """CREATE CONSTRAINT TRIGGER transactions_balance
       AFTER INSERT ON transactions
       DEFERRABLE INITIALLY DEFERRED
       FOR EACH ROW EXECUTE FUNCTION ledger_transactions_balance()""",
)

SQLITE_STATEMENTS = (
    "CREATE TABLE ledger_balance_pending (transaction_id INTEGER PRIMARY KEY)",
    """CREATE TRIGGER entries_balance_insert AFTER INSERT ON entries BEGIN
         INSERT OR IGNORE INTO ledger_balance_pending VALUES (NEW.transaction_id); END""",
    """CREATE TRIGGER entries_balance_update AFTER UPDATE ON entries BEGIN
         INSERT OR IGNORE INTO ledger_balance_pending VALUES (OLD.transaction_id);
         INSERT OR IGNORE INTO ledger_balance_pending VALUES (NEW.transaction_id); END""",
    """CREATE TRIGGER entries_balance_delete AFTER DELETE ON entries BEGIN
         INSERT OR IGNORE INTO ledger_balance_pending VALUES (OLD.transaction_id); END""",
    """CREATE TRIGGER transactions_balance_insert AFTER INSERT ON transactions BEGIN
         INSERT OR IGNORE INTO ledger_balance_pending VALUES (NEW.id); END""",
)


def create_balance_check():
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for statement in PG_FUNCTIONS:
            op.execute(statement)
        for statement in PG_TRIGGERS:
            op.execute(statement)
    elif dialect == "sqlite":
        for statement in SQLITE_STATEMENTS:
            op.execute(statement)


def drop_balance_check():
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS transactions_balance ON transactions")
        op.execute("DROP TRIGGER IF EXISTS entries_balance ON entries")
        op.execute("DROP FUNCTION IF EXISTS ledger_transactions_balance()")
        op.execute("DROP FUNCTION IF EXISTS ledger_entries_balance()")
        op.execute("DROP FUNCTION IF EXISTS ledger_assert_balanced(bigint)")
    elif dialect == "sqlite":
        for name in (
            "entries_balance_insert",
            "entries_balance_update",
            "entries_balance_delete",
            "transactions_balance_insert",
        ):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS ledger_balance_pending")


# --- seeds ------------------------------------------------------------------

FIRST_PARTY_CLIENTS = (
    ("svc-cli", "Ledger command line"),
    ("svc-desktop", "Ledger desktop"),
)


def seed():
    settings = sa.table("settings", sa.column("id", sa.Integer), sa.column("book_style", sa.String))
    op.bulk_insert(settings, [{"id": 1, "book_style": "personal"}])
    clients = sa.table(
        "oauth_clients",
        sa.column("id", sa.String),
        sa.column("name", sa.String),
        sa.column("dynamic", sa.Boolean),
        sa.column("redirect_uris", sa.Text),
        sa.column("created_at", sa.DateTime),
    )
    now = datetime.now(UTC).replace(tzinfo=None)
    op.bulk_insert(
        clients,
        [
            {
                "id": client_id,
                "name": name,
                "dynamic": False,
                "redirect_uris": '["http://127.0.0.1/callback"]',
                "created_at": now,
            }
            for client_id, name in FIRST_PARTY_CLIENTS
        ],
    )
