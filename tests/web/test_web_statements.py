"""The statement page in headless Chromium, at 1280x800 and on a 390x844 phone
(docs/statements.md, "The statement page"): read a real OFX file, file its 40 lines
whose payees the rules know and reconcile, counting the clicks (the statement then
shows itself reconciled and offers no second reconciliation); a credit card's OFX on a
liability account, its figures equal to the API's to the cent; Ignore on a line found
in the books, every control of the page big enough to tap on a phone; a line filed
under the wrong account, corrected on the Books page, still reconciling; the register's
Opening balance field checked against the last reconciliation; change a line's
account, match, ignore, make a rule from a line after its preview, the 409's
difference; and a 1,000-line statement usable on a phone (nothing wider than the
screen, no date or word broken, targets at least 24x24 px, the primary ones 44x44).

Everything runs against the real API, its OFX reader included: the files are OFX 1.x
as a bank sends them.

Screenshots: docs/screenshot-statements*.png with LEDGER_SCREENSHOTS=docs, otherwise
build/screenshots/ (as tests/web/test_web_views.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app import store
from tests.web.bank_files import PAYEES, ofx, statement_lines
from tests.web.pages import Clicks, all_big_enough, fits, go, reconciliations, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def seed(live, *, by_hand: bool = False) -> dict:
    """A club's bank account with an opening balance reconciled at the end of February,
    the accounts its lines go to and, `by_hand`, the printing of 2026-03-20 recorded by
    hand before the statement came (ids["by_hand"]: that transaction)."""
    from app.services.ledger import accounts, reconciliation, register, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Opening", "equity"),
                ("Food", "expense"),
                ("Utilities", "expense"),
                ("Hall", "expense"),
                ("Printing", "expense"),
                ("Dues", "income"),
                ("Sundries", "expense"),
            ]
        }
        transactions.record_transaction(
            "2026-02-28",
            "Opening balance",
            [
                {"account_id": ids["Bank"], "amount_cents": 500000},
                {"account_id": ids["Opening"], "amount_cents": -500000},
            ],
            created_by=None,
        )
        opening = register.register(ids["Bank"], None, None, 1, None)["items"][0]["entry_id"]
        reconciliation.set_cleared(ids["Bank"], [opening], True)
        reconciliation.reconcile(ids["Bank"], "2026-02-28", 500000, None)
        if by_hand:
            ids["by_hand"] = transactions.record_transaction(
                "2026-03-20",
                "Printing of newsletters",
                [
                    {"account_id": ids["Printing"], "amount_cents": 1999},
                    {"account_id": ids["Bank"], "amount_cents": -1999},
                ],
                created_by=None,
            )  # its id
        store.commit()
    return ids


def known_rules(live, ids):
    """One rule per payee, limited to the bank account (as "always file here" makes them)."""
    from app.services.banking import rules

    with live.app.app_context():
        for payee, account, _ in PAYEES:
            rules.create_rule(
                {
                    "name": f"{payee} → {account}",
                    "counter_account_id": ids[account],
                    "account_id": ids["Bank"],
                    "conditions": {"payee_is": payee},
                }
            )
        store.commit()


def reconciled(page, at: str) -> None:
    """The statement shows itself reconciled (to `at`: "DATE at AMOUNT") and offers no
    second reconciliation."""
    expect_text(page, "#reconcile", rf"^Reconciled to {re.escape(at)}$")
    expect(page.locator("#reconcile")).to_be_disabled()
    expect(page.locator("#statement-section")).to_have_attribute("data-reconciled", "true")
    expect_text(
        page,
        "#reconcile-hint",
        r"^This statement is reconciled: the account's entries up to \d{4}-\d\d-\d\d are "
        r"locked and agree with its closing balance\. There is nothing left to do here\.$",
    )


def test_forty_known_lines_filed_and_reconciled_in_a_few_clicks(treasurer, live, size):
    ids = seed(live)
    known_rules(live, ids)
    lines = statement_lines(40)
    page = sign_in(treasurer, live, "/accounts")
    # A bank or card account's register links its statements; other accounts' do not.
    go(page, live, f"/register?account={ids['Food']}")
    assert page.locator("#register-statements").is_hidden()
    go(page, live, f"/register?account={ids['Bank']}")
    expect(page.locator("#register-statements")).to_have_attribute(
        "href", f"/statements?account={ids['Bank']}"
    )

    # From Accounts, the bank account's Statements.
    go(page, live, "/accounts")
    assert page.locator(f"tr[data-id='{ids['Food']}'] .statements-link").count() == 0
    clicks = Clicks(page)
    clicks.click(f"tr[data-id='{ids['Bank']}'] .statements-link")
    page.wait_for_url(f"{live.web}/statements?account={ids['Bank']}")
    page.wait_for_selector("body[data-ready=true]")
    fits(page)
    clicks.choose_file("#stmt-file", "march.ofx", ofx(lines))
    expect_text(page, "#upload-message", r"^Read 40 lines from march\.ofx\.$")
    assert page.locator("#bank-account-label").is_hidden()
    rows = page.locator("#lines > li")
    expect(rows).to_have_count(40)
    expect_text(page, "#statement-counts", r"^40 lines: 40 new\.$")
    # Each line's account is preselected from its rule.
    first = page.locator("#lines > li[data-line='1']")
    assert first.locator("select").input_value() == str(ids["Food"])
    expect(first.locator(".detail")).to_have_text("Suggested by the rule “Corner Grocer → Food”.")
    expect_text(page, "#post-suggested", r"^Post 40 suggested lines$")
    assert page.locator("#reconcile").is_disabled()
    expect_text(page, "#reconcile-hint", r"^40 lines are still waiting")
    fits(page)

    clicks.click("#post-suggested")
    expect_text(page, "#statement-counts", r"^40 lines: 40 posted\.$")
    expect(page.locator("#lines > li[data-status=posted]")).to_have_count(40)
    closing = 500000 + sum(line["amount_cents"] for line in lines)
    shown = f"{closing // 100:,}.{closing % 100:02d}"
    expect_text(page, "#reconcile", rf"^Reconcile to 2026-03-31 at {re.escape(shown)}$")
    clicks.click("#reconcile")
    expect_text(
        page, "#statement-message", rf"^Reconciled Bank to 2026-03-31 at {re.escape(shown)}"
    )
    assert clicks.count <= 10, clicks.count
    assert clicks.count == 4  # Statements, choose the file, post, reconcile
    # Reconciled: said on the page, and not offered again (a second press would record
    # the same reconciliation twice); so too when the statement is opened again.
    reconciled(page, f"2026-03-31 at {shown}")
    assert page.locator("#post-suggested").is_disabled()
    fits(page)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    reconciled(page, f"2026-03-31 at {shown}")
    expect(page.locator("#statements > li[data-statement] .hint")).to_have_text(
        re.compile(r", reconciled$")
    )
    assert reconciliations(live, ids["Bank"]) == [("2026-02-28", 500000), ("2026-03-31", closing)]
    # The same month downloaded again (other bytes: the very same file is refused):
    # every line already imported, nothing to post.
    again = ofx(lines) + b"\n"
    page.set_input_files(
        "#stmt-file", files=[{"name": "march.ofx", "mimeType": "text/plain", "buffer": again}]
    )
    expect_text(page, "#statement-counts", r"^40 lines: 40 already imported\.$")
    expect(page.locator("#lines > li[data-line='1'] .badge")).to_have_text("Already imported")
    expect(page.locator("#lines > li[data-line='1'] .detail")).to_have_text(
        # Posted without a description of its own: the payee and the memo, joined.
        f"Already in the books as 2026-03-01 · Corner Grocer · {lines[0]['memo']} · -23.45"
    )
    assert page.locator("#post-suggested").is_disabled()
    expect(page.locator("#statements > li[data-statement]")).to_have_count(2)
    from app.services.ledger import register

    with live.app.app_context():
        page_of = register.register(ids["Bank"], None, None, 100, None)
    assert page_of["balance_cents"] == closing
    assert len(page_of["items"]) == 41
    assert all(item["reconciled"] for item in page_of["items"])  # 40 lines and the opening
    for payee, account, _ in PAYEES:  # each line on its payee's account
        filed = [tx for tx in live.transactions() if tx["description"].startswith(f"{payee} · ")]
        assert filed and all(
            {e["account_id"] for e in tx["entries"]} == {ids["Bank"], ids[account]} for tx in filed
        )


def test_one_line_at_a_time_rule_from_a_line_and_the_difference(treasurer, live, size):
    ids = seed(live, by_hand=True)
    lines = statement_lines(6)
    # Line 5, the printing (-19.99 on 2026-03-21), was recorded by hand on 2026-03-20.
    assert lines[4]["amount_cents"] == -1999 and lines[4]["booked_on"] == "2026-03-21"
    # Line 3 (-150.02) will be ignored: the books then differ from the bank by it.
    page = sign_in(treasurer, live, "/")
    page.goto(f"{live.web}/statements?account={ids['Bank']}")
    page.wait_for_selector("body[data-ready=true]")
    # A file that is no statement: the server's reason, the file field marked.
    page.set_input_files(
        "#stmt-file", files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello"}]
    )
    expect_text(page, "#upload-message", r"OFX.*camt\.053.*MT940")
    assert page.locator("#stmt-file").get_attribute("aria-invalid") == "true"
    assert page.locator("#statement-section").is_hidden()
    # A file holding two bank accounts' statements: the page asks which one.
    both = ofx(lines, also="55554444")
    page.set_input_files(
        "#stmt-file", files=[{"name": "march.ofx", "mimeType": "text/plain", "buffer": both}]
    )
    expect_text(
        page, "#upload-message", r"^This file holds statements of 2 bank accounts: choose the one"
    )
    page.select_option("#bank-account", "99887766")
    page.click("#upload-again")
    expect_text(page, "#upload-message", r"^Read 6 lines from march\.ofx\.$")
    assert page.locator("#bank-account-label").is_hidden()
    expect(page.locator("#lines > li")).to_have_count(6)
    expect_text(page, "#statement-counts", r"^6 lines: 5 new, 1 found in the books\.$")
    # The line found in the books shows that transaction.
    found = page.locator("#lines > li[data-line='5']")
    expect(found.locator(".badge")).to_have_text("Found in the books")
    expect(found.locator(".detail")).to_have_text(
        "In the books as 2026-03-20 · Printing of newsletters · -19.99"
    )
    expect_text(page, "#post-suggested", r"^Match 1 line found in the books$")
    line = page.locator("#lines > li[data-line='1']")
    expect(line.locator(".detail")).to_have_text("Nothing suggested: choose the account.")

    # "Always file this payee here" shows what the rule would catch before making it.
    line.locator("select").select_option(str(ids["Food"]))
    expect_text(page, "#post-suggested", r"^Post 1 suggested line and match 1$")
    line.locator(".act-rule").click()
    panel = line.locator(".rule-panel")
    expect(panel.locator("[role=status]")).to_have_text(
        re.compile(r"^It would file 2 waiting lines now, all in this statement:$")
    )
    expect(panel.locator("ul.preview li")).to_have_count(2)
    fits(page)
    panel.locator(".act-make-rule").click()
    expect_text(
        page,
        "#statement-message",
        r"^Made the rule “Corner Grocer → Food”: 2 waiting lines of this statement "
        r"now suggested for Food\.$",
    )
    expect(page.locator("#lines > li[data-line='6'] .detail")).to_have_text(
        "Suggested by the rule “Corner Grocer → Food”."
    )
    expect_text(page, "#post-suggested", r"^Post 2 suggested lines and match 1$")

    # One line to another account, one ignored, one refused until its account is chosen.
    page.locator("#lines > li[data-line='2'] select").select_option(str(ids["Sundries"]))
    page.locator("#lines > li[data-line='2'] .act-post").click()
    expect(page.locator("#lines > li[data-line='2']")).to_have_attribute("data-status", "posted")
    page.locator("#lines > li[data-line='3'] .act-ignore").click()
    expect(page.locator("#lines > li[data-line='3']")).to_have_attribute("data-status", "ignored")
    expect(page.locator("#lines > li[data-line='3'] .badge")).to_have_text("Ignored")
    # The keyboard goes on to the next line waiting.
    expect(page.locator("#lines > li[data-line='4'] select")).to_be_focused()
    page.locator("#lines > li[data-line='4'] .act-post").click()
    expect_text(page, "#statement-message", r"^Choose the account this line goes to\.$")
    assert page.locator("#lines > li[data-line='4'] select").get_attribute("aria-invalid") == "true"
    page.locator("#lines > li[data-line='4'] select").select_option(str(ids["Dues"]))
    expect_text(page, "#post-suggested", r"^Post 3 suggested lines and match 1$")
    page.click("#post-suggested")
    # Each count with its own noun (issue 44: "posted 3 and matched 1 lines").
    expect_text(page, "#statement-message", r"^Done: posted 3 lines and matched 1\.$")
    expect_text(page, "#statement-counts", r"^6 lines: 4 posted, 1 matched, 1 ignored\.$")
    expect(page.locator("#lines > li[data-line='5'] .badge")).to_have_text("Matched")
    # The books now differ from the bank by the ignored line: said plainly, with the register.
    page.click("#reconcile")
    expect_text(
        page,
        "#statement-message",
        r"^Not reconciled: the cleared entries in Bank up to 2026-03-31 do not add up to "
        r"the statement's closing balance of [\d,]+\.\d\d: the difference is -150\.02\.",
    )
    expect(page.locator("#statement-message a")).to_have_attribute(
        "href", re.compile(r"^/register\?account=\d+&statement_date=2026-03-31&closing=\d+$")
    )
    # The account's statements: the file as uploaded, then deleted (its postings stay).
    listed = page.locator("#statements > li[data-statement]")
    expect(listed).to_have_count(1)
    expect(listed.locator("a.open-statement")).to_have_text("2026-03-01 to 2026-03-31")
    with page.expect_download() as download:
        listed.locator("button", has_text="Download the file").click()
    assert Path(download.value.path()).read_bytes() == both
    listed.locator("button", has_text="Delete").click()
    listed.locator("button", has_text="Delete it").click()
    expect_text(page, "#list-message", r"^Deleted the statement; what it posted or matched stays")
    expect(listed).to_have_count(0)
    assert page.locator("#statement-section").is_hidden()

    by_account = {}
    for tx in live.transactions():
        for entry in tx["entries"]:
            by_account.setdefault(entry["account_id"], []).append(entry["amount_cents"])
    assert sorted(by_account[ids["Food"]]) == [2345, 2346]  # lines 1 and 6
    assert by_account[ids["Sundries"]] == [8801]
    assert by_account[ids["Dues"]] == [-2497]
    assert by_account[ids["Printing"]] == [1999]  # matched: no second printing
    assert ids["Hall"] not in by_account  # ignored


# Every control's box, primary ones at 44 px; dates and amounts on one line; no word
# of a line's text broken across lines.
TARGETS_JS = """() => {
  const bad = [];
  for (const el of document.querySelectorAll("main button, main select, main input, main a")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const need = el.matches(".primary, #stmt-file") ? 44 : 24;
    const name = el.id || el.className || el.tagName;
    if (box.width < need || box.height < need) bad.push(`${name} ${box.width}x${box.height}`);
  }
  return bad.slice(0, 10);
}"""

BROKEN_JS = """() => {
  const bad = [];
  const lines = (node) => new Set([...node.getClientRects()].map((r) => Math.round(r.top))).size;
  for (const el of document.querySelectorAll("#lines .when, #lines .amt, #lines .badge")) {
    const range = document.createRange();
    range.selectNodeContents(el);
    if (lines(range) > 1) bad.push(`${el.className}: ${el.textContent}`);
  }
  for (const el of document.querySelectorAll("#lines .payee, #lines .memo, #lines .detail")) {
    const text = el.firstChild;
    if (!text || text.nodeType !== 3) continue;
    for (const m of text.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, m.index);
      range.setEnd(text, m.index + m[0].length);
      if (lines(range) > 1) bad.push(`${el.className}: ${m[0]}`);
    }
  }
  return bad.slice(0, 10);
}"""


def test_a_thousand_lines_on_a_phone(treasurer, live, size):
    ids = seed(live)
    lines = statement_lines(1000, long_words=True)
    known_rules(live, ids)
    page = sign_in(treasurer, live, "/")
    page.goto(f"{live.web}/statements?account={ids['Bank']}")
    page.wait_for_selector("body[data-ready=true]")
    page.set_input_files(
        "#stmt-file",
        files=[{"name": "year.ofx", "mimeType": "text/plain", "buffer": ofx(lines)}],
    )
    rows = page.locator("#lines > li")
    expect(rows).to_have_count(100)  # drawn 100 at a time
    expect_text(page, "#lines-count", r"^Showing lines 1 to 100 of 1000\.$")
    known = sum(1 for line in lines if not line["payee"].startswith("SUPERMARKET"))
    expect_text(
        page, "#post-suggested", rf"^Post {known} suggested lines$"
    )  # the long payees have no rule
    fits(page)
    assert page.evaluate(TARGETS_JS) == []
    assert page.evaluate(BROKEN_JS) == []
    page.click("#lines-more")
    expect(rows).to_have_count(200)
    page.locator("#lines > li[data-line='200']").scroll_into_view_if_needed()
    fits(page)
    assert page.evaluate(BROKEN_JS) == []
    # All 858 in one request, whether drawn or not.
    page.click("#post-suggested")
    expect_text(
        page,
        "#statement-counts",
        rf"^1000 lines: {1000 - known} new, {known} posted\.$",
        timeout=30_000,
    )
    expect(page.locator("#lines > li[data-line='1']")).to_have_attribute("data-status", "posted")
    fits(page)
    assert page.evaluate(TARGETS_JS) == []
    if size == "phone":
        page.evaluate("window.scrollTo(0, 0)")


# A card statement as the card's issuer sends it: purchases negative, the payment from
# the bank positive, the closing balance the debt, negative.
CARD_LINES = [
    ("2026-03-03", -2345, "Corner Grocer", "Food"),
    ("2026-03-09", -6107, "Fuel Station 12", "Fuel"),
    ("2026-03-15", 10000, "Payment thank you", "Bank"),
    ("2026-03-22", -899, "Corner Grocer", "Food"),
]


def card_ofx(opening: int) -> bytes:
    """An OFX 1.x card statement (CREDITCARDMSGSRSV1, CCSTMTRS, CCACCTFROM) of CARD_LINES,
    closing at `opening` (the bank's sign: a debt is negative) plus their sum."""

    def money(cents: int) -> str:
        return f"{'-' if cents < 0 else ''}{abs(cents) // 100}.{abs(cents) % 100:02d}"

    body = "".join(
        f"<STMTTRN>\n<TRNTYPE>{'CREDIT' if cents > 0 else 'DEBIT'}\n"
        f"<DTPOSTED>{day.replace('-', '')}\n<TRNAMT>{money(cents)}\n<FITID>CC{n:04d}\n"
        f"<NAME>{payee}\n</STMTTRN>\n"
        for n, (day, cents, payee, _) in enumerate(CARD_LINES, 1)
    )
    closing = opening + sum(cents for _, cents, _, _ in CARD_LINES)
    text = (
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\n"
        "CHARSET:1252\nCOMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n"
        "<OFX>\n<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS>"
        "<DTSERVER>20260401<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>\n"
        "<CREDITCARDMSGSRSV1><CCSTMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>\n"
        "<CCSTMTRS><CURDEF>EUR<CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM>\n"
        f"<BANKTRANLIST><DTSTART>20260301<DTEND>20260331\n{body}</BANKTRANLIST>\n"
        f"<LEDGERBAL><BALAMT>{money(closing)}<DTASOF>20260331</LEDGERBAL>\n"
        "</CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1>\n</OFX>\n"
    )
    return text.encode("ascii")


def api_get(page, live, path):
    """The API's answer to GET `path`, asked from the page with the person's session."""
    return page.evaluate(
        """async (url) => {
          const response = await fetch(url, { credentials: "include" });
          if (!response.ok) throw new Error(`${url}: ${response.status}`);
          return response.json();
        }""",
        live.api + path,
    )


def money_words(cents: int) -> str:
    """As the pages write an amount: 1,234.56, -93.51."""
    return f"{'-' if cents < 0 else ''}{abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def test_a_card_statement_on_a_liability_account(treasurer, live, size):
    """A credit card's OFX on a liability account: its lines posted, the statement's
    negative closing balance reconciled as the card's debt, every figure the page
    shows equal to the API's to the cent."""
    from app.services.ledger import accounts, reconciliation, register, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Card", "liability"),
                ("Opening", "equity"),
                ("Food", "expense"),
                ("Fuel", "expense"),
            ]
        }
        # 100.00 owed on the card at the end of February, reconciled then.
        transactions.record_transaction(
            "2026-02-28",
            "Card opening balance",
            [
                {"account_id": ids["Opening"], "amount_cents": 10000},
                {"account_id": ids["Card"], "amount_cents": -10000},
            ],
            created_by=None,
        )
        opening = register.register(ids["Card"], None, None, 1, None)["items"][0]["entry_id"]
        reconciliation.set_cleared(ids["Card"], [opening], True)
        reconciliation.reconcile(ids["Card"], "2026-02-28", 10000, None)
        store.commit()
    closing = -10000 + sum(cents for _, cents, _, _ in CARD_LINES)
    assert closing == -9351  # the card's issuer: 93.51 owed, written negative

    page = sign_in(treasurer, live, "/")
    go(page, live, f"/statements?account={ids['Card']}")
    page.set_input_files(
        "#stmt-file",
        files=[{"name": "card.ofx", "mimeType": "application/x-ofx", "buffer": card_ofx(-10000)}],
    )
    expect_text(page, "#upload-message", r"^Read 4 lines from card\.ofx\.$")
    (listed,) = api_get(page, live, f"/statements?account_id={ids['Card']}")
    shown_api = api_get(page, live, f"/statements/{listed['id']}")
    assert shown_api["closing_balance_cents"] == closing
    assert shown_api["closing_balance_on"] == "2026-03-31"
    assert shown_api["bank_account"] == "4111000011112222"
    expect_text(
        page,
        "#statement-facts",
        rf"^OFX file, account 4111000011112222, EUR, closing balance "
        rf"{re.escape(money_words(closing))} on 2026-03-31\.$",
    )
    # Each line's amount as the API holds it (a purchase negative, the payment positive).
    for line in shown_api["lines"]:
        row = page.locator(f"#lines > li[data-line='{line['line_id']}']")
        expect(row.locator(".amt")).to_have_text(money_words(line["amount_cents"]))
        expect(row).to_have_attribute("data-status", "new")
        account = CARD_LINES[line["line_id"] - 1][3]
        row.locator("select").select_option(str(ids[account]))
    assert [line["amount_cents"] for line in shown_api["lines"]] == [c for _, c, _, _ in CARD_LINES]
    expect_text(page, "#post-suggested", r"^Post 4 suggested lines$")
    page.click("#post-suggested")
    expect_text(page, "#statement-counts", r"^4 lines: 4 posted\.$")
    expect_text(
        page, "#reconcile", rf"^Reconcile to 2026-03-31 at {re.escape(money_words(closing))}$"
    )
    page.click("#reconcile")
    expect_text(
        page,
        "#statement-message",
        rf"^Reconciled Card to 2026-03-31 at {re.escape(money_words(closing))} on the "
        rf"statement, a balance of {re.escape(money_words(-closing))} in the books: 4 entries "
        r"now locked\.$",
    )
    reconciled(page, f"2026-03-31 at {money_words(closing)}")
    fits(page)

    # The books: each purchase on its expense, the payment from the bank, the card's
    # debt 93.51 as the register counts it, reconciled to the cent.
    card = api_get(page, live, f"/accounts/{ids['Card']}/register?limit=100")
    assert card["balance_cents"] == -closing == 9351
    assert card["cleared_balance_cents"] == 9351
    assert all(item["reconciled"] for item in card["items"])
    assert reconciliations(live, ids["Card"]) == [("2026-02-28", 10000), ("2026-03-31", 9351)]
    by_account = {}
    for tx in live.transactions():
        for entry in tx["entries"]:
            by_account.setdefault(entry["account_id"], []).append(entry["amount_cents"])
    assert sorted(by_account[ids["Food"]]) == [899, 2345]
    assert by_account[ids["Fuel"]] == [6107]
    assert by_account[ids["Bank"]] == [-10000]
    # The register page shows the same figures as its API.
    go(page, live, f"/register?account={ids['Card']}")
    expect_text(page, "#register-balance", rf"^{re.escape(money_words(card['balance_cents']))}$")
    expect_text(page, "#register-cleared", r"^93\.51$")
    expect_text(page, "#rec-last", r"^Last reconciled to 2026-03-31, closing balance 93\.51\.$")
    assert treasurer.errors == []


def test_ignore_a_line_found_in_the_books_and_every_control_can_be_tapped(treasurer, live, size):
    """Ignore (the statement line's "not this one" button) on a line found in the books
    leaves the transaction recorded by hand untouched (not cleared, no bank reference);
    on a phone every control of the page, a line's rule panel and a statement's delete
    confirmation open, is at least 24x24 CSS px and the buttons, fields and pickers 44
    (issue 37's sizes, tests/web/test_web_walk37.py)."""
    ids = seed(live, by_hand=True)
    page = sign_in(treasurer, live, "/")
    go(page, live, f"/statements?account={ids['Bank']}")
    page.set_input_files(
        "#stmt-file",
        files=[{"name": "march.ofx", "mimeType": "text/plain", "buffer": ofx(statement_lines(6))}],
    )
    expect_text(page, "#statement-counts", r"^6 lines: 5 new, 1 found in the books\.$")
    found = page.locator("#lines > li[data-line='5']")
    ignore = found.get_by_role("button", name="Ignore Printing Shop, 2026-03-21, -19.99")
    expect(ignore).to_have_text("Ignore")
    if size == "phone":
        all_big_enough(page)
    ignore.click()
    expect(found).to_have_attribute("data-status", "ignored")
    expect(found.locator(".badge")).to_have_text("Ignored")
    expect(found.locator(".detail")).to_have_text("Left out of the books.")
    expect(found.locator("button")).to_have_text(["Undo"])  # only undo is left to do on it
    expect_text(page, "#statement-counts", r"^6 lines: 5 new, 1 ignored\.$")
    expect_text(page, "#post-suggested", r"^Nothing suggested to post$")
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Entry

    with live.app.app_context():
        entry = db.session.execute(
            select(Entry.cleared, Entry.bank_ref).where(
                Entry.transaction_id == ids["by_hand"], Entry.account_id == ids["Bank"]
            )
        ).one()
        db.session.rollback()
    assert (bool(entry.cleared), entry.bank_ref) == (False, None)
    assert [t["description"] for t in live.transactions()].count("Printing of newsletters") == 1

    # A line's rule panel and a statement's delete confirmation, open.
    first = page.locator("#lines > li[data-line='1']")
    first.locator("select").select_option(str(ids["Food"]))
    first.locator(".act-rule").click()
    expect(first.locator(".act-make-rule")).to_be_enabled()
    page.locator("#statements > li[data-statement]").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("button", name="Delete it")).to_be_visible()
    fits(page)
    if size == "phone":
        all_big_enough(page)
    assert treasurer.errors == []


def test_the_statements_opening_balance_in_the_register(treasurer, live, size):
    """The register's Opening balance field (the reconcile form's; the account form has
    none): the statement's opening balance checked against the account's last
    reconciliation, a first statement said so, an unreadable figure named, nothing said
    while the field is empty."""
    from app.services.ledger import accounts

    ids = seed(live)  # Bank reconciled to 2026-02-28 at 5,000.00
    with live.app.app_context():
        savings = accounts.create_account("Savings", "asset")["id"]
        store.commit()
    page = sign_in(treasurer, live, "/")
    go(page, live, f"/register?account={ids['Bank']}")
    expect_text(page, "#rec-last", r"^Last reconciled to 2026-02-28, closing balance 5,000\.00\.$")
    check = page.locator("#rec-opening-check")
    assert check.is_hidden()
    expect(page.get_by_label("Opening balance")).to_have_attribute("id", "rec-opening")
    page.fill("#rec-opening", "5,000.00")
    expect_text(
        page,
        "#rec-opening-check",
        r"^The opening balance matches the last reconciliation \(2026-02-28\)\.$",
    )
    page.fill("#rec-opening", "4,990.01")
    expect_text(
        page,
        "#rec-opening-check",
        r"^The opening balance differs from the last reconciliation's closing 5,000\.00 by "
        r"-9\.99: a statement may be missing\.$",
    )
    page.fill("#rec-opening", "12.345")
    expect_text(page, "#rec-opening-check", r"^Opening balance: “12\.345”: ")
    page.fill("#rec-opening", "")
    expect(check).to_be_hidden()
    fits(page)

    go(page, live, f"/register?account={savings}")
    expect_text(page, "#rec-last", r"^Not reconciled before: this is the first statement\.$")
    page.fill("#rec-opening", "10.00")
    expect_text(
        page,
        "#rec-opening-check",
        r"^No earlier reconciliation to compare the opening balance with\.$",
    )
    assert treasurer.errors == []


def test_a_line_filed_wrong_corrected_in_the_books_still_reconciles(treasurer, live, size):
    """Month-end's common slip (docs/ledger.md, "Corrections of cleared transactions"):
    the hall hire is filed by its rule, the treasurer corrects it on the Books page to
    Sundries before reconciling, and the statement still reconciles in one click: the
    corrected transaction's bank entry kept its clearing and bank reference."""
    ids = seed(live)
    known_rules(live, ids)
    lines = statement_lines(3)
    hall = lines[2]
    assert (hall["payee"], hall["amount_cents"]) == ("Hall Hire Ltd", -15002)
    page = sign_in(treasurer, live, "/")
    go(page, live, f"/statements?account={ids['Bank']}")
    page.set_input_files(
        "#stmt-file", files=[{"name": "march.ofx", "mimeType": "text/plain", "buffer": ofx(lines)}]
    )
    expect_text(page, "#statement-counts", r"^3 lines: 3 new\.$")
    page.click("#post-suggested")
    expect_text(page, "#statement-counts", r"^3 lines: 3 posted\.$")

    go(page, live, "/")
    row = page.locator("#transactions tbody tr[data-id]", has_text="Hall Hire Ltd")
    original = row.get_attribute("data-id")
    row.locator("td.row-actions").get_by_role("button", name="Edit").click()
    form = page.locator(f"tr[data-edit='{original}'] form.edit-form")
    form.locator(".e-debit").select_option(str(ids["Sundries"]))
    form.locator(".e-save").click()
    described = f"Hall Hire Ltd · {hall['memo']}"  # posted: the payee and the memo, joined
    expect_text(page, "#tx-message", rf"^Saved: {re.escape(described)}, 150\.02\.$")
    corrected = page.locator("#transactions tbody tr[data-id]", has_text="Hall Hire Ltd")
    expect(corrected).to_have_count(1)
    assert corrected.get_attribute("data-id") != original

    go(page, live, f"/statements?account={ids['Bank']}")
    expect(page.locator("#lines > li[data-status=posted]")).to_have_count(3)
    closing = 500000 + sum(line["amount_cents"] for line in lines)
    shown = f"{closing // 100:,}.{closing % 100:02d}"
    page.click("#reconcile")
    expect_text(
        page, "#statement-message", rf"^Reconciled Bank to 2026-03-31 at {re.escape(shown)}"
    )
    reconciled(page, f"2026-03-31 at {shown}")
    fits(page)
    assert reconciliations(live, ids["Bank"]) == [("2026-02-28", 500000), ("2026-03-31", closing)]
    filed = [tx for tx in live.transactions() if tx["description"] == described]
    assert [{e["account_id"] for e in tx["entries"]} for tx in filed] == [
        {ids["Bank"], ids["Sundries"]}
    ]
    assert treasurer.errors == []
