"""The single, instance-wide settings row: the book style (GET/PUT /settings) and the
books' currency (GET/PUT /books/currency; docs/ledger.md, "The books' currency")."""

import re
from typing import cast

from sqlalchemy import CursorResult, select, update

from ...extensions import db
from ...models import BOOK_STYLES, Settings
from ...store import dialect
from ..errors import BadRequestError, UnprocessableError
from . import audit

DEFAULT = {"book_style": "personal"}


def get_settings() -> dict:
    style = db.session.execute(select(Settings.book_style).where(Settings.id == 1)).scalar()
    return {"book_style": style or DEFAULT["book_style"]}


def update_settings(book_style) -> dict:
    """Set book_style ('club' or 'personal'); it changes no figure or stored ledger data."""
    if book_style not in BOOK_STYLES:
        raise UnprocessableError("book_style must be one of: " + ", ".join(BOOK_STYLES))
    result = cast(
        CursorResult,
        db.session.execute(update(Settings).where(Settings.id == 1).values(book_style=book_style)),
    )
    if result.rowcount == 0:
        db.session.add(Settings(id=1, book_style=book_style))
        db.session.flush()
    audit.record("settings.changed", {"settings": {"book_style": book_style}})
    return {"book_style": book_style}


# --- the books' currency ---------------------------------------------------------------

CURRENCY = "currency"
# What the exports write while no currency is set (what they always wrote before).
DEFAULT_COMMODITY = "USD"
_CODE = re.compile(r"[A-Z]{3}")
_READ_CURRENCY = select(Settings.currency).where(Settings.id == 1)


def currency() -> str | None:
    """The books' currency (an ISO 4217 code), or None while none is set."""
    return db.session.execute(_READ_CURRENCY).scalar()


def commodity() -> str:
    """The commodity the exports write: the books' currency, USD while none is set."""
    return currency() or DEFAULT_COMMODITY


def get_currency() -> dict:
    """GET /books/currency: {currency: str | null}."""
    return {CURRENCY: currency()}


def parse_currency(body: dict) -> str:
    """The PUT body's currency: three capital letters (an ISO 4217 code), else a 400."""
    value = body.get(CURRENCY)
    if not isinstance(value, str) or not _CODE.fullmatch(value):
        raise BadRequestError(
            f"{CURRENCY} is required: an ISO 4217 code of three capital letters, such as EUR"
        )
    return value


def set_currency(body: dict) -> dict:
    """PUT /books/currency: set the books' currency; one books.currency_set event when
    it changes (the previous code with it)."""
    new = parse_currency(body)
    previous = db.session.execute(
        _READ_CURRENCY.with_for_update() if dialect.is_postgresql() else _READ_CURRENCY
    ).scalar()
    if previous != new:
        result = cast(
            CursorResult,
            db.session.execute(update(Settings).where(Settings.id == 1).values(currency=new)),
        )
        if result.rowcount == 0:
            db.session.add(Settings(id=1, book_style=DEFAULT["book_style"], currency=new))
            db.session.flush()
        audit.record("books.currency_set", {CURRENCY: new, "previous": previous})
    return {CURRENCY: new}
