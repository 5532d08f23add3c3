"""The bank's files the browser tests upload: OFX 1.x (SGML) as a bank sends it, its
lines in March 2026 with the payees the statement tests' rules know."""

from __future__ import annotations

# Payee → expense or income account; the rules file each payee there.
PAYEES = [
    ("Corner Grocer", "Food", -2345),
    ("City Power Company", "Utilities", -8800),
    ("Hall Hire Ltd", "Hall", -15000),
    ("Member subscription", "Dues", 2500),
    ("Printing Shop", "Printing", -1999),
]


def statement_lines(count: int, *, long_words: bool = False) -> list[dict]:
    """`count` lines in March 2026, the payees in turn (amounts varied a little)."""
    lines = []
    for n in range(count):
        payee, _, cents = PAYEES[n % len(PAYEES)]
        if long_words and n % 7 == 3:
            payee = "SUPERMARKETCHAINOUTLETNORTHSIDE 0042"
        lines.append(
            {
                "booked_on": f"2026-03-{1 + n * 30 // max(count, 1):02d}",
                "amount_cents": cents - (n % 4),
                "payee": payee,
                "memo": f"Card payment {n + 1} reference {1000 + n}",
                "bank_ref": f"FIT{n + 1:05d}",
            }
        )
    return lines


def ofx(lines: list[dict], opening: int = 500000, *, also: str | None = None) -> bytes:
    """An OFX 1.x (SGML) statement of bank account 99887766 holding `lines`, closing at
    opening + their sum; `also`: a second account's statement (one line) in the file."""

    def money(cents: int) -> str:
        sign = "-" if cents < 0 else ""
        return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"

    def statement(account: str, lines: list[dict]) -> str:
        closing = opening + sum(line["amount_cents"] for line in lines)
        body = "".join(
            "<STMTTRN>\n"
            f"<TRNTYPE>{'CREDIT' if line['amount_cents'] > 0 else 'DEBIT'}\n"
            f"<DTPOSTED>{line['booked_on'].replace('-', '')}120000\n"
            f"<TRNAMT>{money(line['amount_cents'])}\n"
            f"<FITID>{line['bank_ref']}\n"
            f"<NAME>{line['payee']}\n"
            f"<MEMO>{line['memo']}\n"
            "</STMTTRN>\n"
            for line in lines
        )
        return (
            "<STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>\n"
            f"<STMTRS><CURDEF>EUR<BANKACCTFROM><BANKID>12345<ACCTID>{account}<ACCTTYPE>CHECKING"
            "</BANKACCTFROM>\n<BANKTRANLIST><DTSTART>20260301<DTEND>20260331\n"
            f"{body}</BANKTRANLIST>\n"
            f"<LEDGERBAL><BALAMT>{money(closing)}<DTASOF>20260331</LEDGERBAL>\n"
            "</STMTRS></STMTTRNRS>\n"
        )

    other = statement(also, statement_lines(1)) if also else ""
    text = (
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\n"
        "CHARSET:1252\nCOMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n"
        "<OFX>\n<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS>"
        "<DTSERVER>20260401<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>\n"
        f"<BANKMSGSRSV1>{other}{statement('99887766', lines)}</BANKMSGSRSV1>\n</OFX>\n"
    )
    return text.encode("ascii")
