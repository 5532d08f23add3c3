"""Read an hledger/ledger journal: our own export and reasonable hand-written ones.

Understood: transactions (date, optional status and (code), description,
`; comments` with an `author:` tag), postings with one amount or one elided
amount, `account` directives, comment lines and `comment ... end comment`
blocks; `commodity`, `payee` and `tag` directives are read and ignored.
Everything else that could change the figures is refused with its line number:
prices and costs, balance assertions, virtual postings, periodic and automated
transactions, includes, aliases, default-year and default-commodity directives,
secondary dates.
"""

from __future__ import annotations

import re
from datetime import date

from ..errors import BadRequestError
from ..ledger import validate
from .parsed import Parsed, ParsedTx, Posting, parse_amount, refuse_costs_and_checks
from .plaintext import ParseProblem, account_from_hledger, lines_of, percent_decode

_HEADER = re.compile(
    r"^(?P<date>\d{4}[-/.]\d{1,2}[-/.]\d{1,2})(?P<date2>=\S*)?"
    r"(?:\s+(?P<status>[*!]))?(?:\s*\((?P<code>[^)]*)\))?(?P<rest>.*)$"
)
_AUTHOR = re.compile(r"(?:^|[\s,])author:\s*([^,\s]+)")
_IGNORED = {"commodity", "payee", "tag"}
_REFUSED = {
    "P": "market prices (P) are not supported: the ledger keeps a single currency",
    "~": "periodic transactions (~) are not supported",
    "=": "automated postings (=) are not supported",
    "include": "include is not supported: import each file on its own",
    "alias": "account aliases are not supported",
    "apply": "apply directives are not supported",
    "D": "a default commodity (D) is not supported",
    "Y": "a default year (Y) is not supported: write full dates",
    "year": "a default year is not supported: write full dates",
    "decimal-mark": "decimal-mark is not supported: use '.' as the decimal mark",
}


def journal_date(text: str, line: int) -> str:
    """A file's date as YYYY-MM-DD, in the years the books accept (validate.check_year)."""
    try:
        y, m, d = (int(part) for part in re.split(r"[-/.]", text))
        day = date(y, m, d)
    except ValueError:
        raise ParseProblem(line, f"'{text}' is not a valid date") from None
    try:
        validate.check_year("date", day)
    except BadRequestError as err:
        raise ParseProblem(line, err.message) from None
    return day.isoformat()


def _posting(text: str, line: int) -> Posting:
    body = text.strip()
    if body[:1] in "*!" and body[1:2] in (" ", "\t"):
        body = body[1:].strip()
    body = body.split(";", 1)[0].rstrip()
    if body[:1] in "([":
        raise ParseProblem(line, "virtual postings ((...) or [...]) are not supported")
    split = re.search(r" {2,}|\t", body)
    account = body[: split.start()] if split else body
    amount = body[split.end() :].strip() if split else ""
    kind, name = account_from_hledger(account, line)
    if name != name.strip():
        raise ParseProblem(line, f"account name '{name}' has leading or trailing spaces")
    if not amount:
        return Posting(line, kind, name, None)
    refuse_costs_and_checks(amount, line)
    cents, commodity = parse_amount(amount, line)
    return Posting(line, kind, name, cents, commodity)


def _header(text: str, line: int) -> ParsedTx:
    match = _HEADER.match(text)
    if not match:
        raise ParseProblem(line, "a transaction must start with a date like 2026-01-31")
    if match["date2"]:
        raise ParseProblem(line, "secondary dates (DATE=DATE2) are not supported")
    rest = match["rest"]
    if rest and not rest[0].isspace():
        raise ParseProblem(line, "the date must be followed by a space")
    description, _, comment = rest.partition(";")
    author = _AUTHOR.search(comment)
    return ParsedTx(
        line=line,
        date=journal_date(match["date"], line),
        description=percent_decode(description.strip()),
        author=percent_decode(author.group(1)) if author else None,
    )


def parse(text: str) -> Parsed:
    """The journal's accounts and transactions (amounts resolved) or a ParseProblem."""
    parsed = Parsed()
    tx: ParsedTx | None = None
    in_comment = False
    skipping_block = False  # indented sub-lines of an ignored directive
    for number, raw in enumerate(lines_of(text), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if in_comment:
            in_comment = stripped != "end comment"
            continue
        indented = line[:1] in (" ", "\t")
        if indented and stripped and not stripped.startswith((";", "#")):
            if tx is not None:
                tx.postings.append(_posting(stripped, number))
            elif not skipping_block:
                raise ParseProblem(number, "an indented line outside a transaction")
            continue
        if indented or not stripped:
            if not stripped and tx is not None:
                parsed.finish(tx)
                tx = None
            continue
        if tx is not None:
            parsed.finish(tx)
            tx = None
        skipping_block = False
        if line[0] in ";#*%|":
            continue
        if line[0].isdigit():
            tx = _header(line, number)
            continue
        word = stripped.split()[0]
        if word == "comment":
            in_comment = True
        elif word == "account":
            account = stripped[len("account") :].split(";", 1)[0]
            account = re.split(r" {2,}|\t", account.strip())[0]
            kind, name = account_from_hledger(account, number)
            parsed.accounts.append((number, kind, name))
            skipping_block = True
        elif word in _IGNORED:
            skipping_block = True
        elif word in _REFUSED or word[0] in "~=":
            raise ParseProblem(number, _REFUSED.get(word) or _REFUSED[word[0]])
        else:
            raise ParseProblem(number, f"the '{word}' directive is not supported")
    if tx is not None:
        parsed.finish(tx)
    return parsed
