"""Alembic environment for Flask-Migrate.

On PostgreSQL the whole upgrade runs inside one transaction holding an advisory
lock, so several `ledger-service serve` processes starting at once migrate one
after another: the later ones find the schema at head and do nothing
(warehouse's migrations/env.py does the same). On SQLite the connection opens
with BEGIN IMMEDIATE (app.store.write_intent), which serialises writers the same way.
"""

import logging
from logging.config import fileConfig

from alembic import context
from flask import current_app
from sqlalchemy import text

config = context.config
if config.config_file_name and not logging.getLogger().handlers:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

MIGRATION_LOCK_KEY = 7_242_001  # arbitrary, fixed: "ledger-service migrations"


def get_engine():
    return current_app.extensions["migrate"].db.engine


def get_metadata():
    return current_app.extensions["migrate"].db.metadata


def run_migrations_offline():
    url = get_engine().url.render_as_string(hide_password=False)
    context.configure(url=url, target_metadata=get_metadata(), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    conf_args = dict(current_app.extensions["migrate"].configure_args)
    conf_args.pop("render_as_batch", None)
    conf_args.pop("transactional_ddl", None)
    with get_engine().connect() as connection:
        is_sqlite = connection.dialect.name == "sqlite"
        context.configure(
            connection=connection,
            target_metadata=get_metadata(),
            render_as_batch=is_sqlite,
            transactional_ddl=True,
            **conf_args,
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"))
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
