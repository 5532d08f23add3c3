"""Every model, imported so that Alembic and the tests see the full metadata."""

from .audit import AuditEvent, AuditHead
from .derived import AccountDayBalance, AccountMonthBalance
from .identity import LoginThrottle, Passkey, Session, User, WebAuthnChallenge
from .ledger import ACCOUNT_KINDS, BOOK_STYLES, Account, Entry, Settings, Transaction
from .oauth import AuthorizationCode, DeviceRecord, DeviceStart, OAuthClient, Token

__all__ = [
    "ACCOUNT_KINDS",
    "AccountDayBalance",
    "AccountMonthBalance",
    "AuditEvent",
    "AuditHead",
    "BOOK_STYLES",
    "Account",
    "AuthorizationCode",
    "DeviceRecord",
    "DeviceStart",
    "Entry",
    "LoginThrottle",
    "OAuthClient",
    "Passkey",
    "Session",
    "Settings",
    "Token",
    "Transaction",
    "User",
    "WebAuthnChallenge",
]
