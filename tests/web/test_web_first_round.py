"""What a page reads before it can draw anything goes out in one round (issue 47,
docs/performance.md "Pages: what a person waits for"): the session, the wording
setting, the accounts and the page's own first reads are asked for together, not
one after another. And a part of that round that fails is said while the rest of
the page still shows. In headless Chromium at 1280x800 and 390x844, on both stores.
"""

from __future__ import annotations

import pytest

from tests.web.pages import go, seed, sign_in
from tests.web.web_support import expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

# page -> the API reads it must have asked for while /auth/me is still unanswered
FIRST_ROUND = {
    "/": ("/settings", "/accounts", "/books/lock"),
    "/accounts": ("/settings",),
    "/register": ("/settings", "/accounts", "/books/lock"),
    "/reports": ("/settings", "/accounts"),
    "/budgets": ("/settings", "/accounts", "/budgets"),
    "/rules": ("/settings", "/accounts"),
    "/expected": ("/settings", "/accounts"),
    "/history": ("/accounts", "/audit/head"),
    "/import": ("/settings", "/accounts"),
    # The reconciliations (the trail) too; with an account in the address also its
    # statement list and the statement named there (test_web_statements.py).
    "/statements": ("/settings", "/accounts", "/rules", "/schedules", "/audit"),
}


@pytest.mark.parametrize("path", sorted(FIRST_ROUND))
def test_first_reads_go_out_while_the_session_is_still_being_checked(treasurer, live, size, path):
    seed(live)
    page = sign_in(treasurer, live)
    held = []
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url.removeprefix(live.api).split("?")[0]))
    page.route(f"{live.api}/auth/me", lambda route: held.append(route))
    page.goto(live.web + path, wait_until="commit")
    try:
        for wanted in ("/auth/me", *FIRST_ROUND[path]):
            # Waited for by the request itself: with the session's answer held back, a
            # page that waits for it before asking never sends these.
            if wanted not in asked:
                page.wait_for_event(
                    "request",
                    lambda r, w=wanted: r.url.removeprefix(live.api).split("?")[0] == w,
                    timeout=10_000,
                )
        for _ in range(200):  # the route's handler runs as Playwright's loop turns
            if held:
                break
            page.wait_for_timeout(25)
        assert held, "the page did not check the session"
        assert page.locator("body[data-ready=true]").count() == 0
    finally:
        for route in held:
            route.continue_()
        page.unroute(f"{live.api}/auth/me")
    page.wait_for_selector("body[data-ready=true]")


def test_books_say_a_lock_date_they_could_not_read_and_still_list(treasurer, live, size):
    seed(live)
    page = sign_in(treasurer, live)
    page.route(
        f"{live.api}/books/lock",
        lambda route: route.fulfill(
            status=503, content_type="application/json", body='{"error": "unavailable"}'
        ),
    )
    go(page, live, "/")
    expect_text(page, "#message", r"Could not load the lock date\.")
    assert page.locator("#transactions tbody tr[data-id]").count() > 0
    assert page.locator("#tx-account option", has_text="Coffee").count() == 1


def test_budgets_say_a_budget_in_the_address_that_is_not_there(treasurer, live, size):
    seed(live)
    page = sign_in(treasurer, live)
    go(page, live, "/budgets?budget=999999")
    expect_text(page, "#message", r"No such budget\.")
    assert page.locator("#budget-editor").is_hidden()
    assert page.locator("#budget-start").input_value()  # the rest of the page is drawn
