"""The History page in headless Chromium (issue 19): the audit trail, paged and filtered,
naming the person, how (via) and the application; no sideways scroll at 390 px.

Uses the browser, live servers and person of tests/web/conftest.py (as
tests/web/test_web_browser.py).
"""

from __future__ import annotations

import pytest

from app import store
from app.services.identity import credentials
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def _token(server) -> str:
    with server.app.app_context():
        token = credentials.mint_token(
            "alice@example.com", label="script", days=1, audience=server.api
        )
        store.commit()
        return token


def test_history_pages_filters_and_fits_a_phone(live, person):
    live.add_user()
    page = person.page
    page.goto(live.web + "/")
    person.first_sign_in()
    page.wait_for_url(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    # One change in the web app (a cookie session), on the accounts view...
    page.goto(live.web + "/accounts")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#account-name", "Petty cash")
    page.select_option("#account-kind", "asset")
    page.click("#account-submit")
    expect_text(page, "#new-account-message", r"^Created Petty cash\.$")
    # ...and five with a minted token (client svc-cli, "Ledger command line").
    token = _token(live)
    ids = {}
    for name, kind in (("Bank", "asset"), ("Dues", "income")):
        status, body = live.call(
            "POST", "/accounts", json_body={"name": name, "kind": kind}, token=token
        )
        assert status == 201, body
        ids[name] = body["id"]
    for n, description in enumerate(("Dues from Ann", "Dues from Bo", "Dues from Cy"), start=1):
        status, body = live.call(
            "POST",
            "/transactions",
            json_body={
                "occurred_on": f"2026-03-0{n}",
                "description": description,
                "entries": [
                    {"account_id": ids["Bank"], "amount_cents": 1000 * n},
                    {"account_id": ids["Dues"], "amount_cents": -1000 * n},
                ],
            },
            token=token,
        )
        assert status == 201, body

    page.goto(live.web + "/history?limit=4")
    page.wait_for_selector("body[data-ready=true]")
    events = page.locator("#events > li")
    expect(events).to_have_count(4)
    expect(events.locator(".event-action")).to_have_text(
        ["Transaction recorded"] * 3 + ["Account created"]
    )
    newest = events.first
    expect(newest.locator(".event-who")).to_have_text(
        "alice@example.com · with a token · using Ledger command line"
    )
    expect(newest.locator(".event-what")).to_have_text("2026-03-03 · Dues from Cy · 30.00")
    # Signed as the reports sign them: the dues (income) grew by 30.00 (issue 44).
    expect(newest.locator(".event-entries li")).to_have_text(["Bank: 30.00", "Dues: 30.00"])
    expect_text(page, "#history-head", r"^Newest change #6, fingerprint [0-9a-f]{16}…$")

    page.click("#history-more")  # the next page, appended below
    expect(events).to_have_count(6)
    expect(page.locator("#history-more")).to_be_hidden()
    oldest = events.last
    expect(oldest.locator(".event-action")).to_have_text("Account created")
    expect(oldest.locator(".event-who")).to_have_text("alice@example.com · in the web app")
    expect(oldest.locator(".event-what")).to_have_text("Petty cash · asset")

    page.select_option("#history-action", "transaction.posted")
    page.click("#history-filter button[type=submit]")
    expect(page.locator("#events > li[data-action='transaction.posted']")).to_have_count(3)
    expect(events).to_have_count(3)
    person.shot("history")

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live.web + "/history")
    page.wait_for_selector("body[data-ready=true]")
    expect(events).to_have_count(6)
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1] == 390, widths
    person.shot("history-390")


def test_history_says_what_became_of_a_bank_line(live, person):  # noqa: F811
    """A statement's line ignored, and another posted, read in words on History
    (the contract's statement_line.ignored event), and the filter offers them."""
    from app.services.banking import lines, statements
    from tests.web.bank_files import ofx

    live.add_user()
    token = _token(live)
    ids = {}
    for name, kind in (("Bank", "asset"), ("Gym", "expense")):
        status, body = live.call(
            "POST", "/accounts", json_body={"name": name, "kind": kind}, token=token
        )
        assert status == 201, body
        ids[name] = body["id"]
    data = ofx(
        [
            {
                "booked_on": "2026-03-04",
                "amount_cents": -700,
                "bank_ref": "REF3",
                "payee": "Gym",
                "memo": "March",
            },
            {
                "booked_on": "2026-03-05",
                "amount_cents": -800,
                "bank_ref": "REF4",
                "payee": "Gym",
                "memo": "April",
            },
        ]
    )
    with live.app.app_context():
        sid = store.run_unit(statements.upload, ids["Bank"], data, None, None)["id"]
        body = {
            "lines": [
                {"line_id": 1, "action": "ignore"},
                {"line_id": 2, "action": "post", "account_id": ids["Gym"]},
            ]
        }
        store.run_unit(lines.act, sid, body, None)
        posted_as = statements.get(sid)["lines"][1]["transaction_id"]
        undo = {"lines": [{"line_id": 2, "action": "undo"}]}
        store.run_unit(lines.act, sid, undo, None)
    page = person.page
    page.goto(live.web + "/")
    person.first_sign_in()
    page.wait_for_url(live.web + "/")
    page.goto(live.web + "/history")
    page.wait_for_selector("body[data-ready=true]")
    ignored = page.locator("#events > li[data-action='statement_line.ignored']")
    expect(ignored.locator(".event-action")).to_have_text("Bank line ignored")
    expect(ignored.locator(".event-what")).to_have_text(
        f"Statement {sid}, line 1: 2026-03-04 · Gym · -7.00 · ref REF3"
    )
    posted = page.locator("#events > li[data-action='statement_line.posted']")
    expect(posted.locator(".event-action")).to_have_text("Bank line posted")
    expect(posted.locator(".event-link")).to_contain_text("Now transaction")
    undone = page.locator("#events > li[data-action='statement_line.undone']")
    expect(undone.locator(".event-action")).to_have_text("Bank line undone")
    expect(undone.locator(".event-undone")).to_contain_text(
        f"Was posted as transaction {posted_as}"
    )
    uploaded = page.locator("#events > li[data-action='statement.uploaded']")
    expect(uploaded.locator(".event-what")).to_have_text(f"Statement {sid} of Bank · ofx · 2 lines")
    page.select_option("#history-action", "statement_line.ignored")
    page.click("#history-filter button[type=submit]")
    expect(page.locator("#events > li")).to_have_count(1)


def test_history_names_the_books_currency_set(live, person):
    """PUT /books/currency with a token, twice: History reads both in words."""
    live.add_user()
    token = _token(live)
    for code in ("EUR", "CHF"):
        status, body = live.call(
            "PUT", "/books/currency", json_body={"currency": code}, token=token
        )
        assert status == 200, body
    page = person.page
    page.goto(live.web + "/")
    person.first_sign_in()
    page.wait_for_url(live.web + "/")
    page.goto(live.web + "/history")
    page.wait_for_selector("body[data-ready=true]")
    rows = page.locator("#events > li[data-action='books.currency_set']")
    expect(rows).to_have_count(2)
    expect(rows.locator(".event-action")).to_have_text(["Currency set", "Currency set"])
    expect(rows.locator(".event-what")).to_have_text(["Currency EUR → CHF", "Currency EUR"])
    page.select_option("#history-action", "books.currency_set")
    page.click("#history-filter button[type=submit]")
    expect(page.locator("#events > li")).to_have_count(2)


def test_every_event_reads_in_words_with_the_reports_signs(live, person):
    """Issue 44: statement uploads, deletions and rules showed raw event names, and
    income a minus sign. Each event here reads as words (the phrases of every action
    are checked by tests/js/history-words.test.mjs), each entry signed as the reports
    sign it: income positive when it grows, expenses positive."""
    from app.services.banking import rules, statements
    from app.services.ledger import accounts, transactions
    from tests.web.bank_files import ofx

    live.add_user()
    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in (("Bank", "asset"), ("Dues", "income"), ("Hall", "expense"))
        }
        for day, text, account, cents in (
            ("2026-03-01", "Dues from Ann", "Dues", -2000),
            ("2026-03-02", "Dues refund to Bo", "Dues", 500),
            ("2026-03-03", "Hall rent", "Hall", 35000),
        ):
            transactions.record_transaction(
                day,
                text,
                [
                    {"account_id": ids[account], "amount_cents": cents},
                    {"account_id": ids["Bank"], "amount_cents": -cents},
                ],
                created_by=None,
            )
        store.commit()
        line = {"booked_on": "2026-03-04", "amount_cents": -700, "bank_ref": "R3"}
        data = ofx([line | {"payee": "Gym", "memo": "March"}])
        sid = store.run_unit(statements.upload, ids["Bank"], data, None, None)["id"]
        store.run_unit(statements.remove, sid)
        rule = {"name": "Hall hire", "counter_account_id": ids["Hall"]}
        rule_id = store.run_unit(
            rules.create_rule, rule | {"conditions": {"payee_contains": "st marys"}}
        )["id"]
        store.run_unit(rules.update_rule, rule_id, {"description": "Hall rent"})
        store.run_unit(rules.delete_rule, rule_id)
    page = person.page
    page.goto(live.web + "/")
    person.first_sign_in()
    page.wait_for_url(live.web + "/")
    page.goto(live.web + "/history")
    page.wait_for_selector("body[data-ready=true]")
    events = page.locator("#events > li")
    expect(events.locator(".event-action")).to_have_text(
        [
            "Filing rule deleted",
            "Filing rule changed",
            "Filing rule created",
            "Bank statement deleted",
            "Bank statement uploaded",
            *["Transaction recorded"] * 3,
            *["Account created"] * 3,
        ]
    )
    expect(page.locator("li[data-action='statement.deleted'] .event-what")).to_have_text(
        f"Statement {sid} of Bank · ofx · 1 line"
    )
    expect(page.locator("li[data-action='rule.created'] .event-what")).to_have_text(
        "Hall hire → Hall"
    )
    posted = page.locator("li[data-action='transaction.posted']")
    expect(posted.nth(0).locator(".event-entries li")).to_have_text(
        ["Hall: 350.00", "Bank: -350.00"]
    )
    expect(posted.nth(1).locator(".event-entries li")).to_have_text(
        ["Dues: -5.00", "Bank: -5.00"]  # a refund: the dues shrank
    )
    expect(posted.nth(2).locator(".event-entries li")).to_have_text(["Dues: 20.00", "Bank: 20.00"])
