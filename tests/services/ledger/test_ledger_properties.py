"""Property-based tests of the ledger: random sequences keep every invariant.

A hypothesis state machine creates accounts, posts transactions (balanced and not,
with unknown accounts, with amounts up to the 64-bit limits), deletes them (and ids
that do not exist) and asks for reports, over HTTP with a bearer token, while a
plain Python model records what must be stored. After every step:

- every stored transaction has at least 2 entries summing to exactly 0;
- the raw all-time balances of all accounts sum to 0;
- the stored books equal the model (nothing lost, nothing extra, refusals stored nothing);
- the balances report equals the model's sign-adjusted figures;
- the balance sheet balances (assets = liabilities + equity) at a random date, and
  its retained earnings equal income minus expenses up to that date;
- the income statement's net equals its income minus its expenses;
- the tool endpoint (POST /mcp) returns exactly the HTTP figures for the same arguments.

Bounded: a fixed number of examples and steps, derandomized, no example database.
"""

from __future__ import annotations

from datetime import date, timedelta

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import text

from app.extensions import db
from tests.testkit import ApiClient, reset_database

KINDS = ["asset", "liability", "equity", "income", "expense"]
NEGATED = {"liability", "equity", "income"}
FIRST_DAY = date(2026, 1, 1)
INT64_MAX = 2**63 - 1

days = st.integers(0, 60).map(lambda n: FIRST_DAY + timedelta(days=n))
# Mostly everyday amounts, sometimes the 64-bit extremes (whose sums leave the range).
amounts = st.one_of(
    st.integers(1, 10**7),
    st.sampled_from([1, 99, 2**62, INT64_MAX]),
)

PROPERTY_SETTINGS = settings(
    max_examples=25,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    # Bounded in CI: a failure is reported as found (no minutes-long shrinking).
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)


def shown(kind: str, raw: int) -> int:
    return -raw if kind in NEGATED else raw


class LedgerMachine(RuleBasedStateMachine):
    accounts = Bundle("accounts")
    transactions = Bundle("transactions")

    def __init__(self, app):
        super().__init__()
        self.app = app
        with app.app_context():
            reset_database()
            from app import store
            from app.services.identity import credentials, users

            if users.find_user("alice@example.com") is None:
                users.add_user("alice@example.com", "correct horse battery staple")
                store.commit()
            self.token = credentials.mint_token(
                "alice@example.com", label=None, days=365, audience=app.config["API_ORIGIN"]
            )
            store.commit()
        self.api = ApiClient(app.test_client(), self.token)
        self.model_accounts: dict[int, tuple[str, str]] = {}  # id -> (name, kind)
        self.model_txs: dict[int, tuple[date, list[tuple[int, int]]]] = {}
        self.rpc_id = 0

    # ------------------------------------------------------------ helpers
    def post(self, day: date, entries: list[tuple[int, int]]):
        return self.api.post(
            "/transactions",
            json={
                "occurred_on": day.isoformat(),
                "description": "property",
                "entries": [{"account_id": a, "amount_cents": c} for a, c in entries],
            },
        )

    def tool(self, name: str, arguments: dict):
        self.rpc_id += 1
        response = self.api.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": self.rpc_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            },
        )
        assert response.status_code == 200, response.data
        reply = response.get_json()
        assert "result" in reply, reply
        data = reply["result"]["structuredContent"]
        return data["result"] if list(data) == ["result"] else data

    def near_the_limit(self, day: date, entries: list[tuple[int, int]]) -> bool:
        """Whether applying entries (either order, entry by entry or netted) could take a
        stored day or month balance out of the 64-bit range: then 400 is also right."""
        for same in (lambda d: d == day, lambda d: (d.year, d.month) == (day.year, day.month)):
            stored: dict[int, int] = {}
            for d, legs in self.model_txs.values():
                if same(d):
                    for account, cents in legs:
                        stored[account] = stored.get(account, 0) + cents
            for order in (entries, entries[::-1]):
                running = dict(stored)
                for account, cents in order:
                    running[account] = running.get(account, 0) + cents
                    if not -(2**63) <= running[account] <= INT64_MAX:
                        return True
        return False

    def model_raw(self, start: date | None = None, end: date | None = None) -> dict[int, int]:
        raw = dict.fromkeys(self.model_accounts, 0)
        for day, entries in self.model_txs.values():
            if (start is None or day >= start) and (end is None or day <= end):
                for account_id, cents in entries:
                    raw[account_id] += cents
        return raw

    # -------------------------------------------------------------- rules
    @initialize(target=accounts)
    def one_account_of_each_kind(self):
        return multiple(*(self.create_account(kind, 0) for kind in KINDS))

    @rule(target=accounts, kind=st.sampled_from(KINDS), n=st.integers(0, 6))
    def create_account(self, kind, n):
        name = f"{kind.title()} {n}"
        response = self.api.post("/accounts", json={"name": name, "kind": kind})
        if any(existing == name for existing, _ in self.model_accounts.values()):
            assert response.status_code == 400, response.get_json()
            assert "already exists" in response.get_json()["error"]
            return self._existing_id(name)
        assert response.status_code == 201, response.get_json()
        account = response.get_json()
        assert (account["name"], account["kind"]) == (name, kind)
        self.model_accounts[account["id"]] = (name, kind)
        return account["id"]

    def _existing_id(self, name):
        return next(i for i, (n, _) in self.model_accounts.items() if n == name)

    @rule(
        target=transactions,
        day=days,
        debit=accounts,
        credit=accounts,
        legs=st.lists(amounts, min_size=1, max_size=3),
    )
    def post_balanced(self, day, debit, credit, legs):
        # Several debit legs against one credit leg of their total (split postings).
        entries = [(debit, c) for c in legs] + [(credit, -sum(legs))]
        if not -sum(legs) >= -(2**63):
            entries = [(debit, legs[0]), (credit, -legs[0])]
        response = self.post(day, entries)
        if response.status_code == 400 and self.near_the_limit(day, entries):
            assert "64-bit" in response.get_json()["error"]
            return multiple()  # refused, stored nothing (the invariants check that)
        assert response.status_code == 201, response.get_json()
        tx_id = response.get_json()["id"]
        assert tx_id not in self.model_txs
        self.model_txs[tx_id] = (day, entries)
        return tx_id

    @rule(day=days, first=accounts, second=accounts, cents=amounts, off=st.integers(1, 1000))
    def post_unbalanced(self, day, first, second, cents, off):
        response = self.post(day, [(first, cents), (second, -cents + off)])
        assert response.status_code == 400
        assert "sum to 0" in response.get_json()["error"]

    @rule(day=days, account=accounts, cents=amounts)
    def post_single_leg(self, day, account, cents):
        response = self.post(day, [(account, cents)])
        assert response.status_code == 400
        assert "at least 2 entries" in response.get_json()["error"]

    @rule(day=days, account=accounts, cents=amounts)
    def post_unknown_account(self, day, account, cents):
        unknown = max(self.model_accounts) + 1000
        response = self.post(day, [(account, cents), (unknown, -cents)])
        assert response.status_code == 400
        assert "unknown account_id" in response.get_json()["error"]

    @rule(tx_id=consumes(transactions))
    def delete_transaction(self, tx_id):
        response = self.api.delete(f"/transactions/{tx_id}")
        day, entries = self.model_txs[tx_id]
        undo = [(account, -cents) for account, cents in entries]
        if response.status_code == 400 and self.near_the_limit(day, undo):
            assert "64-bit" in response.get_json()["error"]
            return
        assert response.status_code == 204
        del self.model_txs[tx_id]

    @rule(offset=st.integers(1, 50))
    def delete_missing(self, offset):
        missing = max(self.model_txs, default=0) + offset
        response = self.api.delete(f"/transactions/{missing}")
        assert response.status_code == 404
        assert response.get_json() == {"error": "no such transaction"}

    @rule(start=days, span=st.integers(0, 40))
    def income_statement_matches(self, start, span):
        end = start + timedelta(days=span)
        args = {"from": start.isoformat(), "to": end.isoformat()}
        http = self.api.get("/reports/income-statement", query_string=args)
        assert http.status_code == 200
        report = http.get_json()
        assert report["net_cents"] == report["total_income_cents"] - report["total_expenses_cents"]
        raw = self.model_raw(start, end)
        expect_income = sum(-raw[i] for i, (_, k) in self.model_accounts.items() if k == "income")
        expect_expenses = sum(raw[i] for i, (_, k) in self.model_accounts.items() if k == "expense")
        assert report["total_income_cents"] == expect_income
        assert report["total_expenses_cents"] == expect_expenses
        assert self.tool("income_statement", args) == report

    @rule(start=days, span=st.integers(0, 40))
    def windowed_balances_match(self, start, span):
        end = start + timedelta(days=span)
        args = {"from": start.isoformat(), "to": end.isoformat()}
        http = self.api.get("/reports/balances", query_string=args)
        assert http.status_code == 200
        raw = self.model_raw(start, end)
        expect = {name: shown(kind, raw[i]) for i, (name, kind) in self.model_accounts.items()}
        assert {line["account"]: line["cents"] for line in http.get_json()} == expect
        assert self.tool("account_balances", args) == http.get_json()

    # --------------------------------------------------------- invariants
    @invariant()
    def stored_transactions_balance(self):
        with self.app.app_context():
            rows = db.session.execute(
                text(
                    "SELECT t.id, e.amount_cents FROM transactions t "
                    "LEFT JOIN entries e ON e.transaction_id = t.id"
                )
            ).all()
            db.session.remove()
        stored: dict[int, list[int]] = {}
        for tx_id, cents in rows:
            stored.setdefault(tx_id, [])
            if cents is not None:
                stored[tx_id].append(cents)
        for tx_id, legs in stored.items():
            assert len(legs) >= 2 and sum(legs) == 0, (tx_id, legs)
        # Nothing lost, nothing extra: refusals stored nothing, deletes removed everything.
        assert set(stored) == set(self.model_txs)
        for tx_id, legs in stored.items():
            assert sorted(legs) == sorted(c for _, c in self.model_txs[tx_id][1])

    @invariant()
    def all_time_balances_sum_to_zero(self):
        if not self.model_accounts:
            return
        http = self.api.get("/reports/balances")
        assert http.status_code == 200, http.get_json()
        lines = {line["account"]: line["cents"] for line in http.get_json()}
        raw = {name: shown(kind, lines[name]) for name, kind in self.model_accounts.values()}
        assert sum(raw.values()) == 0
        model = self.model_raw()
        assert raw == {name: model[i] for i, (name, _) in self.model_accounts.items()}
        assert self.tool("account_balances", {}) == http.get_json()

    @invariant()
    def balance_sheet_identity(self):
        if not self.model_accounts:
            return
        as_of = FIRST_DAY + timedelta(days=(len(self.model_txs) * 7) % 61)
        args = {"as_of": as_of.isoformat()}
        http = self.api.get("/reports/balance-sheet", query_string=args)
        assert http.status_code == 200, http.get_json()
        sheet = http.get_json()
        assert sheet["total_assets_cents"] == (
            sheet["total_liabilities_cents"] + sheet["total_equity_cents"]
        )
        raw = self.model_raw(None, as_of)
        kinds = {i: k for i, (_, k) in self.model_accounts.items()}
        income = sum(-raw[i] for i, k in kinds.items() if k == "income")
        expenses = sum(raw[i] for i, k in kinds.items() if k == "expense")
        assert sheet["retained_cents"] == income - expenses
        assert (
            sheet["total_equity_cents"]
            == sum(line["cents"] for line in sheet["equity"]) + sheet["retained_cents"]
        )
        assert self.tool("balance_sheet", args) == sheet


@pytest.mark.slow  # a property run / a backup restored across stores (README)
def test_random_ledger_sequences_keep_every_invariant(app):
    run_state_machine_as_test(lambda: LedgerMachine(app), settings=PROPERTY_SETTINGS)


def test_balances_beyond_64_bits_are_reported_exactly(api, make_account, post_tx):
    """Each amount fits 64 bits, an all-time balance need not: reports stay exact."""
    bank = make_account("Bank", "asset")
    salary = make_account("Salary", "income")
    for day in ("2026-01-01", "2026-02-01"):
        assert post_tx(day, "big", (bank, INT64_MAX), (salary, -INT64_MAX)).status_code == 201
    balances = api.get("/reports/balances")
    assert balances.status_code == 200
    assert balances.get_json() == [
        {"account": "Bank", "cents": 2 * INT64_MAX},
        {"account": "Salary", "cents": 2 * INT64_MAX},
    ]
    sheet = api.get("/reports/balance-sheet", query_string={"as_of": "2026-02-01"}).get_json()
    assert sheet["total_assets_cents"] == sheet["retained_cents"] == 2 * INT64_MAX


def test_a_register_beyond_64_bits_is_exact_on_every_page(api, make_account, post_tx):
    """The register's sums (services/ledger/register.py) past 64 bits: SQLite's SUM stops
    with "integer overflow" and the figures are added in Python instead; PostgreSQL sums
    into numeric. The first page, a page below a cursor and a page up to a date agree."""
    bank = make_account("Bank", "asset")
    salary = make_account("Salary", "income")
    for day in ("2026-01-01", "2026-02-01"):
        assert post_tx(day, "big", (bank, INT64_MAX), (salary, -INT64_MAX)).status_code == 201
    first = api.get(f"/accounts/{bank}/register", query_string={"limit": 1}).get_json()
    assert first["balance_cents"] == 2 * INT64_MAX
    assert [i["balance_cents"] for i in first["items"]] == [2 * INT64_MAX]
    second = api.get(
        f"/accounts/{bank}/register", query_string={"limit": 1, "cursor": first["next_cursor"]}
    ).get_json()
    assert [i["balance_cents"] for i in second["items"]] == [INT64_MAX]
    assert second["balance_cents"] == 2 * INT64_MAX
    window = api.get(f"/accounts/{salary}/register", query_string={"to": "2026-03-01"})
    assert [i["balance_cents"] for i in window.get_json()["items"]] == [
        2 * INT64_MAX,
        INT64_MAX,
    ]
    assert window.get_json()["balance_cents"] == 2 * INT64_MAX


def test_a_posting_that_would_overflow_a_stored_balance_is_refused(api, make_account, post_tx):
    """A day's or month's balance is stored as a 64-bit integer: leaving that range is a
    400 that stores nothing (SQLite used to store a rounded float; PostgreSQL a 500)."""
    bank = make_account("Bank", "asset")
    salary = make_account("Salary", "income")
    assert post_tx("2026-01-01", "big", (bank, INT64_MAX), (salary, -INT64_MAX)).status_code == 201
    for day in ("2026-01-01", "2026-01-31"):  # the same day, and the same month
        refused = post_tx(day, "more", (bank, 1), (salary, -1))
        assert refused.status_code == 400
        assert "64-bit" in refused.get_json()["error"]
    assert [t["description"] for t in api.get("/transactions").get_json()] == ["big"]
    assert api.get("/reports/balances").get_json() == [
        {"account": "Bank", "cents": INT64_MAX},
        {"account": "Salary", "cents": INT64_MAX},
    ]


def test_posting_whose_running_sum_leaves_64_bits_is_accepted(api, make_account, post_tx):
    """2**62 + 2**62 - 2**63 sums to 0; the store's check must not stop at the overflow."""
    bank = make_account("Bank", "asset")
    cash = make_account("Cash", "asset")
    fund = make_account("Fund", "equity")
    response = post_tx("2026-01-01", "split", (bank, 2**62), (cash, 2**62), (fund, -(2**63)))
    assert response.status_code == 201, response.get_json()
    unbalanced = post_tx("2026-01-01", "off", (bank, 2**62), (cash, 2**62), (fund, -(2**63) + 1))
    assert unbalanced.status_code == 400
    assert [t["description"] for t in api.get("/transactions").get_json()] == ["split"]
