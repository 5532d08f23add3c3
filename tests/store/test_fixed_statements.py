"""Fixed statements (app/store/fixed.py): compiled once, run as driver SQL, and still
writing what the typed statement wrote (docs/performance.md, "Sixth pass")."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import Date, bindparam, create_engine, text

from app.extensions import db
from app.models.types import UTCDateTime
from app.store import FixedStatement


def test_a_postings_timestamps_are_stored_as_the_models_store_them(app, api, make_account):
    """The header's created_at and its event's at, written by fixed statements on SQLite,
    are the same stored text as a timestamp of the same instant written through the
    models (the token minted for `api`): naive UTC in the store's own format, never an
    offset or another spelling that text comparisons and exports would see."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    body = {
        "occurred_on": "2026-03-01",
        "description": "groceries",
        "entries": [
            {"account_id": food, "amount_cents": 500},
            {"account_id": bank, "amount_cents": -500},
        ],
    }
    assert api.post("/transactions", json=body).status_code == 201
    with app.app_context():
        _same_stored_instants()


def _same_stored_instants() -> None:
    connection = db.session.connection()
    (minted,) = connection.exec_driver_sql("SELECT CAST(created_at AS TEXT) FROM tokens").one()
    (header,) = connection.exec_driver_sql(
        "SELECT CAST(created_at AS TEXT) FROM transactions"
    ).one()
    events = connection.exec_driver_sql(
        "SELECT CAST(at AS TEXT) FROM audit_events WHERE action = 'transaction.posted' "
        "UNION ALL "
        "SELECT CAST(at AS TEXT) FROM audit_pending WHERE action = 'transaction.posted'"
    ).all()
    assert header == minted
    assert [row[0] for row in events] == [minted]  # the test clock is on a whole second
    (day,) = connection.exec_driver_sql("SELECT CAST(occurred_on AS TEXT) FROM transactions").one()
    assert day == "2026-03-01"


def test_a_fixed_statement_binds_each_name_where_it_stands_through_its_type():
    engine = create_engine("sqlite://")
    fixed = FixedStatement(
        text("SELECT :day, :note, :day, :at").bindparams(
            bindparam("day", type_=Date()), bindparam("at", type_=UTCDateTime())
        )
    )
    with engine.connect() as connection:
        for note in ("first", "second"):
            row = fixed.execute(
                connection,
                {
                    "note": note,
                    "day": date(2026, 1, 2),
                    "at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                },
            ).one()
            assert tuple(row) == ("2026-01-02", note, "2026-01-02", "2026-01-02 03:04:05.000000")
    engine.dispose()


def test_a_fixed_statement_answers_as_the_typed_statement_on_each_store(app):
    """By position on SQLite (qmark), by name on PostgreSQL (pyformat): a name used twice,
    a date bound through its type, an untyped integer and a literal percent sign answer
    exactly as the same text run through SQLAlchemy's own execution (the register's
    reads, services/ledger/register.py, run this way on both stores)."""
    statement = text(
        "SELECT :day, :n + 1, 'a%b' AS pct, CASE WHEN :day >= :low THEN :n END"
    ).bindparams(bindparam("day", type_=Date()), bindparam("low", type_=Date()))
    fixed = FixedStatement(statement)
    with app.app_context():
        connection = db.session.connection()
        for day, n in ((date(2026, 1, 2), 5), (date(2025, 12, 31), 7)):
            params = {"day": day, "n": n, "low": date(2026, 1, 1)}
            expected = tuple(connection.execute(statement, params).one())
            assert tuple(fixed.execute(connection, params).one()) == expected
            assert expected[1:3] == (n + 1, "a%b")
            assert expected[3] == (n if day >= date(2026, 1, 1) else None)
        db.session.rollback()
