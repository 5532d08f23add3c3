"""Read a Beancount file: our own export and reasonable hand-written ones.

Understood: `open` (creates the account), transactions (`*`, `!`, `txn`) with
payee and narration, tags and links, metadata (`author` is kept), postings
with `NUMBER CURRENCY` or one elided amount. `close`, `commodity`, `note`,
`document`, `event`, `query`, `custom`, `option`, `pushtag`/`poptag` are read
and ignored. Refused with their line number: `balance`, `pad`, `price`,
`include`, `plugin`, costs `{...}`, prices `@`/`@@`, arithmetic in amounts,
amounts without currency.
"""

from __future__ import annotations

import re

from .parse_journal import journal_date
from .parsed import Parsed, ParsedTx, Posting, parse_amount, refuse_costs_and_checks
from .plaintext import ParseProblem, account_from_beancount, lines_of

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DATED = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})\s+(?P<keyword>\S+)(?P<rest>.*)$")
_META = re.compile(r"^(?P<key>[a-z][A-Za-z0-9_-]*):\s*(?P<value>.*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_IGNORED_DATED = {"close", "commodity", "note", "document", "event", "query", "custom"}
_IGNORED_UNDATED = {"option", "pushtag", "poptag", "pushmeta", "popmeta"}
_REFUSED = {
    "balance": "balance assertions are not supported",
    "pad": "pad directives are not supported: write the transaction out",
    "price": "prices are not supported: the ledger keeps a single currency",
    "include": "include is not supported: import each file on its own",
    "plugin": "plugins are not supported: they can change the books in ways an import cannot",
}


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text, flags=re.S)


def _strings(text: str, line: int) -> list[str]:
    found = [unescape(s) for s in _STRING.findall(text)]
    leftover = _STRING.sub("", text)
    if '"' in leftover:
        raise ParseProblem(
            line, "a string is not closed on its line (multi-line strings are not supported)"
        )
    return found


def _posting(text: str, line: int) -> Posting:
    body = text.split(";", 1)[0].strip()
    if body[:1] in "*!" and body[1:2] == " ":
        body = body[1:].strip()
    account, _, amount = body.partition(" ")
    amount = amount.strip()
    kind, name = account_from_beancount(account, line)
    if not amount:
        return Posting(line, kind, name, None)
    refuse_costs_and_checks(amount, line)
    parts = amount.split()
    if len(parts) != 2 or not re.fullmatch(r"[A-Z][A-Z0-9'._-]*", parts[1]):
        raise ParseProblem(line, f"'{amount}' is not a plain amount like 12.34 USD")
    if not re.fullmatch(r"[-+]?[\d,]*\.?\d*", parts[0]):
        raise ParseProblem(line, f"'{parts[0]}' is not a plain number (no arithmetic)")
    cents, _ = parse_amount(parts[0], line)
    return Posting(line, kind, name, cents, parts[1])


def _transaction(match: re.Match, line: int) -> ParsedTx:
    strings = _strings(match["rest"], line)
    if len(strings) > 2:
        raise ParseProblem(line, "a transaction has at most a payee and a narration")
    if len(strings) == 2 and strings[0] and strings[1]:
        description = f"{strings[0]} | {strings[1]}"
    else:
        description = next((s for s in reversed(strings) if s), "")
    return ParsedTx(line=line, date=journal_date(match["date"], line), description=description)


def parse(text: str) -> Parsed:
    """The file's accounts and transactions (amounts resolved) or a ParseProblem."""
    parsed = Parsed()
    tx: ParsedTx | None = None
    for number, raw in enumerate(lines_of(text), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if raw[0] in (" ", "\t"):
            if tx is None:
                continue  # metadata of a directive we read or ignore
            meta = _META.match(stripped)
            if meta:
                if meta["key"] == "author" and tx.author is None:
                    values = _strings(meta["value"], number)
                    tx.author = values[0] if values else None
                continue
            tx.postings.append(_posting(stripped, number))
            continue
        if tx is not None:
            parsed.finish(tx)
            tx = None
        if raw[0] in "*#":  # org-mode headings and comments
            continue
        word = stripped.split()[0]
        match = _DATED.match(stripped)
        if match is None:
            if word in _IGNORED_UNDATED:
                continue
            raise ParseProblem(number, _REFUSED.get(word, f"'{word}' is not understood here"))
        keyword = match["keyword"]
        if keyword in ("*", "!", "txn"):
            tx = _transaction(match, number)
        elif keyword == "open":
            account = match["rest"].split()[0] if match["rest"].split() else ""
            kind, name = account_from_beancount(account, number)
            parsed.accounts.append((number, kind, name))
        elif keyword in _IGNORED_DATED:
            continue
        else:
            message = _REFUSED.get(keyword, f"the '{keyword}' directive is not supported")
            raise ParseProblem(number, message)
    if tx is not None:
        parsed.finish(tx)
    return parsed
