"""`ledger-service verify`, the rest of the books (verify.py runs every check):
accounts (name, kind, and archived when the schema has that column), entry flags
(cleared and reconciled, when the schema has them), the book style and the lock date
(when the schema has one), the budgets with their lines (when the schema has them),
each against the replay (verify_trail.Replay); and the balance tables, which must
equal the entries (the comparison `ledger-service check` runs,
derived.balance_table_differences, stopped at the first difference). Accounts, entry
flags and settings are small and are compared directly (entry flags: one small tuple
per flagged entry).
"""

from __future__ import annotations

from contextlib import closing

from sqlalchemy import inspect, text

from ...extensions import db
from . import budgets, derived
from .verify_trail import DEFAULT_SETTINGS, Disagreement, Replay


def _columns(table: str) -> set[str]:
    return {c["name"] for c in inspect(db.session.connection()).get_columns(table)}


def compare_accounts(state: Replay) -> int:
    archived = "archived" in _columns("accounts")
    columns = "id, name, kind" + (", archived" if archived else "")
    stored = {
        row[0]: {
            "name": row[1],
            "kind": row[2],
            "archived": bool(row[3]) if archived else False,
        }
        for row in db.session.execute(text(f"SELECT {columns} FROM accounts ORDER BY id"))
    }
    for account_id in sorted(set(stored) | set(state.accounts)):
        if account_id not in state.accounts:
            raise Disagreement(
                f"account {account_id} is in the ledger but no event created it: "
                "it was added outside the service"
            )
        seq = state.account_seq[account_id]
        if account_id not in stored:
            raise Disagreement(
                f"account {account_id} (event seq {seq}) is missing from the ledger: "
                "it was removed outside the service"
            )
        for key in ("name", "kind", "archived"):
            if stored[account_id][key] != state.accounts[account_id][key]:
                raise Disagreement(
                    f"account {account_id}: {key} is {stored[account_id][key]!r} in the "
                    f"ledger but {state.accounts[account_id][key]!r} after event seq {seq}"
                )
    return len(stored)


def compare_flags(state: Replay) -> bool:
    """Entry flags, when the schema has them: stored flagged entries == replayed ones."""
    columns = _columns("entries")
    if not {"cleared", "reconciled"} <= columns:
        return False
    stored = {
        row[0]: (bool(row[1]), bool(row[2]))
        for row in db.session.execute(
            text(
                "SELECT id, cleared, reconciled FROM entries"
                " WHERE cleared OR reconciled ORDER BY id"
            )
        )
    }
    replayed = {k: v for k, v in state.flags.items() if v[0] or v[1]}
    for entry_id in sorted(set(stored) | set(replayed)):
        mine = stored.get(entry_id, (False, False))
        cleared, reconciled, seq = state.flags.get(entry_id, (False, False, 0))
        if mine != (cleared, reconciled):
            where = f"after event seq {seq}" if seq else "with no event marking it"
            raise Disagreement(
                f"entry {entry_id}: cleared={mine[0]}, reconciled={mine[1]} in the ledger but "
                f"cleared={cleared}, reconciled={reconciled} {where}: it was changed "
                "outside the service"
            )
    return True


def compare_settings(state: Replay) -> None:
    columns = _columns("settings")
    row = db.session.execute(text("SELECT * FROM settings WHERE id = 1")).mappings().first()
    stored = dict(row) if row is not None else {}
    style = stored.get("book_style") or DEFAULT_SETTINGS["book_style"]
    if style != state.settings["book_style"]:
        after = f"after event seq {state.settings_seq}" if state.settings_seq else "(no event)"
        raise Disagreement(
            f"settings: book_style is {style!r} in the ledger but "
            f"{state.settings['book_style']!r} {after}"
        )
    if "locked_through" in columns:
        raw = stored.get("locked_through")
        value = raw if raw is None or isinstance(raw, str) else raw.isoformat()
        if value != state.locked_through:
            after = f"after event seq {state.lock_seq}" if state.lock_seq else "(no event)"
            raise Disagreement(
                f"the lock date is {value} in the ledger but {state.locked_through} {after}"
            )
    if "currency" in columns and stored.get("currency") != state.currency:
        after = f"after event seq {state.currency_seq}" if state.currency_seq else "(no event)"
        raise Disagreement(
            f"the books' currency is {stored.get('currency')} in the ledger but "
            f"{state.currency} {after}"
        )


def compare_balance_tables() -> None:
    """The per-day and per-month balance tables every report reads must equal the
    entries (the comparison `ledger-service check` runs; the first difference)."""
    with closing(derived.balance_table_differences()) as differences:
        first = next(differences, None)
    if first is not None:
        raise Disagreement(
            f"{first}: a balance table that reports read differs from the entries, so it "
            "was changed outside the service (`ledger-service check --repair` rebuilds it)"
        )


def _by_account(lines) -> list:
    return sorted(lines or [], key=lambda line: line["account_id"])


def compare_budgets(state: Replay) -> int | None:
    """Budgets, when the schema has them: each stored budget (with its lines) equals the
    last event about it, and every budget the events leave standing is stored."""
    if "budgets" not in inspect(db.session.connection()).get_table_names():
        return None
    stored = {
        b["id"]: budgets.audit_object(budgets.get_budget(b["id"]))["budget"]
        for b in budgets.list_budgets()
    }
    for budget_id in sorted(set(stored) | set(state.budgets)):
        seq = state.budget_seq.get(budget_id)
        if budget_id not in state.budgets:
            gone = f" (deleted by event seq {seq})" if seq else ""
            raise Disagreement(
                f"budget {budget_id} is in the ledger but no event created it{gone}: "
                "it was added outside the service"
            )
        if budget_id not in stored:
            raise Disagreement(
                f"budget {budget_id} (event seq {seq}) is missing from the ledger: "
                "it was removed outside the service"
            )
        recorded = state.budgets[budget_id]
        for key in ("name", "starts_on", "approved_at", "approved_by_email", "lines"):
            mine, theirs = stored[budget_id][key], recorded.get(key)
            if key == "lines":  # stored lines follow account names, which may change since
                mine, theirs = _by_account(mine), _by_account(theirs)
            if mine != theirs:
                raise Disagreement(
                    f"budget {budget_id}: {key} in the ledger differs from event seq {seq}: "
                    "it was changed outside the service"
                )
    return len(stored)
