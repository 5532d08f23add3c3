"""camt.053 (ISO 20022 BankToCustomerStatement), any version: the root is Document in a
namespace beginning urn:iso:std:iso:20022:tech:xsd:camt.053.001. (docs/statements.md).

Parsed with the standard library's expat, hardened before the first byte: a DOCTYPE,
an entity or notation declaration or an external entity reference stops the parse with
a refusal (never expanded, never fetched). Errors name the line and the element path.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TypeVar
from xml.parsers import expat

from ..bankfile import (
    BankFile,
    BankLine,
    BankStatement,
    NotAStatement,
    StatementFormatError,
    account_key,
)
from .common import MAX_DEPTH, MAX_ELEMENTS, amount_cents, clean, iso_date

T = TypeVar("T")
NAMESPACE_PREFIX = "urn:iso:std:iso:20022:tech:xsd:camt.053.001."


class Element:
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


def parse_xml(data: bytes) -> tuple[Element, str]:
    """The root element and its namespace. A declaration or broken XML: 400."""
    # No namespace processing (a third of the parse's time): names are read without their
    # prefix, and the root's namespace from its xmlns attribute.
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    texts: list[list[str]] = []  # the character data of each open element, joined at its end
    found: list[tuple[Element, str]] = []
    count = [0]

    def refuse(*_args: object) -> int:
        raise StatementFormatError(
            f"line {parser.CurrentLineNumber}",
            "the file carries a DTD or an entity declaration, which is refused",
        )

    def start(tag: str, attrs: dict) -> None:
        count[0] += 1
        if count[0] > MAX_ELEMENTS or len(stack) >= MAX_DEPTH:
            what = (
                f"more than {MAX_ELEMENTS:,} elements"
                if count[0] > MAX_ELEMENTS
                else (f"elements nested over {MAX_DEPTH} deep")
            )
            raise StatementFormatError(f"line {parser.CurrentLineNumber}", what)
        prefix, _, local = tag.rpartition(":")
        parent = stack[-1] if stack else None
        element = Element(local, parent, parser.CurrentLineNumber, attrs)
        if parent is None:
            namespace = attrs.get(f"xmlns:{prefix}" if prefix else "xmlns", "")
            found.append((element, namespace))
            if local != "Document" or not namespace.startswith(NAMESPACE_PREFIX):
                raise NotAStatement()
        else:
            parent.children.append(element)
        stack.append(element)
        texts.append([])

    def end(_tag: str) -> None:
        element, parts = stack.pop(), texts.pop()
        if not element.children:
            element.text = "".join(parts)

    def chars(text: str) -> None:
        if texts:
            texts[-1].append(text)

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.NotationDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except (LookupError, ValueError):  # "encoding='UTF-3'", or a multi-byte one expat lacks
        raise StatementFormatError(
            "line 1", "the XML declaration names an encoding this reader does not know"
        ) from None
    except expat.ExpatError as exc:
        where = f"line {exc.lineno}"
        if stack:
            where = stack[-1].where().replace(f"line {stack[-1].line}", where, 1)
        raise StatementFormatError(where, expat.ErrorString(exc.code) or "broken XML") from None
    if not found:
        raise NotAStatement()
    return found[0]


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


def read(data: bytes) -> BankFile:
    root, _namespace = parse_xml(data)
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
        statement.lines.extend(_line(ntry) for ntry in stmt.all("Ntry") if _booked(ntry))
    return BankFile(format="camt.053", statements=[s for s, _ in by_account.values()])
