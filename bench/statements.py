"""python -m bench.statements: what bank statements cost, in-process (no HTTP), on loaded books.

Example: python -m bench.statements --dialect sqlite --transactions 1000000
         python -m bench.statements --dialect postgresql --transactions 1000000

Times, each as a median over --repeat calls in the service's own unit of work (rolled
back each time, so every call meets the same books):

  upload (read + status), 5,000 lines   services.banking.statements.upload of a statement
                                        of LINES lines for one busy account over a month:
                                        reading the file, each line's status (duplicate,
                                        match, new), storing it and answering it with its
                                        suggestions (target: at most 1 s)
  post 1,000 lines in one request       services.banking.lines.act posting POSTED of its new
                                        lines, all or nothing (target: at most 2 s)
  1,000 plain postings (the floor)      the same postings through
                                        ledger.transactions.record_transaction alone, the
                                        one write path every posting takes

The file is an OFX 2 statement when the readers are installed
(services.banking.readers); otherwise the readers' output (a BankFile) is handed to
the service directly and the figure leaves out the reading.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import date, timedelta

from . import bulk, report

LINES = 5000
POSTED = 1000
ACCOUNT = 1  # "Asset 1": about 19 entries a day at 1M transactions
FIRST, DAYS = date(2025, 6, 1), 30
COUNTER = 5  # "Expense 1"


def parse_args(argv):
    return bulk.books_parser("python -m bench.statements", __doc__, repeat=5).parse_args(argv)


def _ms(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "max_ms": ordered[-1] * 1000,
        "n": len(ordered),
    }


def _lines(existing: list[tuple[date, int]], seed: int) -> list[tuple[date, int, str, str]]:
    """(booked_on, cents, payee, bank_ref): a third of them the account's own entries of
    the month (each a candidate of its line; since issue 44 a `match` only when certain,
    which these payees, sharing no word with the entries, are not), the rest new, in date
    order."""
    rng = random.Random(seed)
    chosen = rng.sample(existing, min(len(existing), LINES // 3))
    lines = [(day, cents, f"Payee {rng.randint(1, 300)}", "") for day, cents in chosen]
    while len(lines) < LINES:
        day = FIRST + timedelta(days=rng.randrange(DAYS))
        lines.append((day, rng.randint(1, 500_000) * rng.choice((1, -1)), "", ""))
    lines.sort(key=lambda line: line[0])
    return [
        (day, cents, payee or f"Payee {rng.randint(1, 300)}", f"BENCH-{n}")
        for n, (day, cents, payee, _) in enumerate(lines, start=1)
    ]


def _ofx(lines) -> bytes:
    def amount(cents: int) -> str:
        sign = "-" if cents < 0 else ""
        return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"

    last = FIRST + timedelta(days=DAYS - 1)
    body = "".join(
        f"<STMTTRN><TRNTYPE>OTHER</TRNTYPE><DTPOSTED>{day:%Y%m%d}</DTPOSTED>"
        f"<TRNAMT>{amount(cents)}</TRNAMT><FITID>{ref}</FITID><NAME>{payee}</NAME></STMTTRN>"
        for day, cents, payee, ref in lines
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE"'
        ' OLDFILEUID="NONE" NEWFILEUID="NONE"?>\n'
        "<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STMTRS><CURDEF>EUR</CURDEF>"
        "<BANKACCTFROM><BANKID>1</BANKID><ACCTID>BENCH1</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE>"
        f"</BANKACCTFROM><BANKTRANLIST><DTSTART>{FIRST:%Y%m%d}</DTSTART>"
        f"<DTEND>{last:%Y%m%d}</DTEND>{body}</BANKTRANLIST>"
        f"<LEDGERBAL><BALAMT>0.00</BALAMT><DTASOF>{last:%Y%m%d}</DTASOF></LEDGERBAL>"
        "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    ).encode()


def measure(url: str, repeat: int, seed: int) -> dict:
    import importlib.util

    from sqlalchemy import text

    from app import create_app, store
    from app.extensions import db
    from app.services.banking import bankfile, lines, statements
    from app.services.ledger import transactions

    app = create_app({"DATABASE_URL": url})
    results: dict = {"timings": {}, "lines": LINES, "posted": POSTED}
    with app.app_context():
        with store.reading():
            existing = [
                (day if isinstance(day, date) else date.fromisoformat(day), int(cents))
                for day, cents in db.session.execute(
                    text(
                        "SELECT t.occurred_on, e.amount_cents FROM transactions t"
                        " JOIN entries e ON e.transaction_id = t.id"
                        " WHERE e.account_id = :a AND t.occurred_on BETWEEN :f AND :l"
                    ),
                    {"a": ACCOUNT, "f": FIRST, "l": FIRST + timedelta(days=DAYS - 1)},
                )
            ]
            store.rollback()
        wanted = _lines(existing, seed)
        data = _ofx(wanted)
        real = importlib.util.find_spec("app.services.banking.readers") is not None
        results["reader"] = "OFX 2 file, the real reader" if real else "BankFile (no reader yet)"
        if not real:
            made = bankfile.BankFile(
                "ofx",
                [
                    bankfile.BankStatement(
                        "BENCH1",
                        lines=[
                            bankfile.BankLine(day, cents, payee, None, ref)
                            for day, cents, payee, ref in wanted
                        ],
                    )
                ],
            )
            statements.read_file = lambda _data: made  # type: ignore[assignment]
        uploads = []
        for _ in range(repeat):
            with store.writing():
                start = time.perf_counter()
                answer = statements.upload(ACCOUNT, data, None, None)
                uploads.append(time.perf_counter() - start)
                store.rollback()
        counts: dict[str, int] = {}
        for line in answer["lines"]:
            counts[line["status"]] = counts.get(line["status"], 0) + 1
        results["statuses"] = counts
        results["timings"][f"upload (read + status), {LINES:,} lines"] = _ms(uploads)
        with store.writing():
            kept = statements.upload(ACCOUNT, data, None, None)
            store.commit()
        new = [x["line_id"] for x in kept["lines"] if x["status"] == "new"][:POSTED]
        body = {
            "lines": [
                {"line_id": line_id, "action": "post", "account_id": COUNTER} for line_id in new
            ]
        }
        postings = []
        for _ in range(repeat):
            with store.writing():
                start = time.perf_counter()
                lines.act(kept["id"], body, None)
                postings.append(time.perf_counter() - start)
                store.rollback()
        results["timings"][f"post {len(new):,} lines in one request"] = _ms(postings)
        # The floor: the same postings through the ledger's own write path, one call
        # each, nothing else (what a statement's posting adds is the difference).
        by_line = {x["line_id"]: x for x in kept["lines"]}
        plain = []
        for _ in range(repeat):
            with store.writing():
                start = time.perf_counter()
                for line_id in new:
                    line = by_line[line_id]
                    transactions.record_transaction(
                        line["booked_on"],
                        line["payee"],
                        [
                            {"account_id": ACCOUNT, "amount_cents": line["amount_cents"]},
                            {"account_id": COUNTER, "amount_cents": -line["amount_cents"]},
                        ],
                        None,
                    )
                plain.append(time.perf_counter() - start)
                store.rollback()
        results["timings"][f"{len(new):,} plain postings (the floor)"] = _ms(plain)
        with store.writing():
            statements.remove(kept["id"])
            store.commit()
        db.engine.dispose()
    return results


def run(args) -> dict:
    results: dict = {"dialect": args.dialect, "transactions": args.transactions}
    with bulk.loaded_books(args) as url:
        results.update(measure(url, args.repeat, args.seed))
    return results


def render(results: dict) -> str:
    out = [
        f"{results['transactions']:,} transactions on {results['dialect']}, in-process;"
        f" read from: {results['reader']}; statuses {results['statuses']}",
        f"{'call':<40} {'median ms':>10} {'max ms':>8}",
    ]
    for name, t in results["timings"].items():
        out.append(f"{name:<40} {t['median_ms']:>10.1f} {t['max_ms']:>8.1f}")
    return "\n".join(out)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
