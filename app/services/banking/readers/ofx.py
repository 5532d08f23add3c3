"""OFX 1.x (SGML, an OFXHEADER: header) and 2.x (XML, an <?OFX ...?> instruction), QFX
(Intuit's extra tags are read past) and credit-card statements, read by one small
tokenizer of our own (docs/statements.md, "Reading the files").

SGML leaves are not closed (<TRNAMT>-6.60<FITID>...): a start tag followed by text is a
leaf; one followed by a tag is an aggregate, closed by its end tag. An element left open
is closed where SGML closes it: by its parent's end tag, or where an element of the
statement opens that belongs further out (_PARENTS: a LEDGERBAL after an unclosed
BANKTRANLIST is the statement's; a MEMO after an empty <NAME> is the line's). An empty
element (<MEMO></MEMO>, <NAME/>, an SGML <NAME> with nothing) is read as left out.
Every BANKTRANLIST of a statement is read. Only the five XML entities and character
references are decoded; a declaration (<!DOCTYPE, <!ENTITY) is refused, never read.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterator

from ..bankfile import (
    DEFAULT_MAX_LINES,
    BankFile,
    BankLine,
    BankStatement,
    StatementFormatError,
    TooManyLines,
    account_key,
    add_line,
)
from .common import (
    MAX_DEPTH,
    MAX_ELEMENTS,
    amount_cents,
    clean,
    decode_text,
    make_date,
    quote,
    xml_encoding,
)

# Markup of any kind (tags and end tags, comments, instructions) one file may hold: each
# is a step of the tokenizer, elements are capped apart (MAX_ELEMENTS).
MAX_MARKUP = 2 * MAX_ELEMENTS
# The largest OFX 1.x header (KEY:VALUE lines before the first '<'); a real one is ~150.
MAX_HEADER = 65536

_NAME = r"[A-Za-z][A-Za-z0-9._:-]*"
_TAG = re.compile(rf"<(/?)({_NAME})(\s[^<>]*|/)?>")  # <NAME/> too
_NUMERIC = re.compile(r"&(#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});")
# &amp; last, so that "&amp;lt;" stays the text "&lt;"
_NAMED = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"))
_DATE = re.compile(
    r"(\d{4})(\d{2})(\d{2})(?:\d{2}(?:\d{2}(?:\d{2}(?:\.\d{1,6})?)?)?)?"
    r"\s*(?:\[\s*[+-]?\d{1,2}(?:\.\d{1,2})?(?::[A-Za-z0-9 _/+-]{0,32})?\])?",
    re.ASCII,
)


class Node:
    """An OFX element as the tokenizer builds it: name, text, children, its line (for errors)."""

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


def _placed(parents: tuple[str, ...], *names: str) -> dict[str, frozenset[str]]:
    return dict.fromkeys(names, frozenset(parents))


# Where the elements of a bank or card statement belong (the OFX DTD's content models,
# for what the reader reads and what sits beside it). SGML closes an element the file left
# unclosed where an element opens that it may not hold: an element named here that opens
# while its parent is not the open element, but is open further out, first closes what is
# open inside that parent (docs/statements.md, "Reading the files"). Any other element
# opens inside the open one.
_PARENTS: dict[str, frozenset[str]] = {
    **_placed(("OFX",), "SIGNONMSGSRSV1", "BANKMSGSRSV1", "CREDITCARDMSGSRSV1"),
    **_placed(("BANKMSGSRSV1",), "STMTTRNRS"),
    **_placed(("CREDITCARDMSGSRSV1",), "CCSTMTTRNRS"),
    **_placed(("STMTTRNRS",), "STMTRS"),
    **_placed(("CCSTMTTRNRS",), "CCSTMTRS"),
    **_placed(
        ("STMTRS", "CCSTMTRS"),
        "CURDEF",
        "BANKACCTFROM",
        "CCACCTFROM",
        "BANKTRANLIST",
        "LEDGERBAL",
        "AVAILBAL",
        "BALLIST",
        "MKTGINFO",
    ),
    **_placed(("BANKTRANLIST", "INVTRANLIST", "INCTRAN"), "DTSTART", "DTEND"),
    **_placed(("BANKTRANLIST", "INVBANKTRAN"), "STMTTRN"),
    **_placed(
        ("STMTTRN",),
        "TRNTYPE",
        "DTPOSTED",
        "DTUSER",
        "DTAVAIL",
        "TRNAMT",
        "FITID",
        "CORRECTFITID",
        "CORRECTACTION",
        "SRVRTID",
        "CHECKNUM",
        "REFNUM",
        "SIC",
        "PAYEEID",
        "EXTDNAME",
        "PAYEE",
        "BANKACCTTO",
        "CCACCTTO",
        "MEMO",
        "IMAGEDATA",
        "CURRENCY",
        "ORIGCURRENCY",
        "INV401KSOURCE",
    ),
    **_placed(("STMTTRN", "PAYEE"), "NAME"),
    **_placed(("LEDGERBAL", "AVAILBAL", "BAL"), "BALAMT", "DTASOF"),
    **_placed(
        ("BANKACCTFROM", "BANKACCTTO", "CCACCTFROM", "CCACCTTO"),
        "BANKID",
        "BRANCHID",
        "ACCTID",
        "ACCTTYPE",
        "ACCTKEY",
    ),
}


class _Tree:
    """The tree being built: the stack of open elements under the document node (and how
    many of each name are open), and what the tokenizer met last (a leaf closed by its
    text, whose end tag is optional). An element closed empty (no text, no children) is
    taken out of its parent: an empty element is read as left out."""

    def __init__(self, max_lines: int) -> None:
        self.root = Node("#document", 1)
        self.stack = [self.root]
        self.open_names: dict[str, int] = {}
        self.just_closed_leaf: str | None = None
        self.elements = 0
        # STMTTRN in each open BANKTRANLIST: a list of too many lines is refused as soon
        # as it shows, before its lines are read (several lists of one account are
        # counted together when the lines are read: bankfile.add_line).
        self.max_lines = max_lines
        self.transactions: dict[int, int] = {}

    def leaf_text(self, value: str) -> None:
        """Text for the open element: it is a leaf, closed by it (text after an
        aggregate's children is read past)."""
        top = self.stack[-1]
        if top is not self.root and top.text is None and not top.children:
            top.text = value
            self.stack.pop()
            self.open_names[top.name] -= 1
            self.just_closed_leaf = top.name

    def _pop(self) -> None:
        """Close the open element; out of its parent (whose last child it is) if empty."""
        node = self.stack.pop()
        self.open_names[node.name] -= 1
        if node.text is None and not node.children:
            self.stack[-1].children.pop()
            self.transactions.pop(id(node), None)  # its id may be another node's next

    def _close_to(self, parents: frozenset[str]) -> None:
        """Before an element opens whose parent may be one of `parents` (_PARENTS) but is
        not the open element: close what is open inside the nearest of them, if one is
        open. Each step closes an element some start tag opened: linear in the file."""
        if any(self.open_names.get(parent) for parent in parents):
            while self.stack[-1].name not in parents:
                self._pop()

    def close(self, name: str, line: int) -> None:
        """</name>: the leaf just closed by its text, else the open element of that name
        (and any left open inside it)."""
        if name == self.just_closed_leaf:
            self.just_closed_leaf = None
            return
        stack = self.stack
        for depth in range(len(stack) - 1, 0, -1):
            if stack[depth].name == name:
                while len(stack) > depth:
                    self._pop()
                break
        else:
            raise StatementFormatError(f"line {line}", f"</{name}> closes no open <{name}>")
        self.just_closed_leaf = None

    def open(self, name: str, rest: str, line: int) -> None:
        """<name ...>: a new element of the open one (<name/> stays empty and closed)."""
        self.just_closed_leaf = None
        self.elements += 1
        if self.elements > MAX_ELEMENTS:
            raise StatementFormatError(f"line {line}", f"more than {MAX_ELEMENTS:,} elements")
        parents = _PARENTS.get(name)
        if parents is not None and self.stack[-1].name not in parents:
            self._close_to(parents)
        node = Node(sys.intern(name), line)
        parent = self.stack[-1]
        if name == "STMTTRN":
            count = self.transactions[id(parent)] = self.transactions.get(id(parent), 0) + 1
            if count > self.max_lines:
                raise TooManyLines(self.max_lines)
        if rest.rstrip().endswith("/"):
            return  # <name/>: empty, read as left out
        if len(self.stack) > MAX_DEPTH:
            raise StatementFormatError(f"line {line}", f"elements nested over {MAX_DEPTH} deep")
        parent.children.append(node)
        self.stack.append(node)
        names = self.open_names
        names[node.name] = names.get(node.name, 0) + 1
        if len(self.stack) == 2 and node.name != "OFX":
            raise StatementFormatError(f"line {line}", f"<{node.name}> where <OFX> begins")


def _cdata(text: str, lt: int, line: int, tree: _Tree) -> int:
    """A CDATA section at lt: its text as a leaf's; where it ends."""
    close = text.find("]]>", lt + 9)
    if close < 0:
        raise StatementFormatError(f"line {line}", "a CDATA section is never closed")
    tree.leaf_text(text[lt + 9 : close].strip())
    return close + 3


def _markup(text: str, lt: int, line: int, tree: _Tree) -> int:
    """The markup that opens at lt (a comment, an instruction, CDATA, a tag) read into
    the tree; where it ends. A declaration (<!DOCTYPE, <!ENTITY) is refused, never read."""
    if text.startswith(("<!", "<?"), lt):
        past = _past_unread(text, lt, line)
        if past is not None:
            return past
        if text.startswith("<![CDATA[", lt):
            return _cdata(text, lt, line, tree)
        if text.startswith("<!", lt):
            raise StatementFormatError(
                f"line {line}",
                "the file carries a DTD or a declaration (<!...>), which is refused",
            )
    match = _TAG.match(text, lt)
    if match is None:
        raise StatementFormatError(f"line {line}", "a '<' that starts no tag (truncated?)")
    closing, name, rest = match.group(1), match.group(2), match.group(3) or ""
    if closing:
        tree.close(name, line)
    else:
        tree.open(name, rest, line)
    return match.end()


def parse(text: str, start: int, max_lines: int = DEFAULT_MAX_LINES) -> Node:
    """The text from `start` on as a tree of Nodes under a document node whose children
    are <OFX> elements (two files run together are read as one). One pass: each '<'
    is looked at once; at most MAX_MARKUP pieces of markup (tags, end tags, comments,
    instructions) are read, each costing a bounded step."""
    lines = _Lines(text)
    tree = _Tree(max_lines)
    markup = 0
    pos, end = start, len(text)
    while pos < end:
        lt = text.find("<", pos)
        data = text[pos : end if lt < 0 else lt]
        if data.strip():
            tree.leaf_text(_unescape(data.strip()))
        if lt < 0:
            break
        markup += 1
        line = lines.at(lt)
        if markup > MAX_MARKUP:
            raise StatementFormatError(
                f"line {line}", f"more than {MAX_MARKUP:,} tags, comments and instructions"
            )
        pos = _markup(text, lt, line, tree)
    if len(tree.stack) > 1:
        raise StatementFormatError(
            f"line {lines.at(end)}",
            f"the file ends inside <{tree.stack[-1].name}> (truncated?)",
        )
    if tree.root.child("OFX") is None:
        raise StatementFormatError(f"line {lines.at(end)}", "the file holds no <OFX> element")
    return tree.root


def _header(data: bytes) -> tuple[dict[str, tuple[str, int]], int]:
    """An OFX 1.x header's fields KEY:VALUE (each value with its line number), and where
    the body (its first '<') begins. At most MAX_HEADER bytes (a real one is about 150)."""
    body = data.find(b"<", 0, MAX_HEADER + 1)
    if body < 0 and len(data) > MAX_HEADER:
        raise StatementFormatError(
            "line 1", f"the OFX header is over {MAX_HEADER:,} bytes long (no <OFX> after it)"
        )
    header = data[: body if body >= 0 else len(data)].decode("latin-1")
    fields = {}
    for number, raw in enumerate(header.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        key, colon, value = line.partition(":")
        if not colon or not re.fullmatch(r"[A-Z0-9]+", key.strip()):
            raise StatementFormatError(f"line {number}", "not an OFX header line KEY:VALUE")
        fields[key.strip()] = (value.strip(), number)
    if body < 0:
        last = header.count("\n") + 1
        raise StatementFormatError(f"line {last}", "the OFX header is followed by no <OFX>")
    return fields, body


def _decode(data: bytes, utf8: bool = False) -> tuple[str, int]:
    """The text and where the body begins: after a 1.x header, or 0 for 2.x. `utf8`: the
    bytes are UTF-8 whatever the file declares (a UTF-16 file, converted)."""
    head = data[:4096].decode("latin-1")
    if head.lstrip().startswith("OFXHEADER:"):
        fields, _body = _header(data)
        encoding = fields.get("ENCODING", ("", 0))[0].upper()
        declared, number = fields.get("CHARSET", ("", 1))
        if encoding in ("UTF-8", "UNICODE") or utf8:
            declared = "utf-8"
        text = decode_text(data, declared, f"line {number}")
        return text, text.find("<")
    in_declaration, _span = xml_encoding(head)
    return decode_text(data, "utf-8" if utf8 else (in_declaration or "utf-8")), 0


def ofx_date(text: str | None, where: str, what: str) -> dt.date:
    """An OFX date-time ('20261127', '20261127120000.000[-5:EST]'): its date part."""
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
        source=where,
    )


def _merge(statement: BankStatement, rs: Node, max_lines: int) -> None:
    statement.currency = statement.currency or clean(rs.value("CURDEF"))
    for tranlist in rs.children:
        if tranlist.name != "BANKTRANLIST":
            continue
        for name in ("DTSTART", "DTEND"):
            node = tranlist.child(name)
            if node is None:
                continue
            day = ofx_date(node.text, f"line {node.line}", name)
            if name == "DTSTART" and (statement.period_from is None or day < statement.period_from):
                statement.period_from = day
            if name == "DTEND" and (statement.period_to is None or day > statement.period_to):
                statement.period_to = day
        for trn in tranlist.children:
            if trn.name == "STMTTRN":
                add_line(statement, _line(trn), max_lines)
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


def read(data: bytes, max_lines: int = DEFAULT_MAX_LINES, *, utf8: bool = False) -> BankFile:
    """An OFX 1.x or 2.x file as a BankFile; at most max_lines lines (TooManyLines beyond)."""
    text, start = _decode(data, utf8)
    document = parse(text, start, max_lines)
    by_account: dict[str, BankStatement] = {}
    for rs in _statements(document):
        account = rs.child("BANKACCTFROM") or rs.child("CCACCTFROM")
        acctid = clean(account.value("ACCTID")) if account is not None else None
        key = account_key(acctid)
        statement = by_account.get(key)
        if statement is None:
            statement = by_account[key] = BankStatement(bank_account=acctid)
        _merge(statement, rs, max_lines)
    if not by_account:
        raise StatementFormatError(
            "<OFX>", "the OFX file holds no bank or card statement (STMTRS, CCSTMTRS)"
        )
    return BankFile(format="ofx", statements=list(by_account.values()))
