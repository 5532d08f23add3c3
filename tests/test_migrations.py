"""Migrations: the models and the migrations agree, and the chain goes down and up."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade

from app.extensions import db


def test_models_match_the_migrated_schema(app):
    with app.app_context(), db.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, db.metadata)
    ignorable = {"ledger_balance_pending"}  # SQLite-only bookkeeping table of the balance check
    diff = [d for d in diff if not (d[0] == "remove_table" and d[1].name in ignorable)]
    assert diff == []


def test_downgrade_to_base_and_upgrade_again(scratch_database_url):
    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade()
        downgrade(revision="base")
        assert db.inspect(db.engine).get_table_names() == ["alembic_version"]
        upgrade()
        assert "entries" in db.inspect(db.engine).get_table_names()
        db.engine.dispose()


def test_0005_adds_and_removes_the_device_rate_table(scratch_database_url):
    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0004_entries_listing_index")
        assert "device_starts" not in db.inspect(db.engine).get_table_names()
        upgrade(revision="0005_device_starts")
        inspector = db.inspect(db.engine)
        assert "device_starts" in inspector.get_table_names()
        assert [i["name"] for i in inspector.get_indexes("device_starts")] == [
            "ix_device_starts_client_address"
        ]
        downgrade(revision="0004_entries_listing_index")
        assert "device_starts" not in db.inspect(db.engine).get_table_names()
        db.engine.dispose()
