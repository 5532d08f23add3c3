"""What the import parsers produce, and the rules they share.

A parser turns a file into declared accounts and ParsedTx objects whose every
posting has exact cents. The checks that do not depend on the syntax live here:
one commodity per file, at most one elided amount per transaction (it is then
the negated sum of the others, always whole cents), and a zero sum.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .plaintext import ParseProblem, format_cents, parse_number


@dataclass
class Posting:
    line: int
    kind: str
    name: str
    cents: int | None  # None: elided, to be inferred
    commodity: str = ""


@dataclass
class ParsedTx:
    line: int
    date: str
    description: str
    author: str | None = None
    postings: list[Posting] = field(default_factory=list)


@dataclass
class Parsed:
    accounts: list[tuple[int, str, str]] = field(default_factory=list)  # (line, kind, name)
    transactions: list[ParsedTx] = field(default_factory=list)
    commodity: str | None = None  # the one commodity seen so far

    def use_commodity(self, commodity: str, line: int) -> None:
        if self.commodity is None:
            self.commodity = commodity
        elif commodity != self.commodity:
            shown = lambda c: f"'{c}'" if c else "no commodity"  # noqa: E731
            raise ParseProblem(
                line,
                f"several commodities in one file ({shown(self.commodity)} and {shown(commodity)});"
                " the ledger keeps a single currency",
            )

    def finish(self, tx: ParsedTx) -> None:
        """Resolve the elided amount, check the sum, and keep the transaction."""
        for posting in tx.postings:
            if posting.cents is not None:
                self.use_commodity(posting.commodity, posting.line)
        elided = [p for p in tx.postings if p.cents is None]
        if len(elided) > 1:
            raise ParseProblem(
                elided[1].line,
                "more than one posting has no amount, so the missing amounts cannot be inferred",
            )
        total = sum(p.cents for p in tx.postings if p.cents is not None)
        if elided:
            if len(tx.postings) < 2:
                raise ParseProblem(tx.line, "a transaction needs at least 2 postings")
            elided[0].cents = -total
        elif total != 0:
            raise ParseProblem(
                tx.line,
                f"the postings do not balance: they sum to {format_cents(total)}, not 0",
            )
        self.transactions.append(tx)


_COMMODITY = r'"[^"]+"|[^\s\d.,+\-"@=;{}()*/]+'
_AMOUNT = re.compile(
    rf"^(?P<sign>[-+])?\s*(?P<pre>{_COMMODITY})?\s*(?P<sign2>[-+])?\s*(?P<num>[\d.,]+)"
    rf"\s*(?P<post>{_COMMODITY})?$"
)


def refuse_costs_and_checks(amount: str, line: int) -> None:
    """Costs, prices and balance assertions: constructs a one-currency ledger cannot hold."""
    if "{" in amount:
        raise ParseProblem(line, "costs ({...}) are not supported: the ledger keeps one currency")
    if "@" in amount:
        raise ParseProblem(
            line, "prices and costs (@, @@) are not supported: the ledger keeps one currency"
        )
    if "=" in amount:
        raise ParseProblem(line, "balance assertions and assignments (=) are not supported")


def parse_amount(text: str, line: int) -> tuple[int, str]:
    """'-$1,234.56', '12.34 USD', '12 EUR', '7' -> (signed cents, commodity)."""
    text = text.strip()
    match = _AMOUNT.match(text)
    if not match or (match["sign"] and match["sign2"]) or (match["pre"] and match["post"]):
        raise ParseProblem(line, f"'{text}' is not a plain amount (number with one commodity)")
    cents = parse_number(match["num"], line)
    if "-" in (match["sign"], match["sign2"]):
        cents = -cents
    commodity = (match["pre"] or match["post"] or "").strip('"')
    return cents, commodity
