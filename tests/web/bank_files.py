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


def ofx(
    lines: list[dict],
    opening: int = 500000,
    *,
    also: str | None = None,
    start: str = "20260301",
    end: str = "20260331",
) -> bytes:
    """An OFX 1.x (SGML) statement of bank account 99887766 holding `lines` from `start`
    to `end`, closing at opening + their sum on `end` (the file gives no opening
    balance: OFX has none); `also`: a second account's statement (one line) in the file."""

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
            "</BANKACCTFROM>\n"
            f"<BANKTRANLIST><DTSTART>{start}<DTEND>{end}\n"
            f"{body}</BANKTRANLIST>\n"
            f"<LEDGERBAL><BALAMT>{money(closing)}<DTASOF>{end}</LEDGERBAL>\n"
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


def mt940(lines: list[dict], opening: int, closing_on: str) -> bytes:
    """An MT940 statement (one message) of bank account DE89370400440532013000 holding
    `lines` ({booked_on, amount_cents, payee, memo, bank_ref}), its opening balance
    `opening` (:60F:, the day before the first line) and its closing one, opening + the
    lines' sum, on `closing_on` (:62F:). Each :86: is structured: the memo in ?20, the
    payee in ?32."""

    def money(cents: int) -> str:
        return f"{abs(cents) // 100},{abs(cents) % 100:02d}"

    def day(iso: str) -> str:
        return iso[2:4] + iso[5:7] + iso[8:10]

    def balance(tag: str, cents: int, on: str) -> str:
        return f":{tag}:{'C' if cents >= 0 else 'D'}{day(on)}EUR{money(cents)}"

    closing = opening + sum(line["amount_cents"] for line in lines)
    first = lines[0]["booked_on"]
    out = [
        ":20:STMT" + day(closing_on),
        ":25:DE89370400440532013000",
        ":28C:1/1",
        balance("60F", opening, first),
    ]
    for line in lines:
        mark = "C" if line["amount_cents"] > 0 else "D"
        booked = day(line["booked_on"])
        out.append(
            f":61:{booked}{booked[2:]}{mark}{money(line['amount_cents'])}NTRFNONREF"
            f"//{line['bank_ref']}"
        )
        out.append(f":86:166?00TRANSFER?20{line['memo']}?32{line['payee']}")
    out += [balance("62F", closing, closing_on), "-"]
    return ("\r\n".join(out) + "\r\n").encode("ascii")
