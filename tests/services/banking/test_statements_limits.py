"""What a statement file may hold, over HTTP on both stores (docs/statements.md, "Reading
the files"): more than MAX_STATEMENT_LINES lines is 413, text either database cannot
keep is 400 naming the line or the field, a charset not listed is 400 naming it; each
refusal in the `{error}` shape with nothing stored, never a 500. The text that is
accepted, at its limits, is stored as read, and the books holding it restore into the
other store. The real readers here (no stand-in)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db
from harness import statement_files
from tests.services.banking.stand_in import upload_statement
from tests.testkit import restored_backup


def mt940(*entries: str, account: str = "DE89370400440532013000") -> bytes:
    body = "".join(entries)
    return (
        f":20:X\r\n:25:{account}\r\n:60F:C260101EUR1,00\r\n{body}:62F:C260131EUR1,00\r\n-\r\n"
    ).encode()


def entry(memo: str | None = None, ref: str = "NONREF", amount: str = "1,00") -> str:
    return f":61:260102C{amount}NTRF{ref}\r\n" + (f":86:{memo}\r\n" if memo is not None else "")


def stored(app) -> tuple[int, int]:
    with app.app_context():
        counts = tuple(
            db.session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in ("statements", "statement_lines")
        )
        db.session.rollback()
        return counts  # type: ignore[return-value]


def test_more_lines_than_the_limit_is_413_naming_it_and_nothing_is_stored(app, api, books):
    app.config["MAX_STATEMENT_LINES"] = 5
    for kind in statement_files.FORMATS:
        refused = upload_statement(api, books["bank"], statement_files.statement(kind, 6))
        assert refused.status_code == 413, refused.get_json()
        assert refused.get_json() == {
            "error": "the statement holds more than the limit of 5 lines "
            "(MAX_STATEMENT_LINES); nothing was stored"
        }
        made = upload_statement(api, books["bank"], statement_files.statement(kind, 5))
        assert made.status_code == 201 and len(made.get_json()["lines"]) == 5
    assert stored(app) == (3, 15)


CAMT = statement_files.statement("camt.053", 1)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (
            CAMT.replace(b"<Ccy>EUR<", b"<Ccy>EURODOLLARYEN12<"),
            "currency: 'EURODOLLARYEN12' is not a currency code of three letters",
        ),
        (
            mt940(account="D" * 101),
            "bank_account: the bank account identifier is 101 characters long, more than 100",
        ),
        (
            mt940(entry(memo="M" * 3000)),
            "line 4: the memo is 3,000 characters long, more than 2,000",
        ),
        (
            mt940(entry(ref="R" * 201)),
            "line 4: the bank reference is 201 characters long, more than 200",
        ),
        (
            mt940(entry(memo="166?00X?32" + "P" * 20 + "\x00")),
            "line 4: the payee holds the control character U+0000 (at character 21)",
        ),
        (
            statement_files.statement("ofx", 1).replace(b"CHARSET:1252", b"CHARSET:UTF-7"),
            "line 5: the declared charset 'UTF-7' is not one this service reads: send UTF-8, "
            "US-ASCII, ISO-8859-1 to -16 or Windows-1250 to -1258",
        ),
        (
            mt940(entry(amount="\u0661,00")),
            "line 4: :61: '260102C\u0661,00NTRFNONREF' is not a statement line",
        ),
    ],
    ids=["currency", "account", "memo", "reference", "nul", "utf-7", "digits"],
)
def test_text_no_store_keeps_is_400_naming_where_and_nothing_is_stored(
    app, api, books, data, error
):
    refused = upload_statement(api, books["bank"], data)
    assert refused.status_code == 400
    assert refused.get_json() == {"error": error}
    assert stored(app) == (0, 0)


EDGE_PAYEE = "P\u00e9\u4e2d" + "x" * 1997  # 2,000 characters, not all ASCII
EDGE_MEMO = "M\tN " + "\u00fc" * 1996  # a tab (kept as a space), umlauts


def edge_statement() -> bytes:
    """One camt statement whose text is at every limit, and past ASCII."""
    camt = statement_files.statement("camt.053", 1).decode()
    camt = camt.replace("<Nm>Payee 0</Nm>", f"<Nm>{EDGE_PAYEE}</Nm>")
    camt = camt.replace("<Ustrd>Invoice 0</Ustrd>", f"<Ustrd>{EDGE_MEMO}</Ustrd>")
    camt = camt.replace("<AcctSvcrRef>R0<", "<AcctSvcrRef>" + "\u00c5" * 200 + "<")
    return camt.replace("<IBAN>NL01BANK<", "<IBAN>" + "K" * 100 + "<").encode()


def test_text_at_the_limits_is_stored_as_read(app, api, books):
    made = upload_statement(api, books["bank"], edge_statement())
    assert made.status_code == 201, made.get_json()
    statement = made.get_json()
    [line] = statement["lines"]
    assert line["payee"] == EDGE_PAYEE
    assert line["memo"] == "M N " + "\u00fc" * 1996
    assert line["bank_ref"] == "\u00c5" * 200
    assert statement["bank_account"] == "K" * 100
    again = api.get(f"/statements/{statement['id']}").get_json()
    assert again["lines"][0]["payee"] == EDGE_PAYEE


# slow: a new database of the other store is made, migrated and dropped.
@pytest.mark.slow
def test_books_holding_text_at_the_limits_restore_into_the_other_store(
    app, api, books, runner, app_config, dialect, tmp_path
):
    made = upload_statement(api, books["bank"], edge_statement())
    assert made.status_code == 201
    statement = made.get_json()
    other = "postgresql" if dialect == "sqlite" else "sqlite"
    with restored_backup(runner, app_config, tmp_path, other, "ledger_edge_restore_") as (
        restored,
        _,
        _,
    ):
        answer = restored.test_client().get(
            f"/statements/{statement['id']}", headers={"Authorization": f"Bearer {api.token}"}
        )
        assert answer.get_json() == api.get(f"/statements/{statement['id']}").get_json()
        assert answer.get_json()["lines"][0]["payee"] == EDGE_PAYEE
        with restored.app_context():
            db.engine.dispose()


def test_a_payee_of_2000_characters_that_do_not_compress_is_stored(app, api, books):
    # Three bytes each in UTF-8, and no run a compressor could shorten: 6,000 bytes.
    payee = "".join(chr(0x4E00 + (n * 7919) % 20000) for n in range(2000))
    camt = statement_files.statement("camt.053", 1).decode()
    data = camt.replace("<Nm>Payee 0</Nm>", f"<Nm>{payee}</Nm>").encode()
    made = upload_statement(api, books["bank"], data)
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["lines"][0]["payee"] == payee
