"""Steps the tests of acting on statement lines share: act on lines over HTTP, run SQL
behind the service, and take what a refused request must leave as it was."""

from __future__ import annotations

from sqlalchemy import text

from app.extensions import db


def act(api, sid, *lines):
    return api.post(f"/statements/{sid}/lines", json={"lines": list(lines)})


def sql(app, statement, **params):
    with app.app_context(), db.engine.begin() as conn:
        result = conn.execute(text(statement), params)
        return result.all() if result.returns_rows else []


def snapshot(app):
    """Everything a refused request must leave as it was."""
    with app.app_context():
        rows = {
            table: db.session.execute(text(f"SELECT * FROM {table} ORDER BY 1, 2")).all()
            for table in ("transactions", "entries", "statement_lines")
        }
        db.session.rollback()
        return rows
