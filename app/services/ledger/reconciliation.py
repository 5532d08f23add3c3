"""Reconciliation: entries marked cleared, then reconciled against a bank statement.

- set_cleared marks some of one account's entries cleared (or not). An entry of
  another account refuses the whole request (400, nothing changed); a reconciled
  entry cannot be uncleared (409).
- reconcile(account, statement_date, closing): when the sign-adjusted balance of the
  account's cleared entries dated on or before the statement date equals the closing
  balance, those entries become reconciled and the statement is kept (table
  reconciliations); otherwise 409 with difference_cents (closing minus that balance)
  and nothing changes. A statement that would mark reconciled an entry dated on or
  before the lock date is refused as well (409 naming the lock date, nothing changes):
  the statement's own date is not enough, an earlier entry may lie inside the lock.
- A transaction with a reconciled entry cannot be deleted (409), nor corrected except
  on its own date with its reconciled entries' accounts and amounts kept, which stay
  reconciled in the replacement (kept_in_correction, keep_marks); a cleared entry's
  mark and bank reference likewise move to the replacement's entry of the same
  account and amount, when it has one.

Concurrency: each of the three first locks the account rows involved
(accounts.lock_account: FOR NO KEY UPDATE on PostgreSQL, the one writer on SQLite),
so a deletion cannot remove an entry a concurrent reconciliation has just counted, and
two reconciliations of one account run one after the other.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import bindparam, select, update

from ...extensions import db
from ...models import Account, Entry, Reconciliation, Transaction, User
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, ConflictError, Reconciled
from . import accounts, audit, lock, reports, validate

CLEAR_MAX = 10_000


class StatementMismatch(ConflictError):
    """The cleared balance does not equal the statement's closing balance."""

    def __init__(self, difference: int):
        super().__init__(
            f"the cleared balance differs from the closing balance by {difference} cents; "
            "nothing was reconciled"
        )
        self.extra = {"difference_cents": difference}


def set_cleared(account_id: int, entry_ids, cleared) -> None:
    """POST /accounts/{id}/cleared: mark the account's entries cleared or not."""
    account = accounts.get_account(account_id)
    ids = validate.id_list("entry_ids", entry_ids, max_items=CLEAR_MAX)
    cleared = validate.boolean("cleared", cleared)
    accounts.lock_account(account.id)
    rows = {}
    for chunk in dialect.in_chunks(ids):
        query = (
            select(Entry.id, Entry.account_id, Entry.reconciled, Transaction.occurred_on)
            .join(Transaction, Transaction.id == Entry.transaction_id)
            .where(Entry.id.in_(chunk))
        )
        rows.update({r.id: r for r in db.session.execute(query)})
    for entry_id in ids:
        row = rows.get(entry_id)
        if row is None or row.account_id != account.id:
            raise BadRequestError(f"entry {entry_id} is not an entry of account {account.id}")
    if not cleared:
        for entry_id in ids:
            if rows[entry_id].reconciled:
                raise ConflictError(f"entry {entry_id} is reconciled; it cannot be uncleared")
    for day in sorted({row.occurred_on for row in rows.values()}):
        lock.refuse_if_locked(day)
    for chunk in dialect.in_chunks(ids):
        db.session.execute(update(Entry).where(Entry.id.in_(chunk)).values(cleared=cleared))
    audit.record(
        "entries.cleared", {"account_id": account.id, "entry_ids": ids, "cleared": cleared}
    )


def reconcile(account_id: int, statement_date, closing_balance_cents, created_by) -> dict:
    """POST /accounts/{id}/reconciliations: reconcile the cleared entries to a statement."""
    account = accounts.get_account(account_id)
    if statement_date is None:
        raise BadRequestError("statement_date is required")
    day = validate.date_value("statement_date", statement_date)
    if closing_balance_cents is None:
        raise BadRequestError("closing_balance_cents is required")
    closing = validate.integer("closing_balance_cents", closing_balance_cents)
    account = accounts.lock_account(account.id)
    lock.refuse_if_locked(day)
    rows = db.session.execute(
        select(Entry.id, Entry.amount_cents, Entry.reconciled, Transaction.occurred_on)
        .join(Transaction, Transaction.id == Entry.transaction_id)
        .where(Entry.account_id == account.id, Entry.cleared, Transaction.occurred_on <= day)
        .order_by(Entry.id)
    ).all()
    balance = reports.sign_for(account.kind) * sum(r.amount_cents for r in rows)
    if balance != closing:
        raise StatementMismatch(closing - balance)
    newly = [r.id for r in rows if not r.reconciled]
    if newly:  # the earliest entry this would mark: none may be inside the lock
        lock.refuse_if_locked(min(r.occurred_on for r in rows if not r.reconciled))
    for chunk in dialect.in_chunks(newly):
        db.session.execute(update(Entry).where(Entry.id.in_(chunk)).values(reconciled=True))
    kept = Reconciliation(
        account_id=account.id,
        statement_date=day,
        closing_balance_cents=closing,
        entry_count=len(newly),
        created_by=created_by,
        created_at=clock.now(),
    )
    db.session.add(kept)
    db.session.flush()
    audit.record(
        "entries.reconciled",
        {
            "account_id": account.id,
            "statement_date": day.isoformat(),
            "closing_balance_cents": closing,
            "entry_ids": newly,
            # The row the auditor's pack reads (reconciliations.csv), which verify
            # holds to this event: its id, who and when.
            "reconciliation": {
                "id": int(kept.id),
                "created_by": created_by,
                "created_by_email": _email(created_by),
                "created_at": clock.iso(kept.created_at),
            },
        },
    )
    return {"statement_date": day.isoformat(), "closing_balance_cents": closing, "entries": newly}


def _email(user_id: int | None) -> str | None:
    """Who reconciled, as the auditor's pack names them (reconciliations.csv)."""
    if user_id is None:
        return None
    return db.session.execute(select(User.email).where(User.id == user_id)).scalar_one_or_none()


def _marked_entries(tx_id: int) -> list:
    """The (id, account_id, amount_cents, reconciled, bank_ref) of the transaction's
    cleared entries (reconciled ones are cleared too), by id, its accounts locked first
    (PostgreSQL) so no reconciliation counts them meanwhile."""
    account_ids = sorted(
        set(
            db.session.execute(
                select(Entry.account_id).where(Entry.transaction_id == tx_id)
            ).scalars()
        )
    )
    if not account_ids:
        return []  # no such transaction: the deletion answers 404
    if dialect.is_postgresql():
        # In id order, so two deletions never wait on each other crosswise.
        db.session.execute(
            select(Account.id)
            .where(Account.id.in_(account_ids))
            .order_by(Account.id)
            .with_for_update(key_share=True)
        ).all()
    return list(
        db.session.execute(
            select(Entry.id, Entry.account_id, Entry.amount_cents, Entry.reconciled, Entry.bank_ref)
            .where(Entry.transaction_id == tx_id, Entry.cleared | Entry.reconciled)
            .order_by(Entry.id)
        ).all()
    )


def refuse_if_reconciled(tx_id: int) -> None:
    """409 when the transaction holds a reconciled entry (called before deleting it)."""
    reconciled = [entry for entry in _marked_entries(tx_id) if entry.reconciled]
    if reconciled:
        raise Reconciled(
            f"transaction {tx_id} has a reconciled entry ({reconciled[0].id}); "
            "reconciled entries cannot be deleted or replaced"
        )


class Kept(NamedTuple):
    """An entry of a correction that takes over a mark of the original's: `position` in
    the replacement's parsed entries, whether it stays `reconciled` (else only
    cleared), and the bank reference a statement line left on the original's entry."""

    position: int
    reconciled: bool
    bank_ref: str | None


def kept_in_correction(tx_id: int, original_day, day, parsed: list[tuple[int, int]]) -> list[Kept]:
    """A correction of transaction `tx_id` (docs/ledger.md, "Corrections of reconciled
    transactions" and "Corrections of cleared transactions"): the entries of the
    replacement's `parsed` (account_id, cents) that take over the original's marks,
    [] when it has none marked.

    Each reconciled entry, in id order, takes the first entry not yet taken with the
    same account and amount; 409 (nothing changes) when the date differs or one finds
    none: a reconciled entry's date, account and amount are what the statement saw.
    Then each entry only cleared (the bank has shown it, no statement is reconciled
    yet) takes the first entry left with its account and amount, on any date, and
    keeps its clearing and bank reference; one that finds none is simply not carried
    (the corrected figure is no longer what the bank showed)."""
    marked = _marked_entries(tx_id)
    if not marked:
        return []
    reconciled = [entry for entry in marked if entry.reconciled]
    if reconciled and day != original_day:
        raise Reconciled(
            f"transaction {tx_id} has a reconciled entry ({reconciled[0].id}); "
            f"a correction of it must keep its date, {original_day.isoformat()}"
        )
    kept: list[Kept] = []
    taken: set[int] = set()
    for entry in reconciled + [entry for entry in marked if not entry.reconciled]:
        position = next(
            (
                i
                for i, (account_id, cents) in enumerate(parsed)
                if i not in taken and (account_id, cents) == (entry.account_id, entry.amount_cents)
            ),
            None,
        )
        if position is None:
            if not entry.reconciled:
                continue
            raise Reconciled(
                f"transaction {tx_id} has a reconciled entry ({entry.id}) of "
                f"{entry.amount_cents} cents on account {entry.account_id}; a correction "
                "of it must keep an entry of that account and amount"
            )
        taken.add(position)
        kept.append(Kept(position, entry.reconciled, entry.bank_ref))
    return kept


_KEEP_MARKS = (
    update(Entry)
    .where(Entry.id == bindparam("e_id"))
    .values(cleared=True, reconciled=bindparam("reconciled"), bank_ref=bindparam("ref"))
)


_GIVE_UP_REFS = (
    update(Entry)
    .where(Entry.transaction_id == bindparam("tx_id"), Entry.bank_ref.is_not(None))
    .values(bank_ref=None)
)


def keep_marks(entry_ids: list[int], kept: list[Kept], original_id: int | None = None) -> None:
    """Give a correction's entries `entry_ids` (the stored ids of `kept`, in its order)
    the marks they take over: cleared, reconciled where the original's was, and the
    bank reference a statement line left, so the same bank line in a later upload is
    still a `duplicate` of the books rather than a `new` line to post a second time,
    and the statement's cleared balance does not move. The posting's event names them
    (kept_reconciled, kept_cleared), which verify replays. The original
    (`original_id`, deleted right after) gives its bank references up first: an
    account holds one bank line once (entries' unique key, migration 0021)."""
    if entry_ids:
        if original_id is not None and any(mark.bank_ref for mark in kept):
            db.session.connection().execute(_GIVE_UP_REFS, {"tx_id": original_id})
        db.session.connection().execute(
            _KEEP_MARKS,
            [
                {"e_id": entry_id, "reconciled": mark.reconciled, "ref": mark.bank_ref}
                for entry_id, mark in zip(entry_ids, kept, strict=True)
            ],
        )
