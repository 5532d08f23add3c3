"""Read the CSV export: one row per entry, rows of one transaction share its id.

Columns (header required, in this order): transaction_id, date, description,
author, account, kind, cents. `account` is the plain account name (no kind
prefix), `kind` one of the five kinds, `cents` a signed integer. A row with
only `account` and `kind` filled declares an account that has no entries.
The free-text cells (description, author, account) lose the leading `'` the
export adds before a formula character (plaintext.csv_text_value).
"""

from __future__ import annotations

import csv
import io
import re

from ...models import ACCOUNT_KINDS
from . import plaintext
from .export import CSV_COLUMNS
from .parse_journal import journal_date
from .parsed import Parsed, ParsedTx, Posting
from .plaintext import ParseProblem


def parse(text: str) -> Parsed:
    """The file's accounts and transactions or a ParseProblem."""
    parsed = Parsed()
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    groups: dict[str, ParsedTx] = {}
    previous_end = 0
    for row in reader:
        line, previous_end = previous_end + 1, reader.line_num
        if line == 1:
            if tuple(c.strip() for c in row) != CSV_COLUMNS:
                raise ParseProblem(1, "the header must be: " + ",".join(CSV_COLUMNS))
            continue
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(CSV_COLUMNS):
            raise ParseProblem(line, f"expected {len(CSV_COLUMNS)} columns, found {len(row)}")
        tx_id, day, description, author, account, kind, cents = row
        # The export's guard against spreadsheet formulas, undone (plaintext.csv_text_cell).
        description, author, account = (
            plaintext.csv_text_value(cell) for cell in (description, author, account)
        )
        if kind not in ACCOUNT_KINDS:
            raise ParseProblem(line, "kind must be one of: " + ", ".join(ACCOUNT_KINDS))
        if not tx_id.strip():
            if any(cell.strip() for cell in (day, description, author, cents)):
                raise ParseProblem(line, "transaction_id is empty")
            parsed.accounts.append((line, kind, account))  # an account without entries
            continue
        if not re.fullmatch(r"[-+]?\d+", cents.strip()):
            raise ParseProblem(line, f"cents '{cents}' must be a whole number of cents")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day.strip()):
            raise ParseProblem(line, f"'{day}' is not a date like 2026-01-31")
        tx = groups.get(tx_id)
        if tx is None:
            tx = ParsedTx(line, journal_date(day.strip(), line), description, author or None)
            groups[tx_id] = tx
        elif (tx.date, tx.description, tx.author) != (day.strip(), description, author or None):
            raise ParseProblem(
                line, f"rows of transaction {tx_id} disagree on date, description or author"
            )
        tx.postings.append(Posting(line, kind, account, int(cents), ""))
    if previous_end == 0:
        raise ParseProblem(1, "the file is empty; the header must be: " + ",".join(CSV_COLUMNS))
    for tx in groups.values():
        parsed.finish(tx)
    return parsed
