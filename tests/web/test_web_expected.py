"""Issue 45's Expected page in headless Chromium, at 1280x800 and on a 390x844 phone
(docs/web.md "Expected", docs/schedules.md): a club sets up twelve members' yearly dues
after five have paid (their payments already in the books, so those five show met),
sees the seven who have not (after a hirer's overdue fee), matches, skips, posts and
reopens in one tap each, and a hall rent in mode `post` is posted by the service when
it is saved. The form is in
words (never rule text) and shows the next five dates before saving; nothing is wider
than the phone. Screenshots docs/screenshot-expected(-phone).png (tests/web/pages.py,
`shot`). The live servers run on the real clock: dates are counted from today (UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app import store
from tests.web.pages import all_big_enough, dates_unbroken, fits, go, shot, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

MEMBERS = [
    "Ann Baker",
    "Bob Carter",
    "Cleo Dunn",
    "Dev Ellis",
    "Eva Frost",
    "Finn Gray",
    "Gus Hale",
    "Hana Ito",
    "Ivo Jones",
    "Jo Kim",
    "Kai Lund",
    "Lea Moss",
]
PAID = MEMBERS[:5]
UNPAID = MEMBERS[5:]
DUES_CENTS = 5000
RENT_CENTS = 45000


def utc_today():
    return datetime.now(UTC).date()


def club(live, due):
    """The club's books: a bank with an opening balance, dues income, the hall rent,
    and five members' payments for this year's dues (dated around `due`)."""
    from app.services.ledger import accounts, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Opening balances", "equity"),
                ("Dues", "income"),
                ("Hall rent", "expense"),
                ("Hire", "income"),
            ]
        }
        transactions.record_transaction(
            (due - timedelta(days=120)).isoformat(),
            "Opening balance",
            [
                {"account_id": ids["Bank"], "amount_cents": 300000},
                {"account_id": ids["Opening balances"], "amount_cents": -300000},
            ],
            created_by=None,
        )
        for n, member in enumerate(PAID):
            transactions.record_transaction(
                (due + timedelta(days=n % 3 - 1)).isoformat(),
                f"Membership {member}",
                [
                    {"account_id": ids["Bank"], "amount_cents": DUES_CENTS},
                    {"account_id": ids["Dues"], "amount_cents": -DUES_CENTS},
                ],
                created_by=None,
            )
        store.commit()
    return ids


def kitchen_hire(live, ids, today):
    """A hirer's fee due three days ago that allows no day late (window 0): overdue,
    though due after the dues (the API lists it after them; the page first)."""
    from app.services.ledger import schedules

    on = today - timedelta(days=3)
    with live.app.app_context():
        schedules.create_schedule(
            {
                "name": "Kitchen hire",
                "account_id": ids["Bank"],
                "counter_account_id": ids["Hire"],
                "amount_cents": 2500,
                "rrule": f"FREQ=YEARLY;BYMONTH={on.month};BYMONTHDAY={on.day}",
                "starts_on": (today - timedelta(days=30)).isoformat(),
                "window_days": 0,
            },
            None,
        )
        store.commit()


def record(live, ids, on, description):
    from app.services.ledger import transactions

    with live.app.app_context():
        made_id = transactions.record_transaction(
            on.isoformat(),
            description,
            [
                {"account_id": ids["Bank"], "amount_cents": DUES_CENTS},
                {"account_id": ids["Dues"], "amount_cents": -DUES_CENTS},
            ],
            created_by=None,
        )
        store.commit()
    return made_id


def read(page, live, path, **query):
    """An API answer read with the browser's session (the person's own cookie)."""
    response = page.request.get(f"{live.api}{path}", params=query or None)
    assert response.status == 200, response.text()
    return response.json()


def occurrences(page, live, **query):
    return read(page, live, "/schedules/occurrences", **query)["items"]


def schedules_named(page, live):
    return {s["name"]: s for s in read(page, live, "/schedules")}


def bank_entries(page, live, ids, description):
    """(occurred_on, amount_cents, transaction_id) of the bank's register entries so
    described, read through the API with the browser's session (GET
    /accounts/{id}/register, every page)."""
    found, cursor = [], None
    while True:
        query = {"limit": 500, **({"cursor": cursor} if cursor else {})}
        body = read(page, live, f"/accounts/{ids['Bank']}/register", **query)
        found += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    return [
        (e["occurred_on"], e["amount_cents"], e["transaction_id"])
        for e in found
        if e["description"] == description
    ]


def row(page, list_id, name):
    return page.locator(f"#{list_id} > li").filter(has_text=name)


def test_a_club_sets_up_dues_after_five_paid_and_a_rent_that_posts_itself(treasurer, live, size):
    today = utc_today()
    due = today - timedelta(days=5)  # this year's dues fell due five days ago
    ids = club(live, due)
    kitchen_hire(live, ids, today)
    page = sign_in(treasurer, live, "/expected")
    expect(page.locator("#due-list > li")).to_have_count(1)

    # The rule in words, with the next five dates from the API before saving.
    page.fill("#sched-amount", "50.00")
    page.select_option("#sched-account", label="Bank")
    page.select_option("#sched-counter", label="Dues")
    page.select_option("#sched-repeat", "year")
    page.select_option("#sched-day", str(due.day))
    page.select_option("#sched-month", str(due.month))
    page.fill("#sched-starts", (today - timedelta(days=30)).isoformat())
    words = f"every year on {due.day} {due.strftime('%B')}"
    expect(page.locator("#sched-words")).to_have_text(words)
    assert "FREQ" not in page.locator("#schedule-form").inner_text()  # never rule text
    years = [due.replace(year=due.year + n).isoformat() for n in range(5)]
    expect(page.locator("#sched-preview > li .date")).to_have_text(years)

    # Twelve members at once, and a name given twice: one line refused, saying why.
    page.fill("#dues-names", "\n".join([*MEMBERS, "", "ann  baker"]))
    page.click("#dues-create")
    expect(page.locator("#dues-report > li")).to_have_count(13)
    expect(page.locator("#dues-report > li.made")).to_have_count(12)
    refused = page.locator("#dues-report > li.refused")
    expect(refused).to_have_count(1)
    expect(refused).to_contain_text("ann baker: not made")
    expect(refused).to_contain_text("already exists")
    made = {k: v for k, v in schedules_named(page, live).items() if k.startswith("Dues: ")}
    assert sorted(made) == sorted(f"Dues: {m}" for m in MEMBERS)
    assert {s["match_text"] for s in made.values()} == set(MEMBERS)
    assert {s["rrule"] for s in made.values()} == {
        f"FREQ=YEARLY;BYMONTH={due.month};BYMONTHDAY={due.day}"
    }
    assert {s["amount_cents"] for s in made.values()} == {DUES_CENTS}

    # Who has not paid: the seven, overdue and due first; the five who paid are met.
    # The hirer's overdue fee comes before the dues that are merely due, though the API
    # lists it after them (due later).
    expect(page.locator("#due-list > li")).to_have_count(1 + len(UNPAID))
    shown = page.locator("#due-list > li .name").all_inner_texts()
    assert shown[0] == "Kitchen hire"
    expect(page.locator("#due-list > li").first).to_have_attribute("data-status", "overdue")
    assert sorted(shown[1:]) == sorted(f"Dues: {m}" for m in UNPAID)
    assert {o["status"] for o in occurrences(page, live) if o["name"] in shown[1:]} == {"due"}
    met = {o["name"] for o in occurrences(page, live, status="met")}
    assert met == {f"Dues: {m}" for m in PAID}
    page.click("#done-fold > summary")
    expect(page.locator("#done-list > li[data-status=met]")).to_have_count(len(PAID))
    dates_unbroken(page)
    fits(page)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "expected", size)

    # Match: Finn paid without his name in the description; one tap on his entry.
    transfer = record(live, ids, due + timedelta(days=2), "Bank transfer 0042")
    go(page, live, "/expected")
    finn = row(page, "due-list", "Dues: Finn Gray")
    finn.get_by_role("button", name="Match: Dues: Finn Gray").click()
    choice = finn.locator(f"button.match-choice[data-transaction='{transfer}']")
    expect(choice).to_be_visible()
    fits(page)
    choice.click()
    expect(page.locator("#due-list > li")).to_have_count(1 + len(UNPAID) - 1)
    finn_now = occurrences(page, live, schedule_id=made["Dues: Finn Gray"]["id"])
    assert [(o["status"], o["transaction_id"]) for o in finn_now] == [("met", transfer)]

    # Skip: Gus left the club. Post: Hana paid cash into the bank, recorded as expected.
    row(page, "due-list", "Dues: Gus Hale").get_by_role(
        "button", name="Skip: Dues: Gus Hale"
    ).click()
    expect(page.locator("#due-list > li")).to_have_count(1 + len(UNPAID) - 2)
    row(page, "due-list", "Dues: Hana Ito").get_by_role(
        "button", name="Post: Dues: Hana Ito"
    ).click()
    expect(page.locator("#due-list > li")).to_have_count(1 + len(UNPAID) - 3)
    hana = bank_entries(page, live, ids, "Dues: Hana Ito")
    assert [(on, cents) for on, cents, _ in hana] == [(due.isoformat(), DUES_CENTS)]
    hana_now = occurrences(page, live, schedule_id=made["Dues: Hana Ito"]["id"])
    assert [(o["status"], o["transaction_id"]) for o in hana_now] == [("posted", hana[0][2])]
    # Reopen: Gus came back after all.
    page.click("#done-fold > summary")
    gus = row(page, "done-list", "Dues: Gus Hale")
    expect(gus).to_have_attribute("data-status", "skipped")
    gus.get_by_role("button", name="Reopen: Dues: Gus Hale").click()
    expect(page.locator("#due-list > li")).to_have_count(1 + len(UNPAID) - 2)
    expect(row(page, "due-list", "Dues: Gus Hale")).to_have_count(1)

    # The hall rent, in mode post from three months back: the service posts what is due
    # when it is saved (every month on the 1st: three so far).
    start = (today.replace(day=1) - timedelta(days=40)).replace(day=1)
    page.check("#sched-out")
    page.fill("#sched-amount", "450")
    page.select_option("#sched-account", label="Bank")
    page.select_option("#sched-counter", label="Hall rent")
    # Without a name: refused, the field marked and focused, nothing stored.
    page.click("#sched-save")
    expect_text(page, "#sched-message", r"(?i)name is required")
    expect(page.locator("#sched-name")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#sched-name")).to_be_focused()
    assert "Hall rent" not in schedules_named(page, live)
    page.fill("#sched-name", "Hall rent")
    page.select_option("#sched-repeat", "month")
    page.select_option("#sched-every", "1")
    page.select_option("#sched-day", "1")
    page.fill("#sched-starts", start.isoformat())
    expect(page.locator("#sched-words")).to_have_text("every month on the 1st")
    expect(page.locator("#sched-preview > li .date").first).to_have_text(start.isoformat())
    page.click("#sched-more > summary")
    page.select_option("#sched-mode", "post")
    page.fill("#sched-post-from", start.isoformat())
    fits(page)
    if size == "phone":
        all_big_enough(page)  # issue 37's tap targets, every fold of the page open
    page.click("#sched-save")
    expect_text(
        page,
        "#sched-message",
        r"Saved Hall rent: every month on the 1st\. What was due is posted\.",
    )
    rent = schedules_named(page, live)["Hall rent"]
    assert rent["mode"] == "post" and rent["post_from"] == start.isoformat()
    posted = occurrences(page, live, schedule_id=rent["id"], **{"from": start.isoformat()})
    due_so_far = [o for o in posted if o["due_on"] <= today.isoformat()]
    assert len(due_so_far) == 3
    assert {o["status"] for o in due_so_far} == {"posted"}
    rent_entries = bank_entries(page, live, ids, "Hall rent")
    assert sorted((on, cents) for on, cents, _ in rent_entries) == sorted(
        (o["due_on"], -RENT_CENTS) for o in due_so_far
    )
    assert {tx for _, _, tx in rent_entries} == {o["transaction_id"] for o in due_so_far}
    # Posted, so not waiting: the rent is not among who has not paid.
    expect(row(page, "due-list", "Hall rent")).to_have_count(0)

    # Change: the schedule back in the form, in words; a new amount from now on, what
    # was posted stays as it was.
    rent_row = page.locator(f"#schedule-list > li[data-schedule='{rent['id']}']")
    expect(rent_row).to_contain_text("-450.00 every month on the 1st, posted on its date")
    rent_row.get_by_role("button", name="Change Hall rent").click()
    expect(page.locator("#form-title")).to_have_text("Change Hall rent")
    expect(page.locator("#sched-words")).to_have_text("every month on the 1st")
    expect(page.locator("#sched-out")).to_be_checked()
    expect(page.locator("#sched-amount")).to_have_value("450.00")
    expect(page.locator("#sched-mode")).to_have_value("post")
    page.fill("#sched-amount", "475")
    page.click("#sched-save")
    expect_text(page, "#sched-message", r"^Changed Hall rent: every month on the 1st\.")
    assert schedules_named(page, live)["Hall rent"]["amount_cents"] == -47500
    assert (
        sorted(cents for _, cents, _ in bank_entries(page, live, ids, "Hall rent"))
        == [-RENT_CENTS] * 3
    )
    expect(page.locator("#form-title")).to_have_text("New schedule")

    # The bank's forecast: the next rent and the dues still open, lowest point marked.
    expect(page.locator("#forecast-account")).to_have_value(str(ids["Bank"]))
    expect(page.locator("svg.forecast-chart circle.lowest")).to_have_count(1)
    figures = read(page, live, "/reports/forecast", account_id=ids["Bank"])
    expect(page.locator("#forecast-table tbody tr")).to_have_count(1 + len(figures["items"]))
    lowest = figures["lowest"]["balance_cents"]
    assert lowest > 0  # the opening balance keeps the bank above zero
    expect(page.locator("#forecast-lowest")).to_have_text(f"{lowest // 100:,}.{lowest % 100:02d}")
    expect(page.locator("svg.forecast-chart circle.lowest")).to_have_attribute(
        "data-on", figures["lowest"]["on"]
    )
    fits(page)
    dates_unbroken(page)


def test_the_statement_page_names_the_expected_item_a_line_meets(treasurer, live, size):
    """A bank line that would meet a member's open dues is suggested the dues account,
    and the statement page says which expected item it is; posting it meets it."""
    from tests.web.bank_files import ofx

    today = utc_today()
    due = today - timedelta(days=5)
    ids = club(live, due)
    from app.services.ledger import schedules

    with live.app.app_context():
        ivo = schedules.create_schedule(
            {
                "name": "Dues: Ivo Jones",
                "account_id": ids["Bank"],
                "counter_account_id": ids["Dues"],
                "amount_cents": DUES_CENTS,
                "rrule": f"FREQ=YEARLY;BYMONTH={due.month};BYMONTHDAY={due.day}",
                "starts_on": (today - timedelta(days=30)).isoformat(),
                "match_text": "Ivo Jones",
            },
            None,
        )
        store.commit()
    page = sign_in(treasurer, live, f"/statements?account={ids['Bank']}")
    line = {
        "booked_on": (due + timedelta(days=1)).isoformat(),
        "amount_cents": DUES_CENTS,
        "payee": "Ivo Jones",
        "memo": "Membership",
        "bank_ref": "FIT45001",
    }
    page.set_input_files(
        "#stmt-file",
        files=[{"name": "n.ofx", "mimeType": "text/plain", "buffer": ofx([line])}],
    )
    first = page.locator("#lines > li").first
    expect(first.locator(".detail")).to_have_text(
        f"Expected: Dues: Ivo Jones due {due.isoformat()}."
    )
    assert first.locator("select").input_value() == str(ids["Dues"])
    fits(page)
    # The five paid members' entries are candidates of the same amount: the line is
    # posted by its own button, to the account suggested.
    first.locator("button.act-post").click()
    expect(page.locator("#lines > li[data-status=posted]")).to_have_count(1)
    met = occurrences(page, live, schedule_id=ivo["id"])
    assert [o["status"] for o in met] == ["met"]
    go(page, live, "/expected")
    expect(page.locator("#due-list > li")).to_have_count(0)
