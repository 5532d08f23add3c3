"""camt.053 (ISO 20022 BankToCustomerStatement), any version: the root is Document in a
namespace beginning urn:iso:std:iso:20022:tech:xsd:camt.053.001. (docs/statements.md).

Parsed with the standard library's expat, hardened before the first byte: a DOCTYPE,
an entity or notation declaration or an external entity reference stops the parse with
a refusal (never expanded, never fetched). Errors name the line and the element path.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any, TypeVar
from xml.parsers import expat

from ..bankfile import (
    DEFAULT_MAX_LINES,
    BankFile,
    BankLine,
    BankStatement,
    NotAStatement,
    StatementFormatError,
    TooManyLines,
    account_key,
    add_line,
)
from .common import (
    MAX_DEPTH,
    MAX_ELEMENTS,
    amount_cents,
    charset,
    clean,
    iso_date,
    xml_encoding,
)

T = TypeVar("T")
NAMESPACE_PREFIX = "urn:iso:std:iso:20022:tech:xsd:camt.053.001."
# Attributes one element may have (a camt element has one or two). expat reads a start
# tag's attributes, and pyexpat makes their dict, in one call that holds the interpreter:
# an element of 400,000 attributes kept every other request waiting for seconds. Looked
# for before expat, by a pattern that reads each tag once (atomic groups, no backtracking).
MAX_ATTRIBUTES = 256
_MANY_ATTRIBUTES = re.compile(
    rb"<[^\s<>/!?]+(?:\s+(?>[^\s=<>]+)\s*=\s*(?>\"[^\"]*\"|'[^']*')){%d}" % (MAX_ATTRIBUTES + 1)
)
_NO_ATTRS: dict = {}  # shared by every element whose attributes are not read


class Element:
    """An XML element as the reader keeps it: name, text, children, its line (for errors)."""

    __slots__ = ("attrs", "children", "line", "name", "parent", "text")

    def __init__(self, name: str, parent: Element | None, line: int, attrs: dict) -> None:
        self.name, self.parent, self.line, self.attrs = name, parent, line, attrs
        self.children: list[Element] = []
        self.text = ""

    def child(self, *path: str) -> Element | None:
        node: Element | None = self
        for name in path:
            if node is None:
                return None
            node = next((c for c in node.children if c.name == name), None)
        return node

    def all(self, name: str) -> list[Element]:
        return [c for c in self.children if c.name == name]

    def value(self, *path: str) -> str | None:
        node = self.child(*path)
        return None if node is None else node.text.strip()

    def where(self) -> str:
        """'line 40, Document/BkToCstmrStmt/Stmt[1]/Ntry[2]/Amt'."""
        parts = []
        node: Element | None = self
        while node is not None:
            label = node.name
            if node.parent is not None:
                same = node.parent.all(node.name)
                if len(same) > 1:
                    label += f"[{same.index(node) + 1}]"
            parts.append(label)
            node = node.parent
        return f"line {self.line}, {'/'.join(reversed(parts))}"


class _Builder:
    """expat's handlers: the tree of Elements, capped (MAX_ELEMENTS, MAX_DEPTH), the root
    checked to be a camt.053 Document, and anything declaring a DTD or an entity refused."""

    def __init__(self, parser: Any, max_lines: int) -> None:
        self.parser = parser
        # Ntry in each open Stmt: a statement of too many lines is refused as soon as it
        # shows, before the rest is parsed (several Stmt of one account are counted
        # together when the lines are read: bankfile.add_line).
        self.max_lines = max_lines
        self.entries: dict[int, int] = {}
        self.stack: list[Element] = []
        self.texts: list[list[str]] = []  # each open element's text, joined at its end
        self.found: tuple[Element, str] | None = None
        self.count = 0

    def refuse(self, *_args: object) -> int:
        raise StatementFormatError(
            f"line {self.parser.CurrentLineNumber}",
            "the file carries a DTD or an entity declaration, which is refused",
        )

    def _check_size(self) -> None:
        self.count += 1
        if self.count > MAX_ELEMENTS:
            what = f"more than {MAX_ELEMENTS:,} elements"
        elif len(self.stack) >= MAX_DEPTH:
            what = f"elements nested over {MAX_DEPTH} deep"
        else:
            return
        raise StatementFormatError(f"line {self.parser.CurrentLineNumber}", what)

    def start(self, tag: str, attrs: dict) -> None:
        self._check_size()
        prefix, _, local = tag.rpartition(":")
        parent = self.stack[-1] if self.stack else None
        # Only an amount's attributes are read (its Ccy): no other element keeps its own.
        kept = attrs if local == "Amt" and attrs else _NO_ATTRS
        element = Element(local, parent, self.parser.CurrentLineNumber, kept)
        if parent is None:
            namespace = attrs.get(f"xmlns:{prefix}" if prefix else "xmlns", "")
            self.found = (element, namespace)
            if local != "Document" or not namespace.startswith(NAMESPACE_PREFIX):
                raise NotAStatement()
        else:
            if local == "Ntry":
                count = self.entries[id(parent)] = self.entries.get(id(parent), 0) + 1
                if count > self.max_lines:
                    raise TooManyLines(self.max_lines)
            parent.children.append(element)
        self.stack.append(element)
        self.texts.append([])

    def end(self, _tag: str) -> None:
        """The element's text, when it holds no elements. An empty one (<Ustrd/>, no
        children, only white space) is taken out of its parent, whose last child it is:
        read as left out."""
        element, parts = self.stack.pop(), self.texts.pop()
        if not element.children:
            element.text = "".join(parts)
            if element.parent is not None and not element.text.strip():
                element.parent.children.pop()
                self.entries.pop(id(element), None)  # its id may be another element's next

    def chars(self, text: str) -> None:
        if self.texts:
            self.texts[-1].append(text)

    def attach(self) -> None:
        parser = self.parser
        parser.StartDoctypeDeclHandler = self.refuse
        parser.EntityDeclHandler = self.refuse
        parser.UnparsedEntityDeclHandler = self.refuse
        parser.NotationDeclHandler = self.refuse
        parser.ExternalEntityRefHandler = self.refuse
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.chars


def _new_parser() -> Any:
    """expat without namespace processing (a third of the parse's time: names are read
    without their prefix, the root's namespace from its xmlns attribute), parameter
    entities never read."""
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser


def _check_declared_encoding(data: bytes) -> None:
    """The XML declaration's encoding, when it names one, is one of the charsets a
    statement may be in (common.charset), else a refusal naming it, before expat reads."""
    declared, _span = xml_encoding(data[:1024].decode("latin-1"))
    if declared is not None:
        try:
            charset(declared, "line 1")
        except StatementFormatError as exc:
            raise StatementFormatError(
                exc.where,
                f"the XML declaration names an encoding this reader does not know: {exc.problem}",
            ) from None


def _broken(exc: expat.ExpatError, builder: _Builder) -> StatementFormatError:
    """expat's own words, with the path of the element open where it stopped."""
    where = f"line {exc.lineno}"
    if builder.stack:
        open_element = builder.stack[-1]
        where = open_element.where().replace(f"line {open_element.line}", where, 1)
    return StatementFormatError(where, expat.ErrorString(exc.code) or "broken XML")


def parse_xml(data: bytes, max_lines: int = DEFAULT_MAX_LINES) -> tuple[Element, str]:
    """The root element and its namespace. A declaration or broken XML: 400."""
    _check_declared_encoding(data)
    crowded = _MANY_ATTRIBUTES.search(data)
    if crowded is not None:
        line = data.count(b"\n", 0, crowded.start()) + 1
        raise StatementFormatError(
            f"line {line}",
            f"an element with more than {MAX_ATTRIBUTES} attributes",
        )
    parser = _new_parser()
    builder = _Builder(parser, max_lines)
    builder.attach()
    try:
        parser.Parse(data, True)
    except (LookupError, ValueError):  # an encoding expat lacks, found past the check
        raise StatementFormatError(
            "line 1", "the XML declaration names an encoding this reader does not know"
        ) from None
    except expat.ExpatError as exc:
        raise _broken(exc, builder) from None
    if builder.found is None:
        raise NotAStatement()
    return builder.found


def _parsed(node: Element, parse: Callable[..., T], *args: str) -> T:
    """parse(node's text, where, *args), its refusal naming the element's path: worked out
    only on a refusal (the path counts siblings; every entry's would make a read quadratic)."""
    try:
        return parse(node.text, "", *args)
    except StatementFormatError as exc:
        raise StatementFormatError(node.where(), exc.problem) from None


def _date_of(holder: Element | None) -> dt.date | None:
    """The date of a DateAndDateTimeChoice (Dt, or DtTm's date)."""
    if holder is None:
        return None
    for name in ("Dt", "DtTm"):
        node = holder.child(name)
        if node is not None:
            return _parsed(node, iso_date)
    raise StatementFormatError(holder.where(), "holds neither Dt nor DtTm")


def _signed(holder: Element) -> int:
    amount = holder.child("Amt")
    if amount is None:
        raise StatementFormatError(holder.where(), "has no Amt")
    text = amount.text.strip()
    if text[:1] in ("+", "-"):
        raise StatementFormatError(amount.where(), "Amt carries a sign: CdtDbtInd gives it")
    cents = _parsed(amount, amount_cents, "Amt")
    indicator = holder.value("CdtDbtInd")
    if indicator == "CRDT":
        return cents
    if indicator == "DBIT":
        return -cents
    node = holder.child("CdtDbtInd") or holder
    raise StatementFormatError(node.where(), "CdtDbtInd is neither CRDT nor DBIT")


def _booked(ntry: Element) -> bool:
    status = ntry.child("Sts")
    if status is None:
        return True
    code = status.value("Cd") if status.children else status.text.strip()
    return (code or "").upper() == "BOOK"


def _party(details: list[Element], role: str) -> str | None:
    for tx in details:
        party = tx.child("RltdPties", role)
        if party is not None:
            name = clean(party.value("Nm") or party.value("Pty", "Nm"))
            if name:
                return name
    return None


def _line(ntry: Element) -> BankLine:
    cents = _signed(ntry)
    holder = ntry.child("BookgDt") or ntry.child("ValDt")
    booked_on = _date_of(holder)
    if booked_on is None:
        raise StatementFormatError(ntry.where(), "a booked entry without BookgDt")
    details = [tx for block in ntry.all("NtryDtls") for tx in block.all("TxDtls")]
    unstructured = [
        text
        for tx in details
        for rmt in tx.all("RmtInf")
        for ustrd in rmt.all("Ustrd")
        if (text := clean(ustrd.text))
    ]
    return BankLine(
        booked_on=booked_on,
        amount_cents=cents,
        payee=_party(details, "Dbtr" if ntry.value("CdtDbtInd") == "CRDT" else "Cdtr"),
        memo=" ".join(unstructured) if unstructured else clean(ntry.value("AddtlNtryInf")),
        bank_ref=clean(ntry.value("AcctSvcrRef")) or clean(ntry.value("NtryRef")),
        source=f"line {ntry.line}",
    )


def _account(stmt: Element) -> str | None:
    ident = stmt.child("Acct", "Id")
    if ident is None:
        return None
    return clean(ident.value("IBAN") or ident.value("Othr", "Id"))


def _currency(stmt: Element) -> str | None:
    currency = clean(stmt.value("Acct", "Ccy"))
    if currency:
        return currency
    for holder in (*stmt.all("Bal"), *stmt.all("Ntry")):
        amount = holder.child("Amt")
        if amount is not None and amount.attrs.get("Ccy"):
            return clean(amount.attrs["Ccy"])
    return None


def _period(statement: BankStatement, stmt: Element) -> None:
    period = stmt.child("FrToDt")
    if period is None:
        return
    for names, is_start in ((("FrDtTm", "FrDt"), True), (("ToDtTm", "ToDt"), False)):
        node = next((n for name in names if (n := period.child(name)) is not None), None)
        if node is None:
            continue
        day = _parsed(node, iso_date)
        if is_start and (statement.period_from is None or day < statement.period_from):
            statement.period_from = day
        if not is_start and (statement.period_to is None or day > statement.period_to):
            statement.period_to = day


def _balances(statement: BankStatement, stmt: Element, opened: list) -> None:
    for bal in stmt.all("Bal"):
        code = bal.value("Tp", "CdOrPrtry", "Cd")
        if code not in ("OPBD", "CLBD"):
            continue
        cents, on = _signed(bal), _date_of(bal.child("Dt"))
        if code == "OPBD":
            if statement.opening_balance_cents is None or (on and opened[0] and on < opened[0]):
                statement.opening_balance_cents, opened[0] = cents, on
        else:
            latest = statement.closing_balance_on
            if statement.closing_balance_cents is None or (on and (latest is None or on >= latest)):
                statement.closing_balance_cents, statement.closing_balance_on = cents, on


def read(data: bytes, max_lines: int = DEFAULT_MAX_LINES) -> BankFile:
    """A camt.053 file as a BankFile; at most max_lines lines (TooManyLines beyond)."""
    root, _namespace = parse_xml(data, max_lines)
    report = root.child("BkToCstmrStmt")
    if report is None:
        raise StatementFormatError(root.where(), "Document holds no BkToCstmrStmt")
    statements = report.all("Stmt")
    if not statements:
        raise StatementFormatError(report.where(), "BkToCstmrStmt holds no Stmt")
    by_account: dict[str, tuple[BankStatement, list]] = {}
    for stmt in statements:
        account = _account(stmt)
        key = account_key(account)
        if key not in by_account:
            by_account[key] = (BankStatement(bank_account=account), [None])
        statement, opened = by_account[key]
        statement.currency = statement.currency or _currency(stmt)
        _period(statement, stmt)
        _balances(statement, stmt, opened)
        for ntry in stmt.all("Ntry"):
            if _booked(ntry):
                add_line(statement, _line(ntry), max_lines)
    return BankFile(format="camt.053", statements=[s for s, _ in by_account.values()])
