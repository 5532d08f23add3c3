"""Every model, imported so that Alembic and the tests see the full metadata."""

from .derived import AccountDayBalance, AccountMonthBalance
from .identity import LoginThrottle, Passkey, Session, User, WebAuthnChallenge
from .ledger import ACCOUNT_KINDS, BOOK_STYLES, Account, Entry, Reconciliation, Settings, Transaction
from .oauth import AuthorizationCode, DeviceRecord, DeviceStart, OAuthClient, Token

__all__ = [
    "ACCOUNT_KINDS",
    "AccountDayBalance",
    "AccountMonthBalance",
    "BOOK_STYLES",
    "Account",
    "AuthorizationCode",
    "DeviceRecord",
    "DeviceStart",
    "Entry",
    "LoginThrottle",
    "OAuthClient",
    "Passkey",
    "Reconciliation",
    "Session",
    "Settings",
    "Token",
    "Transaction",
    "User",
    "WebAuthnChallenge",
]
