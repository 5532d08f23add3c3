"""A club's books over three years for the trends tests (tests/web/test_web_trends.py):
twenty accounts, every month of 2024 and 2025 and 2026 to November, the approved
budget of 2025, the bank reconciled to 2025-12-31 (and once more in 2026), the
savings account to 2025-12-31. Built through the services, as the other web seeds."""

from __future__ import annotations

from datetime import date

from app import store

ACCOUNTS = [
    ("Bank", "asset"),
    ("Savings account", "asset"),
    ("Petty cash", "asset"),
    ("Club credit card", "liability"),
    ("Opening funds", "equity"),
    ("Subscriptions", "income"),
    ("Donations", "income"),
    ("Grants", "income"),
    ("Raffle", "income"),
    ("Bar takings", "income"),
    ("Hall hire income", "income"),
    ("Hall rent", "expense"),
    ("Insurance", "expense"),
    ("Printing", "expense"),
    ("Postage", "expense"),
    ("Refreshments", "expense"),
    ("Equipment", "expense"),
    ("Travel", "expense"),
    ("Bank charges", "expense"),
    ("Subscriptions and memberships paid", "expense"),
]
LAST_MONTH = {2024: 12, 2025: 12, 2026: 11}


def seed_club_years(live) -> dict:
    from app.services.ledger import (
        accounts,
        budgets,
        reconciliation,
        register,
        settings,
        transactions,
    )

    with live.app.app_context():
        settings.update_settings("club")
        ids = {name: accounts.create_account(name, kind)["id"] for name, kind in ACCOUNTS}

        def post(day, description, debit, credit, cents):
            transactions.record_transaction(
                day,
                description,
                [
                    {"account_id": ids[debit], "amount_cents": cents},
                    {"account_id": ids[credit], "amount_cents": -cents},
                ],
                created_by=None,
            )

        post("2024-01-01", "Funds brought forward", "Bank", "Opening funds", 500000)
        for year, last in LAST_MONTH.items():
            for m in range(1, last + 1):
                a_month(post, year, m)

        made = budgets.create_budget({"name": "Budget 2025", "starts_on": "2025-01-01"})
        twelve = lambda cents: [cents] * 12  # noqa: E731
        budgets.update_budget(
            made["id"],
            {
                "lines": [
                    {"account_id": ids["Subscriptions"], "months": twelve(50000)},
                    {"account_id": ids["Bar takings"], "months": twelve(14000)},
                    {"account_id": ids["Grants"], "months": [0] * 4 + [250000] + [0] * 7},
                    {"account_id": ids["Hall rent"], "months": twelve(42000)},
                    {"account_id": ids["Refreshments"], "months": twelve(6000)},
                    {"account_id": ids["Insurance"], "months": [0, 0, 15000] * 4},
                ]
            },
        )
        budgets.approve_budget(made["id"], "alice@example.com")
        ids["budget"] = made["id"]

        def reconcile(name, day):
            items = register.register(ids[name], None, date.fromisoformat(day), 500, None)["items"]
            open_ = [i["entry_id"] for i in items if not i["reconciled"]]
            reconciliation.set_cleared(ids[name], open_, True)
            reconciliation.reconcile(ids[name], day, items[0]["balance_cents"], None)

        reconcile("Bank", "2025-12-31")
        reconcile("Savings account", "2025-12-31")
        reconcile("Bank", "2026-10-31")  # after the year: not the annual report's
        store.commit()
    return ids


def a_month(post, year, m):
    """One month of the club's books: the year's growth raises some figures."""
    grow = year - 2024

    def day(d):
        return f"{year}-{m:02d}-{d:02d}"

    for n in range(1, 5):
        post(day(n * 5), f"Subscriptions {n}", "Bank", "Subscriptions", 2500 * (4 + grow))
    post(day(6), "Bar takings", "Petty cash", "Bar takings", 12000 + m * 150 + grow * 900)
    post(day(8), "Hall hire", "Bank", "Hall hire income", 5000 + grow * 500)
    post(day(3), "Hall rent", "Hall rent", "Bank", 40000 + grow * 2000)
    post(day(9), "Tea and biscuits", "Refreshments", "Petty cash", 6000 + grow * 400)
    post(day(12), "Newsletter", "Printing", "Bank", 3500)
    post(day(13), "Stamps", "Postage", "Petty cash", 800 + m * 10)
    post(day(28), "Bank charges", "Bank charges", "Bank", 500)
    post(day(14), "Train to the league", "Travel", "Club credit card", 2000 + grow * 300)
    post(day(25), "Card paid off", "Club credit card", "Bank", 2000 + grow * 300)
    if m % 3 == 0:
        post(day(15), "Insurance", "Insurance", "Bank", 15000)
    if m in (6, 12) and not (year == 2026 and m == 12):
        post(day(20), "Raffle", "Bank", "Raffle", 30000 + grow * 5000)
    if m in (4, 10):
        post(day(21), "Donation", "Bank", "Donations", 20000)
    if m == 5 and year < 2026:
        post(day(22), "Council grant", "Bank", "Grants", 250000)
    if m == 1:
        post(day(2), "To savings", "Savings account", "Bank", 100000)
    if m == 2:
        post(day(2), "League", "Subscriptions and memberships paid", "Bank", 12000)
    if m == 8 and year == 2025:
        post(day(18), "New projector", "Equipment", "Bank", 80000)
