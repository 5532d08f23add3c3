"""Issue 44's walk in headless Chromium, at 1280x800 and on a 390x844 phone, on both
stores (docs/statements.md, "Walk: a month with four traps"): a club's November from
the bank's MT940 file, with the four traps a treasurer meets,

- two members paying the same amount: K JONES pays 15.00, and the only 15.00 in the
  books is "Subs L Garcia", typed the day before: never matched to Garcia, never
  posted by the one-click action, which says what it might be;
- a cheque typed by hand on 28 October and cashed four weeks later: shown as the
  line's candidate and matched with one tap, never posted a second time;
- an entry typed wrong (62.40 for the bank's 64.20) and corrected on the Books page
  after the upload: the line is found in the books on reading again;
- the same file uploaded twice: refused with the 409's words;

then nothing booked twice (every transaction and amount counted through the API),
the statement reconciled, and the clicks counted (the counts docs/statements.md
gives). Also: Undo of a slip (a match to the wrong member), Undo refused on a
reconciled line with the server's reason, the opening balance checked against the
last reconciliation, and the Rules page (every condition, preview, edit, delete).

Screenshots: docs/screenshot-statements*.png with LEDGER_SCREENSHOTS=docs, otherwise
build/screenshots/ (as tests/web/test_web_views.py).
"""

from __future__ import annotations

import re

import pytest

from app import store
from tests.web.bank_files import mt940
from tests.web.pages import (
    Clicks,
    all_big_enough,
    dates_unbroken,
    fits,
    go,
    reconciliations,
    shot,
    sign_in,
)
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

# The clicks the walk takes (docs/statements.md, "Walk: a month with four traps"): on a
# phone the header's views sit behind Menu, one tap more each time (Books, Statements).
CLICKS = {"desktop": 11, "phone": 13}
TYPED = 2  # the corrected amount, K Jones's description

NOVEMBER = [
    # booked_on, amount, payee, memo, bank_ref
    ("2026-11-03", -8800, "CITY POWER COMPANY", "DIRECT DEBIT", "NOV001"),
    ("2026-11-12", -6420, "PRINTER INK DIRECT", "CARD 4411", "NOV002"),
    ("2026-11-24", 1500, "K JONES", "MEMBERSHIP", "NOV003"),
    ("2026-11-25", -12000, "CHQ 000101", "CLEARING", "NOV004"),
    ("2026-11-30", -500, "BANK CHARGES", "MONTHLY FEE", "NOV005"),
]
OPENING = 100000
CLOSING = OPENING + sum(line[1] for line in NOVEMBER)  # 737.80


def lines() -> list[dict]:
    keys = ("booked_on", "amount_cents", "payee", "memo", "bank_ref")
    return [dict(zip(keys, line, strict=True)) for line in NOVEMBER]


def seed(live) -> dict:
    """The club's books before November's statement: the bank account reconciled at the
    end of October at 1,000.00; the cheque to the hall typed on 28 October (not cashed
    then), the printer ink typed as 62.40 (the bank took 64.20), L Garcia's 15.00
    typed on 23 November; the treasurer's rules for the usual payees."""
    from app.services.banking import rules
    from app.services.ledger import accounts, reconciliation, register, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Opening", "equity"),
                ("Dues", "income"),
                ("Hall", "expense"),
                ("Printing", "expense"),
                ("Utilities", "expense"),
                ("Sundries", "expense"),
            ]
        }

        def record(day, description, cents, other):
            return transactions.record_transaction(
                day,
                description,
                [
                    {"account_id": ids["Bank"], "amount_cents": cents},
                    {"account_id": ids[other], "amount_cents": -cents},
                ],
                created_by=None,
            )

        record("2026-10-01", "Opening balance", OPENING, "Opening")
        opening = register.register(ids["Bank"], None, None, 1, None)["items"][0]["entry_id"]
        reconciliation.set_cleared(ids["Bank"], [opening], True)
        reconciliation.reconcile(ids["Bank"], "2026-10-31", OPENING, None)
        ids["cheque"] = record("2026-10-28", "Cheque 101 Hall hire", -12000, "Hall")
        ids["ink"] = record("2026-11-10", "Printer ink", -6240, "Printing")
        ids["garcia"] = record("2026-11-23", "Subs L Garcia", 1500, "Dues")
        for name, counter, conditions in [
            ("City power", "Utilities", {"payee_is": "city power company"}),
            ("Cheques", "Hall", {"payee_contains": "chq"}),
            ("Membership", "Dues", {"memo_contains": "membership"}),
            ("Bank charges", "Sundries", {"payee_is": "bank charges"}),
        ]:
            rules.create_rule(
                {
                    "name": name,
                    "counter_account_id": ids[counter],
                    "account_id": ids["Bank"],
                    "conditions": conditions,
                }
            )
        store.commit()
    return ids


def bank_entries(live, bank_id) -> list[tuple[int, str | None, bool]]:
    """Every entry of the bank account: (amount, bank reference, cleared)."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Entry

    with live.app.app_context():
        rows = db.session.execute(
            select(Entry.amount_cents, Entry.bank_ref, Entry.cleared).where(
                Entry.account_id == bank_id
            )
        ).all()
        db.session.rollback()
    return sorted(((int(r.amount_cents), r.bank_ref, bool(r.cleared)) for r in rows), key=str)


def line_of(page, n):
    return page.locator(f"#lines > li[data-line='{n}']")


def test_a_month_with_four_traps(treasurer, live, size):
    ids = seed(live)
    data = mt940(lines(), OPENING, "2026-11-30")
    page = sign_in(treasurer, live, "/accounts")
    clicks = Clicks(page)

    # From Accounts, the bank account's statements; the file read.
    clicks.click(f"tr[data-id='{ids['Bank']}'] .statements-link")
    page.wait_for_url(f"{live.web}/statements?account={ids['Bank']}")
    page.wait_for_selector("body[data-ready=true]")
    clicks.choose_file("#stmt-file", "november.sta", data)
    expect_text(page, "#upload-message", r"^Read 5 lines from november\.sta\.$")
    expect_text(page, "#statement-counts", r"^5 lines: 5 new\.$")
    # The opening balance against October's reconciliation.
    expect_text(
        page,
        "#statement-opening",
        r"^The opening balance 1,000\.00 agrees with the last reconciliation \(2026-10-31\)\.$",
    )
    expect(page.locator("#stmt-register")).to_have_attribute(
        "href", f"/register?account={ids['Bank']}"
    )

    # Trap 1: K JONES's 15.00 might be Garcia's (the same amount), shared words none:
    # offered, not matched.
    jones = line_of(page, 3)
    expect(jones).to_have_attribute("data-status", "new")
    expect(jones.locator(".maybe li")).to_have_count(1)
    expect(jones.locator(".maybe li .cand")).to_have_text(
        "2026-11-23 · Subs L Garcia (no word in common)"
    )
    expect(jones.locator(".detail")).to_have_text("Suggested by the rule “Membership”.")
    # Trap 2: the cheque of 28 October, four weeks before the bank cashed it.
    cheque = line_of(page, 4)
    expect(cheque).to_have_attribute("data-status", "new")
    expect(cheque.locator(".maybe li .cand")).to_have_text(
        "2026-10-28 · Cheque 101 Hall hire (no word in common)"
    )
    # Trap 3: the ink typed as 62.40: nothing of 64.20 in the books yet.
    ink = line_of(page, 2)
    expect(ink).to_have_attribute("data-status", "new")
    expect(ink.locator(".maybe")).to_have_count(0)
    # The one-click action would post the two usual lines and the ink (as filed before),
    # never K JONES or the cheque.
    expect_text(page, "#post-suggested", r"^Post 3 suggested lines$")

    # Trap 4: the same file again: refused, the server's words, nothing stored.
    clicks.choose_file("#stmt-file", "november.sta", data)
    expect_text(
        page,
        "#upload-message",
        r"already uploaded to the account on \d{4}-\d\d-\d\dT[\d:]+Z as statement \d+; "
        r"nothing was stored",
    )
    expect(page.locator("#statements > li[data-statement]")).to_have_count(1)

    # The ink: the bank's 64.20 is right, so the entry is corrected on the Books page.
    clicks.view("Books")
    row = page.locator("#transactions tbody tr[data-id]", has_text="Printer ink")
    clicks.click(row.locator("td.row-actions").get_by_role("button", name="Edit"))
    edit = page.locator(f"tr.editing[data-edit='{ids['ink']}']")
    clicks.type(edit.locator(".e-amount"), "64.20")
    clicks.click(edit.locator(".e-save"))
    expect_text(page, "#tx-message", r"^Saved: Printer ink, 64\.20\.$")

    # Back on Statements (the header's link): the page opens the same account and its
    # statement, and the corrected entry is found on reading again.
    clicks.view("Statements")
    assert page.locator("#stmt-account").input_value() == str(ids["Bank"])
    expect(ink).to_have_attribute("data-status", "match")
    expect(ink.locator(".detail")).to_have_text("In the books as 2026-11-10 · Printer ink · -64.20")
    expect_text(page, "#statement-counts", r"^5 lines: 4 new, 1 found in the books\.$")
    expect_text(page, "#post-suggested", r"^Post 2 suggested lines and match 1$")

    # The one-click action: the usual two posted, the ink matched; K JONES and the
    # cheque left, saying what they might be.
    clicks.click("#post-suggested")
    expect_text(
        page,
        "#statement-message",
        r"^Done: posted 2 lines and matched 1\. Not posted, as they might already be in "
        r"the books: line 3 \(K JONES, 15\.00\) might be Subs L Garcia of 2026-11-23; "
        r"line 4 \(CHQ 000101, -120\.00\) might be Cheque 101 Hall hire of 2026-10-28\. "
        r"Match or post each on the line\.$",
    )
    expect_text(page, "#statement-counts", r"^5 lines: 2 new, 2 posted, 1 matched\.$")
    expect(jones).to_have_attribute("data-status", "new")
    expect(cheque).to_have_attribute("data-status", "new")
    fits(page)
    dates_unbroken(page)
    if size == "phone":
        all_big_enough(page)  # the candidates' Match, the description fields, Undo: 44 px
    page.evaluate("document.getElementById('statement-section').scrollIntoView()")
    shot(page, "statements", size)

    # A slip, undone (not counted): K JONES matched to Garcia's entry by mistake.
    jones.locator(".act-match-candidate").click()
    expect(jones).to_have_attribute("data-status", "matched")
    jones.get_by_role("button", name=re.compile(r"^Undo K JONES")).click()
    expect(jones).to_have_attribute("data-status", "new")
    expect(jones.locator(".maybe li .cand")).to_have_text(
        "2026-11-23 · Subs L Garcia (no word in common)"
    )

    # The cheque: one tap on its candidate.
    clicks.click(cheque.locator(".act-match-candidate"))
    expect(cheque).to_have_attribute("data-status", "matched")
    # K JONES: posted alone, with a description of its own.
    clicks.type(jones.locator(".line-desc"), "Subs K Jones")
    assert jones.locator("select").input_value() == str(ids["Dues"])
    clicks.click(jones.locator(".act-post"))
    expect(jones).to_have_attribute("data-status", "posted")
    expect_text(page, "#statement-counts", r"^5 lines: 3 posted, 2 matched\.$")

    clicks.click("#reconcile")
    shown = f"{CLOSING // 100:,}.{CLOSING % 100:02d}"
    expect_text(
        page,
        "#statement-message",
        rf"^Reconciled Bank to 2026-11-30 at {re.escape(shown)}: 5 entries now locked\.$",
    )
    assert (clicks.count, clicks.typed) == (CLICKS[size], TYPED)

    # A reconciled line cannot be undone: the server's reason, nothing changed.
    line_of(page, 1).get_by_role("button", name=re.compile(r"^Undo CITY POWER")).click()
    expect_text(page, "#statement-message", r"reconciled")
    expect(line_of(page, 1)).to_have_attribute("data-status", "posted")
    fits(page)

    # Nothing booked twice: seven transactions, each bank line once in the books.
    described = sorted(tx["description"] for tx in live.transactions())
    assert described == [
        "BANK CHARGES · MONTHLY FEE",
        "CITY POWER COMPANY · DIRECT DEBIT",
        "Cheque 101 Hall hire",
        "Opening balance",
        "Printer ink",
        "Subs K Jones",
        "Subs L Garcia",
    ]
    assert bank_entries(live, ids["Bank"]) == sorted(
        [
            (OPENING, None, True),
            (-12000, "NOV004", True),  # the cheque, matched
            (-6420, "NOV002", True),  # the ink, corrected, matched
            (1500, None, False),  # Garcia's: untouched, not on this statement
            (-8800, "NOV001", True),
            (1500, "NOV003", True),  # K Jones's, posted
            (-500, "NOV005", True),
        ],
        key=str,
    )
    assert reconciliations(live, ids["Bank"]) == [("2026-10-31", OPENING), ("2026-11-30", CLOSING)]
    status, statement = live_statement(live, ids["Bank"])
    assert status == 200
    assert [line["status"] for line in statement["lines"]] == [
        "posted",
        "matched",
        "posted",
        "matched",
        "posted",
    ]


def live_statement(live, bank_id):
    """(200, the account's statement as the API serves it), read through the services."""
    from app.services.banking import statements

    with live.app.app_context():
        (listed,) = statements.list_statements(bank_id)
        return 200, statements.get(listed["id"])


def test_the_rules_page(treasurer, live, size):
    """Every rule listed with what it matches in words; a rule made with every
    condition the API takes, previewed (the lines it would file now), changed and
    deleted; from a statement line, "always file this payee here" with payee contains
    and an amount range."""
    ids = seed(live)
    page = sign_in(treasurer, live, "/")
    go(page, live, f"/statements?account={ids['Bank']}")
    page.set_input_files(
        "#stmt-file",
        files=[
            {
                "name": "november.sta",
                "mimeType": "text/plain",
                "buffer": mt940(lines(), OPENING, "2026-11-30"),
            }
        ],
    )
    expect_text(page, "#statement-counts", r"^5 lines: 5 new\.$")
    # From a line: payee contains, with an amount range.
    ink = line_of(page, 2)
    expect(ink.locator("select")).to_have_value(str(ids["Printing"]))
    ink.locator(".act-rule").click()
    panel = ink.locator(".rule-panel")
    expect(panel.locator("[role=status]")).to_have_text(
        "It would file 1 waiting line now (in this statement):"
    )
    panel.locator(".rule-kind").select_option("payee_contains")
    panel.locator(".rule-text").fill("printer ink")
    panel.locator(".rule-min").fill("-100.00")
    panel.locator(".rule-max").fill("-0.01")
    panel.locator(".rule-max").dispatch_event("change")
    expect(panel.locator(".rule-said")).to_have_text(
        "From now on, lines in Bank whose payee contains “printer ink” and amount from "
        "-100.00 to -0.01 are suggested for Printing."
    )
    expect(panel.locator(".act-make-rule")).to_be_enabled()
    if size == "phone":
        all_big_enough(page)
    fits(page)
    panel.locator(".act-make-rule").click()
    expect_text(page, "#statement-message", r"^Made the rule “printer ink → Printing”: 1 waiting")

    # The Rules page, from the statement page's link.
    page.click("#stmt-rules")
    page.wait_for_url(f"{live.web}/rules")
    page.wait_for_selector("body[data-ready=true]")
    listed = page.locator("#rules > li[data-rule]")
    expect(listed).to_have_count(5)
    expect(page.locator("#rules-title")).to_have_text("Rules (5)")
    made = listed.filter(has_text="printer ink → Printing")
    expect(made.locator(".said")).to_have_text(
        "Lines whose payee contains “printer ink” and amount from -100.00 to -0.01, in Bank, "
        "go to Printing; priority 100."
    )
    expect(listed.filter(has_text="Membership").locator(".said")).to_have_text(
        "Lines whose memo contains “membership”, in Bank, go to Dues; priority 100."
    )
    fits(page)

    # A new rule with every condition the API takes.
    page.fill("#rule-name", "Jones only")
    page.fill("#rule-payee-is", "K  Jones")
    page.fill("#rule-payee-contains", "jones")
    page.fill("#rule-memo-contains", "member")
    page.fill("#rule-min", "10")
    page.fill("#rule-max", "20.00")
    page.select_option("#rule-counter", str(ids["Dues"]))
    page.fill("#rule-description", "Subs K Jones")
    page.fill("#rule-priority", "5")
    page.click("#rule-preview")
    expect_text(page, "#form-preview", r"^It would file 1 waiting line now:$")
    expect(page.locator("#form-preview-list li")).to_have_text(
        [re.compile(r"^2026-11-24 · K JONES · 15\.00 \(statement \d+, line 3\)$")]
    )
    dates_unbroken(page)
    page.fill("#rule-min", "30")
    page.click("#rule-save")
    expect_text(page, "#message", r"^The amount's “from” is above its “to”")
    assert page.locator("#rule-min").get_attribute("aria-invalid") == "true"
    page.fill("#rule-min", "10")
    page.click("#rule-save")
    expect_text(page, "#message", r"^Made the rule “Jones only”")
    expect(listed).to_have_count(6)
    jones = listed.filter(has_text="Jones only")
    expect(jones.locator(".said")).to_have_text(
        "Lines whose payee is “K Jones” and payee contains “jones” and memo contains "
        "“member” and amount from 10.00 to 20.00, in any account, go to Dues (described "
        "“Subs K Jones”); priority 5."
    )
    if size == "phone":
        all_big_enough(page)
    fits(page)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "rules", size)

    # Edit: the form holds the rule; turned inactive, it files nothing.
    jones.locator(".act-edit").click()
    expect(page.locator("#rule-form-title")).to_have_text("Change the rule “Jones only”")
    assert page.locator("#rule-payee-is").input_value() == "K Jones"
    assert page.locator("#rule-min").input_value() == "10.00"
    page.uncheck("#rule-active")
    page.click("#rule-save")
    expect_text(page, "#message", r"^Saved the rule “Jones only”")
    expect(jones.locator(".said")).to_have_text(re.compile(r"; priority 5, inactive\.$"))
    jones.locator(".act-preview").click()
    expect(jones.locator("p.hint")).to_have_text(
        "It would file no waiting line now; it applies to the lines of later statements."
    )
    # Delete, confirmed in place.
    jones.locator(".act-delete").click()
    jones.get_by_role("button", name="Delete it").click()
    expect_text(page, "#list-message", r"^Deleted the rule “Jones only”")
    expect(listed).to_have_count(5)
    from app.services.banking import rules

    with live.app.app_context():
        kept = rules.list_rules()
    assert [r["name"] for r in kept if r["name"].startswith("printer")] == [
        "printer ink → Printing"
    ]
    made_rule = next(r for r in kept if r["name"] == "printer ink → Printing")
    assert made_rule["conditions"] == {
        "payee_contains": "printer ink",
        "min_cents": -10000,
        "max_cents": -1,
    }
    assert made_rule["account_id"] == ids["Bank"]
    assert treasurer.errors == []
