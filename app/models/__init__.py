"""Every model, imported so that Alembic and the tests see the full metadata.

ledger       the books: Account, Transaction, Entry, Reconciliation, Settings
derived      the per-day and per-month balance tables (kept by triggers)
budgets      Budget and its BudgetLines (twelve months)
schedules    Schedule and its ScheduleOccurrences (those no longer open)
documents    Document: receipts and their bytes, kept with the books
banking      Statement, StatementLine, Rule: bank statements held for review, filing rules
audit        the hash-chained trail: AuditEvent, AuditHead, AuditPending
idempotency  IdempotencyKey: a keyed write's first answer
identity     User, Session, Passkey, WebAuthnChallenge, LoginThrottle
oauth        OAuthClient, ClientDocument, Token, AuthorizationCode, DeviceRecord, ...
types        column types shared by the models (UTCDateTime)
"""

from .audit import AuditEvent, AuditHead, AuditPending
from .banking import LINE_STATUSES, Rule, Statement, StatementLine
from .budgets import MONTH_COLUMNS, Budget, BudgetLine
from .derived import AccountDayBalance, AccountMonthBalance
from .documents import Document, DocumentChunk
from .idempotency import IdempotencyKey
from .identity import LoginThrottle, Passkey, Session, User, WebAuthnChallenge
from .ledger import (
    ACCOUNT_KINDS,
    BOOK_STYLES,
    Account,
    Entry,
    Reconciliation,
    Settings,
    Transaction,
)
from .oauth import (
    APPLICATION_TYPES,
    CLIENT_ID_LENGTH,
    AuthorizationCode,
    ClientDocument,
    DeviceRecord,
    DeviceStart,
    DocumentFailure,
    OAuthClient,
    Token,
)
from .schedules import MODES, OCCURRENCE_STATUSES, WEEKENDS, Schedule, ScheduleOccurrence

__all__ = [
    "MODES",
    "OCCURRENCE_STATUSES",
    "WEEKENDS",
    "Schedule",
    "ScheduleOccurrence",
    "APPLICATION_TYPES",
    "CLIENT_ID_LENGTH",
    "ACCOUNT_KINDS",
    "AccountDayBalance",
    "AccountMonthBalance",
    "AuditEvent",
    "AuditHead",
    "AuditPending",
    "BOOK_STYLES",
    "Budget",
    "BudgetLine",
    "MONTH_COLUMNS",
    "Account",
    "AuthorizationCode",
    "ClientDocument",
    "DeviceRecord",
    "DeviceStart",
    "DocumentFailure",
    "Document",
    "DocumentChunk",
    "Entry",
    "IdempotencyKey",
    "LINE_STATUSES",
    "LoginThrottle",
    "OAuthClient",
    "Passkey",
    "Reconciliation",
    "Rule",
    "Session",
    "Settings",
    "Statement",
    "StatementLine",
    "Token",
    "Transaction",
    "User",
    "WebAuthnChallenge",
]
