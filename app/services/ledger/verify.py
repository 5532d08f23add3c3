"""`ledger-service verify`: re-walk the audit trail and replay it against the ledger.

The checks, in one read snapshot, each in the module of what it checks, run in this
order by run():

1. The chain (verify_trail.py). Every event's seq and hash, the audit_head row, and
   the events still waiting to be sealed, replayed into the books they imply.
2. The replay against the stored books: the transactions with their entries, exactly
   and in bounded memory (verify_transactions.py); the accounts, entry flags, settings
   and lock date (verify_books.py).
3. The balance tables (verify_books.compare_balance_tables): the per-day and
   per-month balances every report reads must equal the entries.
4. The budgets (verify_books.py) and the documents (verify_documents.py), then each
   of MORE_CHECKS: the bank statements with their lines, the entries' bank
   references and the reconciliations (replayed during the walk into Replay.also,
   a banking.verify_statements.BankTrail), the rules, and the schedules with their
   occurrences (verify_schedules.py).

The first disagreement raises Disagreement naming it; otherwise run() returns the
one-line summary.
"""

from __future__ import annotations

from collections.abc import Callable

from ..banking import verify_statements
from . import verify_documents, verify_schedules
from .verify_books import (
    compare_accounts,
    compare_balance_tables,
    compare_budgets,
    compare_flags,
    compare_settings,
)
from .verify_trail import Disagreement, Replay, check_head, walk_chain, walk_pending
from .verify_transactions import compare_transactions

__all__ = ["MORE_CHECKS", "Disagreement", "run"]


# Further checks, run after the documents in this order: each compares what the trail
# (the replay) says with what is stored, raises Disagreement at the first difference,
# and returns its part of the summary (", 3 statements"), or "" to say nothing.
def _statements(state: Replay) -> str:
    """The bank statements (files, headers, lines), the entries' bank references and
    the reconciliations against the trail (services/banking/verify_statements), as
    the walk replayed it into state.also."""
    count = verify_statements.check(state.also, Disagreement)
    return f", {count} statements" if count else ""


def _rules(_state: Replay) -> str:
    """The statement rules against the trail (services/banking/verify_statements)."""
    count = verify_statements.check_rules(Disagreement)
    return f", {count} rules" if count else ""


def _schedules(state: Replay) -> str:
    """The schedules and their stored occurrences against the trail
    (verify_schedules.py), as the walk replayed them into state.schedules."""
    count = verify_schedules.check(state.schedules, Disagreement)
    return f", {count} schedules" if count else ""


MORE_CHECKS: list[Callable[[Replay], str]] = [_statements, _rules, _schedules]


def run() -> str:
    """Verify chain and books; the one-line summary, or raise Disagreement."""
    state = walk_chain(Replay(also=verify_statements.BankTrail()))
    check_head(state)
    waiting = walk_pending(state)
    accounts = compare_accounts(state)
    count, entries = compare_transactions(state)
    flags = compare_flags(state)
    compare_settings(state)
    compare_balance_tables()
    budget_count = compare_budgets(state)
    documents = verify_documents.check(Disagreement)
    more = "".join(check(state) for check in MORE_CHECKS)
    extra = ", entry flags" if flags else ""
    if budget_count:
        extra += f", {budget_count} budgets"
    pending = f" (and {waiting} written but not yet sealed)" if waiting else ""
    return (
        f"verify: ok: {state.events} events chained to head seq {state.last_seq} "
        f"({state.last_hash[:16]}…){pending}; the ledger equals the trail: {count} "
        f"transactions, {entries} entries, {accounts} accounts, settings{extra}, "
        f"{documents} documents{more}; the balance tables equal the entries"
    )
