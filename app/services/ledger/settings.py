"""The single, instance-wide settings row."""

from typing import cast

from sqlalchemy import CursorResult, select, update

from ...extensions import db
from ...models import BOOK_STYLES, Settings
from ..errors import UnprocessableError
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
