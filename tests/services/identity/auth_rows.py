"""Database views shared by the passkey ceremony tests."""

from sqlalchemy import select

from app.extensions import db
from app.models import Passkey, Session, WebAuthnChallenge


def passkeys(app):
    with app.app_context():
        return db.session.execute(select(Passkey)).scalars().all()


def session_is_full(app) -> bool:
    with app.app_context():
        return db.session.execute(select(Session.mfa_complete)).scalar_one()


def challenges(app):
    with app.app_context():
        return db.session.execute(select(WebAuthnChallenge)).scalars().all()
