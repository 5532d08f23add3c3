"""Shared rules of the plain-text formats: account names, amounts, fingerprints.

Account names
-------------
Every account is written under the top-level name of its kind. Our own name
follows, split into components at ':' (so "Bank:Main" becomes a sub-account),
unless splitting would leave an empty component; then ':' is escaped instead.

hledger/ledger: ``assets:``, ``liabilities:``, ``equity:``, ``income:``,
``expenses:``. Components keep their text except what the journal syntax
cannot hold, which is percent-escaped (``%`` and two hex digits per UTF-8
byte): ``%`` itself, ``;``, ``:`` (when not splitting), control characters,
and a space at either end of a component or right after another space (two
spaces end an account name).

Beancount: ``Assets:``, ``Liabilities:``, ``Equity:``, ``Income:``,
``Expenses:``. A component may hold only letters, digits and ``-`` and must
start with a capital letter or digit, so each component is encoded thus:
a space becomes ``-`` (``--20`` when another space follows it); any other
character outside letters and digits (including ``-`` itself) becomes ``--``
and two hex digits per UTF-8 byte; a first character that may not start a
component is escaped the same way and the component is prefixed with ``X``.
Examples: ``Petty cash`` -> ``Petty-cash``, ``Co-op`` -> ``Co--2Dop``,
``checking`` -> ``X--63hecking``.

Both encodings are reversible: decode(encode(name)) == name for every name.

Amounts are exact: cents are formatted and parsed with integer and string
arithmetic only, never floats; anything finer than a cent is refused, never rounded.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

HLEDGER_TOP = {
    "asset": "assets",
    "liability": "liabilities",
    "equity": "equity",
    "income": "income",
    "expense": "expenses",
}
BEANCOUNT_TOP = {kind: top.capitalize() for kind, top in HLEDGER_TOP.items()}

# Top-level names accepted on import (case-insensitive) and the kind they mean.
KIND_OF_TOP = {
    "assets": "asset",
    "asset": "asset",
    "liabilities": "liability",
    "liability": "liability",
    "equity": "equity",
    "income": "income",
    "revenue": "income",
    "revenues": "income",
    "expenses": "expense",
    "expense": "expense",
}


class ParseProblem(Exception):
    """A construct the ledger cannot represent, at a line of the input file."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def lines_of(text: str) -> list[str]:
    """Physical lines: split at \n only (a stored description may hold U+2028 and the like)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


# --- account names -------------------------------------------------------------


def _components(name: str) -> list[str]:
    parts = name.split(":")
    return parts if all(parts) else [name]


def _hex(ch: str, mark: str) -> str:
    return "".join(f"{mark}{b:02X}" for b in ch.encode("utf-8"))


def _hledger_component(comp: str) -> str:
    out = []
    last = len(comp) - 1
    for i, ch in enumerate(comp):
        if ch in "%;:" or (ch != " " and not ch.isprintable()):
            out.append(_hex(ch, "%"))
        elif ch == " " and (i == 0 or i == last or comp[i - 1] == " "):
            out.append("%20")
        else:
            out.append(ch)
    return "".join(out)


def hledger_account(kind: str, name: str) -> str:
    """Our (kind, name) as an hledger/ledger account name."""
    parts = _components(name)
    return ":".join([HLEDGER_TOP[kind]] + [_hledger_component(p) for p in parts])


_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def percent_decode(text: str) -> str:
    """Undo %XX escapes (runs of bytes decoded as UTF-8; invalid runs kept literally)."""

    def one(match: re.Match) -> str:
        raw = bytes.fromhex(match.group(0).replace("%", ""))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return match.group(0)

    return _PERCENT.sub(one, text)


def percent_encode_text(text: str) -> str:
    """A description or author for a journal line: escape %, ; and control characters."""
    return "".join(_hex(ch, "%") if ch in "%;" or not ch.isprintable() else ch for ch in text)


def _bean_plain(ch: str) -> bool:
    if ch.isascii():
        return ch.isalnum()
    return unicodedata.category(ch) in ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")


def _bean_start(ch: str) -> bool:
    return (
        ("A" <= ch <= "Z")
        or ("0" <= ch <= "9")
        or (not ch.isascii() and unicodedata.category(ch) == "Lu")
    )


def _bean_body(text: str) -> list[str]:
    """Encode every character; a space is '-' unless the next piece is also a lone '-'."""
    pieces: list[str] = []
    for ch in reversed(text):
        if ch == " ":
            nxt = pieces[-1] if pieces else ""
            pieces.append("--20" if nxt == "-" else "-")
        elif _bean_plain(ch):
            pieces.append(ch)
        else:
            pieces.append(_hex(ch, "--"))
    pieces.reverse()
    return pieces


def _beancount_component(comp: str) -> str:
    body = _bean_body(comp)
    rest = "".join(body[1:])
    if _bean_start(comp[0]) and not (comp[0] == "X" and rest.startswith("--")):
        return body[0] + rest
    return "X" + _hex(comp[0], "--") + rest


def beancount_account(kind: str, name: str) -> str:
    """Our (kind, name) as a Beancount account name."""
    parts = _components(name)
    return ":".join([BEANCOUNT_TOP[kind]] + [_beancount_component(p) for p in parts])


_BEAN_ESCAPE = re.compile(r"(?:--[0-9A-F]{2})+|-")


def _beancount_decode_component(comp: str) -> str:
    if re.match(r"X--[0-9A-F]{2}", comp):
        comp = comp[1:]

    def one(match: re.Match) -> str:
        text = match.group(0)
        if text == "-":
            return " "
        raw = bytes.fromhex(text.replace("-", ""))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return text

    return _BEAN_ESCAPE.sub(one, comp)


def split_account(full: str, line: int) -> tuple[str, list[str]]:
    """(kind, components after the top level) of a journal account name."""
    top, _, rest = full.partition(":")
    kind = KIND_OF_TOP.get(top.lower())
    if kind is None:
        raise ParseProblem(
            line,
            f"account '{full}' does not start with a known top-level name "
            "(assets, liabilities, equity, income, expenses)",
        )
    if not rest:
        return kind, [top]
    return kind, rest.split(":")


def account_from_hledger(full: str, line: int) -> tuple[str, str]:
    kind, parts = split_account(full, line)
    return kind, ":".join(percent_decode(p) for p in parts)


def account_from_beancount(full: str, line: int) -> tuple[str, str]:
    kind, parts = split_account(full, line)
    return kind, ":".join(_beancount_decode_component(p) for p in parts)


# --- amounts ---------------------------------------------------------------------


def format_cents(cents: int) -> str:
    """Exact decimal text of integer cents: -1234 -> '-12.34'."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{whole}.{frac:02d}"


_NUMBER = re.compile(r"^(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d*))?$")


def parse_number(text: str, line: int) -> int:
    """Unsigned decimal text -> cents, exactly; finer than a cent is refused."""
    match = _NUMBER.match(text)
    if not text or not match or (match.group(1) is None and not match.group(2)):
        raise ParseProblem(line, f"'{text}' is not a plain decimal amount")
    whole = int((match.group(1) or "0").replace(",", ""))
    frac = (match.group(2) or "").rstrip("0")
    if len(frac) > 2:
        raise ParseProblem(
            line,
            f"amount {text} is finer than a cent; the ledger keeps whole cents and never rounds",
        )
    return whole * 100 + int(frac.ljust(2, "0"))


# --- CSV text cells ----------------------------------------------------------------

# A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_needs_quote_mark(text: str) -> bool:
    return text.lstrip("'").startswith(CSV_FORMULA_STARTS)


def csv_text_cell(text: str) -> str:
    """A free-text CSV cell a spreadsheet shows as text, never runs as a formula.

    Text that starts with a formula character once ALL its leading apostrophes
    are set aside gets one more leading ``'`` ("=1+1" -> "'=1+1", "'=x" -> "''=x");
    anything else is written as it is ("'tis fine" stays). csv_text_value undoes
    it exactly, so export -> import gives back the same text.
    """
    return "'" + text if _csv_needs_quote_mark(text) else text


def csv_text_value(cell: str) -> str:
    """The text a csv_text_cell holds: one leading ``'`` dropped under the same rule."""
    if cell.startswith("'") and _csv_needs_quote_mark(cell):
        return cell[1:]
    return cell


# --- fingerprints ------------------------------------------------------------------


def fingerprint(occurred_on: str, description: str, entries: list[tuple[str, str, int]]) -> str:
    """Content identity of a transaction: date, description and its (kind, name, cents) entries."""
    payload = json.dumps(
        [occurred_on, description, sorted([kind, name, cents] for kind, name, cents in entries)],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
