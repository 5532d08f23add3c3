"""OFX 1.x (SGML, an OFXHEADER: header) and 2.x (XML, an <?OFX ...?> instruction), QFX
(Intuit's extra tags are read past) and credit-card statements, read by one small
tokenizer of our own (docs/statements.md, "Reading the files").

SGML leaves are not closed (<TRNAMT>-6.60<FITID>...): a start tag followed by text is a
leaf; one followed by a tag is an aggregate, closed by its end tag (an aggregate left
open is closed by its parent's end tag). Only the five XML entities and character
references are decoded; a declaration (<!DOCTYPE, <!ENTITY) is refused, never read.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from ..bankfile import BankFile, BankLine, BankStatement, StatementFormatError, account_key
from .common import MAX_DEPTH, MAX_ELEMENTS, amount_cents, clean, decode_text, make_date, quote

_NAME = r"[A-Za-z][A-Za-z0-9._:-]*"
_TAG = re.compile(rf"<(/?)({_NAME})(\s[^<>]*)?>")
_XML_DECL_ENCODING = re.compile(r"""<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_NUMERIC = re.compile(r"&(#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});")
# &amp; last, so that "&amp;lt;" stays the text "&lt;"
_NAMED = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"))
_DATE = re.compile(
    r"(\d{4})(\d{2})(\d{2})(?:\d{2}(?:\d{2}(?:\d{2}(?:\.\d{1,6})?)?)?)?"
    r"\s*(?:\[\s*[+-]?\d{1,2}(?:\.\d{1,2})?(?::[A-Za-z0-9 _/+-]{0,32})?\])?"
)


class Node:
    __slots__ = ("children", "line", "name", "text")

    def __init__(self, name: str, line: int) -> None:
        self.name = name
        self.line = line
        self.text: str | None = None
        self.children: list[Node] = []

    def child(self, name: str) -> Node | None:
        for node in self.children:
            if node.name == name:
                return node
        return None

    def value(self, *path: str) -> str | None:
        node: Node | None = self
        for name in path:
            node = node.child(name) if node is not None else None
        return None if node is None else node.text


def _entity(match: re.Match[str]) -> str:
    name = match.group(1)
    code = int(name[2:], 16) if name[1] == "x" else int(name[1:])
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return match.group(0)
    return chr(code)


def _unescape(text: str) -> str:
    """The five XML entities and character references; any other &name; stays as it is."""
    if "&" not in text:
        return text
    for entity, char in _NAMED:
        text = text.replace(entity, char)
    if "&#" in text:
        text = _NUMERIC.sub(_entity, text)
    return text.replace("&amp;", "&")


class _Lines:
    """Line numbers of positions met in increasing order, counted once."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        if pos > self.pos:
            self.line += self.text.count("\n", self.pos, pos)
            self.pos = pos
        return self.line


# Read past, never read: (how it opens, how it closes, what is wrong when it never closes).
_UNREAD = (
    ("<!--", "-->", "a comment is never closed"),
    ("<?", "?>", "an instruction <? is never closed"),
)


def _past_unread(text: str, lt: int, line: int) -> int | None:
    """Where a comment or processing instruction opening at lt ends; None for anything else."""
    for opens, closes, unclosed in _UNREAD:
        if text.startswith(opens, lt):
            close = text.find(closes, lt + len(opens))
            if close < 0:
                raise StatementFormatError(f"line {line}", unclosed)
            return close + len(closes)
    return None


def parse(text: str, start: int) -> Node:
    """The text from `start` on as a tree of Nodes under a document node whose children
    are <OFX> elements (two files run together are read as one)."""
    lines = _Lines(text)
    root = Node("#document", 1)
    stack = [root]
    just_closed_leaf: str | None = None
    elements = 0
    pos, end = start, len(text)
    while pos < end:
        lt = text.find("<", pos)
        data = text[pos : end if lt < 0 else lt]
        if data.strip():
            top = stack[-1]
            if top is not root and top.text is None and not top.children:
                top.text = _unescape(data.strip())
                stack.pop()
                just_closed_leaf = top.name
            # text after an aggregate's children is read past
        if lt < 0:
            break
        line = lines.at(lt)
        past = _past_unread(text, lt, line)
        if past is not None:
            pos = past
            continue
        if text.startswith("<![CDATA[", lt):
            close = text.find("]]>", lt + 9)
            if close < 0:
                raise StatementFormatError(f"line {line}", "a CDATA section is never closed")
            top = stack[-1]
            if top is not root and top.text is None and not top.children:
                top.text = text[lt + 9 : close].strip()
                stack.pop()
                just_closed_leaf = top.name
            pos = close + 3
            continue
        if text.startswith("<!", lt):
            raise StatementFormatError(
                f"line {line}",
                "the file carries a DTD or a declaration (<!...>), which is refused",
            )
        match = _TAG.match(text, lt)
        if match is None:
            raise StatementFormatError(f"line {line}", "a '<' that starts no tag (truncated?)")
        closing, name, rest = match.group(1), match.group(2), match.group(3) or ""
        pos = match.end()
        if closing:
            if name == just_closed_leaf:
                just_closed_leaf = None
                continue
            for depth in range(len(stack) - 1, 0, -1):
                if stack[depth].name == name:
                    del stack[depth:]
                    break
            else:
                raise StatementFormatError(f"line {line}", f"</{name}> closes no open <{name}>")
            just_closed_leaf = None
            continue
        just_closed_leaf = None
        elements += 1
        if elements > MAX_ELEMENTS:
            raise StatementFormatError(f"line {line}", f"more than {MAX_ELEMENTS:,} elements")
        node = Node(name, line)
        stack[-1].children.append(node)
        if rest.rstrip().endswith("/"):
            continue
        if len(stack) > MAX_DEPTH:
            raise StatementFormatError(f"line {line}", f"elements nested over {MAX_DEPTH} deep")
        stack.append(node)
        if len(stack) == 2 and node.name != "OFX":
            raise StatementFormatError(f"line {line}", f"<{stack[1].name}> where <OFX> begins")
    if len(stack) > 1:
        raise StatementFormatError(
            f"line {lines.at(end)}",
            f"the file ends inside <{stack[-1].name}> (truncated?)",
        )
    if root.child("OFX") is None:
        raise StatementFormatError(f"line {lines.at(end)}", "the file holds no <OFX> element")
    return root


def _decode(data: bytes) -> tuple[str, int]:
    """The text and where the body begins: after a 1.x header, or 0 for 2.x."""
    head = data[:4096].decode("latin-1")
    if head.lstrip().startswith("OFXHEADER:"):
        body = data.find(b"<")
        header = data[: body if body >= 0 else len(data)].decode("latin-1")
        fields = {}
        for number, raw in enumerate(header.splitlines(), start=1):
            line = raw.strip()
            if not line:
                continue
            key, colon, value = line.partition(":")
            if not colon or not re.fullmatch(r"[A-Z0-9]+", key.strip()):
                raise StatementFormatError(f"line {number}", "not an OFX header line KEY:VALUE")
            fields[key.strip()] = value.strip()
        if body < 0:
            last = header.count("\n") + 1
            raise StatementFormatError(f"line {last}", "the OFX header is followed by no <OFX>")
        encoding = fields.get("ENCODING", "").upper()
        declared = "utf-8" if encoding in ("UTF-8", "UNICODE") else fields.get("CHARSET")
        text = decode_text(data, declared)
        return text, text.find("<")
    match = _XML_DECL_ENCODING.search(head)
    return decode_text(data, match.group(1) if match else "utf-8"), 0


def ofx_date(text: str | None, where: str, what: str) -> dt.date:
    value = (text or "").strip()
    match = _DATE.fullmatch(value)
    if match is None:
        raise StatementFormatError(where, f"{what} {quote(value)} is not an OFX date")
    year, month, day = (int(g) for g in match.group(1, 2, 3))
    return make_date(year, month, day, where, value)


def _statements(node: Node) -> Iterator[Node]:
    """STMTRS and CCSTMTRS in file order, however deep."""
    pending = [node]
    while pending:
        current = pending.pop()
        if current.name in ("STMTRS", "CCSTMTRS"):
            yield current
            continue
        pending.extend(reversed(current.children))


def _line(trn: Node) -> BankLine:
    where = f"line {trn.line}"
    posted = trn.child("DTPOSTED")
    if posted is None:
        raise StatementFormatError(where, "STMTTRN has no DTPOSTED")
    amount = trn.child("TRNAMT")
    if amount is None:
        raise StatementFormatError(where, "STMTTRN has no TRNAMT")
    return BankLine(
        booked_on=ofx_date(posted.text, f"line {posted.line}", "DTPOSTED"),
        amount_cents=amount_cents(amount.text, f"line {amount.line}", "TRNAMT"),
        payee=clean(trn.value("NAME") or trn.value("PAYEE", "NAME")),
        memo=clean(trn.value("MEMO")),
        bank_ref=clean(trn.value("FITID")),
    )


def _merge(statement: BankStatement, rs: Node) -> None:
    statement.currency = statement.currency or clean(rs.value("CURDEF"))
    tranlist = rs.child("BANKTRANLIST")
    if tranlist is not None:
        for name in ("DTSTART", "DTEND"):
            node = tranlist.child(name)
            if node is None:
                continue
            day = ofx_date(node.text, f"line {node.line}", name)
            if name == "DTSTART" and (statement.period_from is None or day < statement.period_from):
                statement.period_from = day
            if name == "DTEND" and (statement.period_to is None or day > statement.period_to):
                statement.period_to = day
        statement.lines.extend(_line(trn) for trn in tranlist.children if trn.name == "STMTTRN")
    ledger = rs.child("LEDGERBAL")
    if ledger is not None:
        balance = ledger.child("BALAMT")
        if balance is None:
            raise StatementFormatError(f"line {ledger.line}", "LEDGERBAL has no BALAMT")
        cents = amount_cents(balance.text, f"line {balance.line}", "BALAMT")
        asof = ledger.child("DTASOF")
        on = None if asof is None else ofx_date(asof.text, f"line {asof.line}", "DTASOF")
        latest = statement.closing_balance_on
        if statement.closing_balance_cents is None or (on and (latest is None or on >= latest)):
            statement.closing_balance_cents, statement.closing_balance_on = cents, on


def read(data: bytes) -> BankFile:
    text, start = _decode(data)
    document = parse(text, start)
    by_account: dict[str, BankStatement] = {}
    for rs in _statements(document):
        account = rs.child("BANKACCTFROM") or rs.child("CCACCTFROM")
        acctid = clean(account.value("ACCTID")) if account is not None else None
        key = account_key(acctid)
        statement = by_account.get(key)
        if statement is None:
            statement = by_account[key] = BankStatement(bank_account=acctid)
        _merge(statement, rs)
    if not by_account:
        raise StatementFormatError(
            "<OFX>", "the OFX file holds no bank or card statement (STMTRS, CCSTMTRS)"
        )
    return BankFile(format="ofx", statements=list(by_account.values()))
