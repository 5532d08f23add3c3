"""End to end in headless Chromium: the web app against the real API, with a CDP
virtual authenticator standing in for the person's passkey.

The API and the web app run on waitress in a background thread on free ports,
both on `localhost` (same site, so the API's SameSite=Lax cookie is stored and
sent). Chromium is Debian's /usr/bin/chromium driven by Playwright for Python
(never a downloaded browser), with the flags from BROWSER-TESTING.md.

Where Chromium or Playwright is missing these are skipped with the reason, except
under CI / LEDGER_REQUIRE_BROWSER (see tests/web/web_support.py), where .ci/run
installs both and a skip would hide a gap, so they fail instead.

Screenshots of the main pages land in build/screenshots/ (git-ignored).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from app.extensions import db
from tests.support import PASSWORD, free_port
from tests.web.web_support import (
    expect,
    expect_text,
)

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def test_first_sign_in_enrols_a_passkey_and_later_ones_use_it(live, person):
    live.add_user()
    page = person.page

    # The books need a signed-in person: off to sign in, with the way back kept.
    page.goto(live.web + "/")
    page.wait_for_url(live.web + "/signin?next=%2F")

    # The throttle: counted per email (known or not); the page shows the wait.
    for _ in range(4):
        person.password_step("mallory@example.com", "guess")
        expect_text(page, "#message", r"^Wrong email or password\.$")
        page.locator("#message").evaluate("el => { el.textContent = ''; el.hidden = true; }")
    person.password_step("mallory@example.com", "guess")
    expect_text(page, "#message", r"Too many failed sign-in attempts\. Wait [12] seconds?")
    assert page.locator("#login-submit").is_disabled()
    expect_text(page, "#message", r"You can try again now", timeout=5_000)

    # Wrong password: said plainly, nothing else happens.
    person.password_step("alice@example.com", "not the password")
    expect_text(page, "#message", r"^Wrong email or password\.$")
    assert page.locator("#enrol-step").is_hidden()

    # First sign-in: the password leads to enrolling the first passkey.
    person.password_step()
    page.wait_for_selector("#enrol-step:not([hidden])")
    assert page.locator("#passkey-step").is_hidden()
    person.shot("signin-first-passkey")
    page.fill("#passkey-name", "Laptop")
    page.click("#enrol-passkey")
    page.wait_for_url(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#who").inner_text() == "alice@example.com"
    assert len(person.credentials()) == 1
    person.shot("books-empty")

    # Security: the only passkey is listed and cannot be deleted.
    page.click("nav >> text=Security")
    page.wait_for_selector("#passkeys li")
    row = page.locator("#passkeys li", has_text="Laptop")
    row.get_by_role("button", name="Delete").click()
    row.get_by_role("button", name="Yes").click()
    expect_text(page, "#passkey-message", r"last passkey.*Add another passkey")
    expect(page.locator("#passkeys li")).to_have_count(1)

    # Adding from the same device is refused by the browser (the API excludes the
    # credentials it already has), and the page says why.
    page.fill("#new-passkey-name", "Laptop again")
    page.click("#add-passkey-submit")
    expect_text(page, "#passkey-message", r"already holds a passkey")
    expect(page.locator("#passkeys li")).to_have_count(1)

    # A second device adds its passkey; then the first one may go.
    person.new_device()
    page.fill("#new-passkey-name", "Phone")
    page.click("#add-passkey-submit")
    expect_text(page, "#passkey-message", r"^Passkey added\.$")
    expect(page.locator("#passkeys li")).to_have_count(2)
    assert len(person.credentials()) == 1
    row = page.locator("#passkeys li", has_text="Laptop")
    row.get_by_role("button", name="Delete").click()
    row.get_by_role("button", name="Yes").click()
    expect_text(page, "#passkey-message", r"Deleted “Laptop”")
    expect(page.locator("#passkeys li .name")).to_have_text(["Phone"])

    # Password change with a wrong current password is refused; the session lives on.
    page.fill("#current-password", "not it")
    page.fill("#new-password", "a brand new secret")
    page.fill("#repeat-password", "a brand new secret")
    page.click("#password-submit")
    expect_text(page, "#password-message", r"(?i)current password")
    assert "error" in page.locator("#password-message").get_attribute("class")
    person.shot("security")

    # Sign out, then a later sign-in uses the passkey.
    page.click("#sign-out")
    page.wait_for_url(live.web + "/signin")
    page.goto(live.web + "/")
    page.wait_for_url(live.web + "/signin?next=%2F")

    # A ceremony that fails in the browser (here: no user verification) is
    # reported as cancelled, and the button tries again.
    person.user_verified(False)
    person.password_step()
    page.wait_for_selector("#passkey-step:not([hidden])")
    expect_text(page, "#message", r"cancelled or timed out")
    assert page.url.startswith(live.web + "/signin")
    person.user_verified(True)
    page.click("#passkey-signin")
    page.wait_for_url(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#who").inner_text() == "alice@example.com"
    assert person.credentials()[0]["signCount"] >= 2  # enrolment, then this sign-in (Phone)

    # A password change signs out everywhere; the new password (and the passkey) work.
    page.goto(live.web + "/security")
    page.fill("#current-password", PASSWORD)
    page.fill("#new-password", "a brand new secret")
    page.fill("#repeat-password", "a brand new secret")
    page.click("#password-submit")
    expect_text(page, "#password-message", r"^Password changed\. You were signed out everywhere")
    page.wait_for_url(live.web + "/signin")
    person.password_step(password=PASSWORD)
    expect_text(page, "#message", r"^Wrong email or password\.$")
    person.password_step(password="a brand new secret")
    page.wait_for_url(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")


def _block_other_hosts(person):
    """Abort every request leaving `localhost` and return the list of their URLs."""
    elsewhere = []

    def handle(route):
        if urllib.parse.urlsplit(route.request.url).hostname == "localhost":
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    person.context.route("**/*", handle)
    return elsewhere


def _stays_on_the_web_origin(live, page, elsewhere):
    """The sign-in page went on to the books on WEB_ORIGIN and nowhere else."""
    from playwright.sync_api import Error as PlaywrightError

    # A navigation aborted by _block_other_hosts: the checks below say where to.
    with contextlib.suppress(PlaywrightError):
        page.wait_for_url(lambda url: url == live.web + "/" or not url.startswith(live.web + "/"))
    page.wait_for_timeout(300)  # a late second navigation would show up here
    assert elsewhere == [], f"the sign-in page sent the browser elsewhere: {elsewhere}"
    parts = urllib.parse.urlsplit(page.url)
    assert f"{parts.scheme}://{parts.netloc}" == live.web, page.url
    assert page.url == live.web + "/", page.url
    page.wait_for_selector("body[data-ready=true]")


# Paths the URL parser only turns into "//evil.example/x" (another host) while
# normalising: the check must apply to what is finally navigated to.
NORMALISED_AWAY = ["/.//evil.example/x", "/..//evil.example/x", "/%2e//evil.example/x"]


def test_sign_in_never_follows_next_to_another_site(live, person):
    live.add_user()
    page = person.page
    elsewhere = _block_other_hosts(person)

    # Signing in (password, then the first passkey) through a hostile link.
    page.goto(live.web + "/signin?next=" + NORMALISED_AWAY[0])
    person.first_sign_in()
    _stays_on_the_web_origin(live, page, elsewhere)

    # Fully signed in, the sign-in page goes straight on: still only to this origin.
    for target in NORMALISED_AWAY:
        for query in (target, urllib.parse.quote(target, safe="")):
            page.goto(live.web + "/signin?next=" + query)
            _stays_on_the_web_origin(live, page, elsewhere)

    # A legitimate `next` still works.
    page.goto(live.web + "/signin?next=" + urllib.parse.quote("/security?x=1", safe=""))
    page.wait_for_url(live.web + "/security?x=1")
    assert elsewhere == []


def test_sign_in_sends_nothing_before_its_script_has_taken_over_the_form(live, person):
    """Until signin.js runs, Continue and Enter do nothing: the browser's own form
    submission would put the password in the address (and the click of a fast person,
    or of a test, would be lost). Seen in CI: the click landed before the module ran."""
    live.add_user()
    page = person.page
    held = []
    page.route("**/static/js/pages/signin.js", lambda route: held.append(route))
    page.goto(live.web + "/signin", wait_until="commit")  # the held script delays DOMContentLoaded
    page.wait_for_selector("#login")
    assert held, "the page's script was not requested"
    assert page.locator("#login-submit").is_disabled()
    page.fill("#email", "alice@example.com")
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_timeout(300)
    assert "password" not in page.url and PASSWORD not in page.url
    assert page.url == live.web + "/signin"
    assert page.locator("body[data-ready=true]").count() == 0

    # The script arrives: the button works and the same form signs in.
    held[0].continue_()
    page.wait_for_selector("body[data-ready=true]")
    page.click("#login-submit")
    page.wait_for_selector("#enrol-step:not([hidden])")
    assert PASSWORD not in page.url


def _pkce():
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_consent_for_a_dynamic_client_ends_at_its_redirect_and_can_be_revoked(live, person):
    live.add_user()
    page = person.page
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    status, registered = live.call(
        "POST",
        "/oauth/register",
        json_body={"redirect_uris": [redirect_uri], "client_name": "Helper <b>Bot</b>"},
    )
    assert status == 201, registered
    client_id = registered["client_id"]
    # The client's loopback listener: answer whatever the browser is sent to.
    page.route(
        f"{redirect_uri}**",
        lambda route: route.fulfill(
            status=200, content_type="text/plain", body="the client got its answer"
        ),
    )

    def authorize_query(state):
        verifier, challenge = _pkce()
        return verifier, urllib.parse.urlencode(
            {
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "response_type": "code",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": live.api,
                "state": state,
            }
        )

    # Not signed in: the API sends the browser to the consent page, which sends it
    # to sign in first and then back to the very same request.
    verifier, query = authorize_query("first try/1")
    page.goto(live.api + "/oauth/authorize?" + query)
    page.wait_for_url(re.compile(re.escape(live.web + "/signin?next=%2Fauthorize%3F")))
    person.first_sign_in()
    page.wait_for_url(live.web + "/authorize?" + query)
    page.wait_for_selector("#consent:not([hidden])")
    assert page.locator("#client-name").inner_text() == "Helper <b>Bot</b>"  # text, not markup
    assert page.locator("#first-use-warning").is_visible()
    assert "never been approved" in page.locator("#first-use-warning").inner_text()
    assert "full access to the books" in page.locator(".meaning").inner_text()
    person.shot("consent")

    page.click("#approve")
    page.wait_for_url(re.compile("^" + re.escape(redirect_uri + "?")))
    answer = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert answer["state"] == ["first try/1"]
    status, tokens = live.call(
        "POST",
        "/oauth/token",
        form={
            "grant_type": "authorization_code",
            "code": answer["code"][0],
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": live.api,
        },
    )
    assert status == 200, tokens
    assert live.call("GET", "/accounts", token=tokens["access_token"])[0] == 200

    # Once used, the client is no longer flagged; denying returns access_denied.
    _, query = authorize_query("second")
    page.goto(live.api + "/oauth/authorize?" + query)
    page.wait_for_selector("#consent:not([hidden])")
    assert page.locator("#first-use-warning").is_hidden()
    page.click("#deny")
    page.wait_for_url(re.compile("^" + re.escape(redirect_uri + "?")))
    answer = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert answer == {"error": ["access_denied"], "state": ["second"], "iss": [live.api]}

    # Security settings list the connection; revoking it ends the client's access.
    page.goto(live.web + "/security")
    row = page.locator("#connections tbody tr", has_text="Helper <b>Bot</b>")
    row.wait_for()
    assert "connected application" in row.inner_text()
    row.get_by_role("button", name="Revoke").click()
    row.get_by_role("button", name="Yes").click()
    expect_text(page, "#connection-message", r"^Revoked Helper <b>Bot</b>")
    expect(page.locator("#connections tbody tr", has_text="Helper")).to_have_count(0)
    status, body = live.call(
        "POST",
        "/oauth/token",
        form={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client_id,
        },
    )
    assert (status, body["error"]) == (400, "invalid_grant")
    assert live.call("GET", "/accounts", token=tokens["access_token"])[0] == 401


def test_device_flow_is_approved_in_the_page_while_the_device_polls(live, person):
    live.add_user()
    page = person.page
    status, grant = live.call(
        "POST", "/oauth/device_authorization", form={"client_id": "svc-cli", "resource": live.api}
    )
    assert status == 200, grant
    assert grant["verification_uri"] == live.web + "/device"

    outcome = {"polls": []}

    def poll():  # the device: poll, wait the interval (more after slow_down), until an answer
        interval = grant["interval"]
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            status, body = live.call(
                "POST",
                "/oauth/token",
                form={
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                    "device_code": grant["device_code"],
                    "client_id": "svc-cli",
                    "resource": live.api,
                },
            )
            outcome["polls"].append(body.get("error", "tokens"))
            if status == 200:
                outcome["tokens"] = body
                return
            if body["error"] == "slow_down":
                interval += 5
            elif body["error"] != "authorization_pending":
                return
            time.sleep(interval)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()

    # The link the device shows: sign in first, then straight to the request.
    assert grant["verification_uri_complete"] == (
        f"{live.web}/device?user_code={grant['user_code']}"
    )
    page.goto(grant["verification_uri_complete"])
    page.wait_for_url(live.web + "/signin?next=%2Fdevice%3Fuser_code%3D*")
    person.first_sign_in()
    page.wait_for_url(grant["verification_uri_complete"])
    page.wait_for_selector("#device-request:not([hidden])")
    assert page.locator("#device-code-shown").inner_text() == grant["user_code"]
    expect_text(page, "#attempts", r"one of 10 attempts")

    # A wrong code costs an attempt, and the page says how many are left.
    page.fill("#user-code", "wxyz-wxyz")
    page.click("#lookup")
    expect_text(page, "#message", r"No pending request matches that code")
    expect_text(page, "#attempts", r"^9 of 10 attempts left")

    # The right code, typed in lower case without the dash.
    page.fill("#user-code", grant["user_code"].lower().replace("-", ""))
    page.click("#lookup")
    page.wait_for_selector("#device-request:not([hidden])")
    assert page.locator("#user-code").input_value() == grant["user_code"]
    with live.app.app_context():
        from app.models.oauth import OAuthClient

        name = db.session.get(OAuthClient, "svc-cli").name
    assert page.locator("#device-client-name").inner_text() == name
    assert page.locator("#device-first-use-warning").is_hidden()  # a first-party client
    person.shot("device")
    assert "tokens" not in outcome  # the device is still waiting
    page.click("#device-approve")
    expect_text(page, "#message", r"^Approved\.")
    poller.join(timeout=30)
    assert "tokens" in outcome, outcome
    assert outcome["polls"][0] == "authorization_pending"  # it was waiting on the person
    assert outcome["polls"][-1] == "tokens"
    assert live.call("GET", "/accounts", token=outcome["tokens"]["access_token"])[0] == 200

    # The budget running out: 9 more failures answer 400, then the API refuses (429).
    page.goto(live.web + "/device")
    expect_text(page, "#attempts", r"^9 of 10 attempts left")
    for left in range(8, -1, -1):
        page.fill("#user-code", "WXYZ-WXYZ")
        page.click("#lookup")
        expect_text(page, "#attempts", rf"^{left} of 10 attempts left")
    page.fill("#user-code", "WXYZ-WXYZ")
    page.click("#lookup")
    expect_text(page, "#message", r"All 10 attempts for this sign-in are used up")
    assert page.locator("#lookup").is_disabled()


def test_keeping_the_books(live, person):
    live.add_user()
    page = person.page
    page.goto(live.web + "/")
    person.first_sign_in()
    page.wait_for_url(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    writes = []  # every write the page sends to the API, in order
    page.on(
        "request",
        lambda r: (
            writes.append((r.method, urllib.parse.urlsplit(r.url).path))
            if r.url.startswith(live.api) and r.method in ("POST", "PUT", "DELETE")
            else None
        ),
    )

    page.goto(live.web + "/accounts")
    page.wait_for_selector("body[data-ready=true]")
    for name, kind in [
        ("Bank", "asset"),
        ("Cash", "asset"),
        ("Dues", "income"),
        ("Rent", "expense"),
    ]:
        page.fill("#account-name", name)
        page.select_option("#account-kind", kind)
        page.click("#account-submit")
        expect_text(page, "#new-account-message", rf"^Created {name}\.$")
    page.fill("#account-name", "Bank")
    page.click("#account-submit")
    expect_text(page, "#new-account-message", r"\w")  # the API's duplicate-name refusal
    assert "error" in page.locator("#new-account-message").get_attribute("class")
    page.goto(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")

    def record(mode, on, description, amount, source, destination):
        page.check(f"input[name=mode][value={mode}]")
        page.fill("#occurred-on", on)
        page.fill("#description", description)
        page.fill("#amount", amount)
        page.select_option("#credit", label=source)
        page.select_option("#debit", label=destination)
        page.click("#record-submit")

    record("in", "2026-03-01", "Dues from Ann", "$1,234.5", "Dues", "Bank")
    expect_text(page, "#record-message", r"^Recorded: Dues from Ann, 1,234\.50\.$")
    record("out", "2026-03-05", "Stamps", "0.07", "Bank", "Rent")
    expect_text(page, "#record-message", r"^Recorded: Stamps, 0\.07\.$")
    record("transfer", "2026-01-15", "Float to cash", "12", "Bank", "Cash")
    expect_text(page, "#record-message", r"^Recorded: Float to cash, 12\.00\.$")

    def stored():
        return {
            tx["description"]: [(e["account_name"], e["amount_cents"]) for e in tx["entries"]]
            for tx in live.transactions()
        }

    assert stored() == {
        "Dues from Ann": [("Bank", 123450), ("Dues", -123450)],  # debit asset, credit income
        "Stamps": [("Rent", 7), ("Bank", -7)],  # debit expense, credit asset
        "Float to cash": [("Cash", 1200), ("Bank", -1200)],  # debit destination
    }

    # Refusals happen in the page: a clear message and nothing sent.
    sent = len(writes)
    record("out", "2026-03-06", "Too precise", "1.234", "Bank", "Rent")
    expect_text(page, "#record-message", r"recorded to the cent: use at most two decimal places")
    record("transfer", "2026-03-06", "Going nowhere", "12", "Bank", "Bank")
    expect_text(page, "#record-message", r"two different accounts")
    record("in", "2026-03-06", "Comma cents", "1,23", "Dues", "Bank")
    expect_text(page, "#record-message", r"Commas may only separate thousands")
    assert len(writes) == sent and len(live.transactions()) == 3

    page.goto(live.web + "/accounts")
    page.wait_for_selector("body[data-ready=true]")
    rows = page.locator("#account-groups tr[data-account]")
    expect(rows).to_have_count(4)
    balances = {
        row.get_attribute("data-account"): row.locator(".num").inner_text() for row in rows.all()
    }
    assert balances == {"Bank": "1,222.43", "Cash": "12.00", "Dues": "1,234.50", "Rent": "0.07"}
    page.goto(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")

    # Newest first, and the date filter.
    descriptions = page.locator("#transactions tbody tr td:nth-child(2)")
    expect(descriptions).to_have_text(["Stamps", "Dues from Ann", "Float to cash"])
    page.fill("#tx-from", "2026-02-01")
    page.fill("#tx-to", "2026-03-04")
    page.click("#tx-filter button[type=submit]")
    expect(descriptions).to_have_text(["Dues from Ann"])
    page.click("#tx-clear")
    expect(descriptions).to_have_text(["Stamps", "Dues from Ann", "Float to cash"])
    assert page.locator("#tx-count").inner_text() == "3 transactions."

    # Edit, in place: one request, the corrected transaction naming the one it replaces
    # (the server stores it and deletes the original in one step).
    old_id = next(tx["id"] for tx in live.transactions() if tx["description"] == "Stamps")
    sent = len(writes)
    page.locator("#transactions tbody tr", has_text="Stamps").get_by_role(
        "button", name="Edit"
    ).click()
    edit = page.locator(f"tr.editing[data-edit='{old_id}']")
    assert edit.locator(".e-amount").input_value() == "0.07"
    assert edit.locator("input[value=out]").is_checked()
    edit.locator(".e-amount").fill("0.70")
    edit.locator(".e-description").fill("Stamps and envelopes")
    edit.locator(".e-save").click()
    expect_text(page, "#tx-message", r"^Saved: Stamps and envelopes, 0\.70\.$")
    assert writes[sent:] == [("POST", "/transactions")]
    after = stored()
    assert "Stamps" not in after and after["Stamps and envelopes"] == [("Rent", 70), ("Bank", -70)]
    assert old_id not in [tx["id"] for tx in live.transactions()]

    # Delete asks first; "Keep" keeps it.
    row = page.locator("#transactions tbody tr", has_text="Float to cash")
    row.get_by_role("button", name="Delete").click()
    row.get_by_role("button", name="Keep").click()
    expect(row.get_by_role("button", name="Delete")).to_be_visible()
    assert len(live.transactions()) == 3
    row.get_by_role("button", name="Delete").click()
    row.get_by_role("button", name="Yes, delete").click()
    expect_text(page, "#tx-message", r"^Deleted “Float to cash”\.$")
    assert sorted(stored()) == ["Dues from Ann", "Stamps and envelopes"]
    expect(descriptions).to_have_text(["Stamps and envelopes", "Dues from Ann"])

    # Reports as given: a period with only spending shows a negative net, unflipped.
    page.goto(live.web + "/reports")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#is-from", "2026-03-05")
    page.fill("#is-to", "2026-03-05")
    page.click("#is-form button[type=submit]")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+-0\.70$")
    assert page.locator("#is-chart rect.bar.negative").count() == 1
    page.fill("#is-from", "2026-01-01")
    page.fill("#is-to", "2026-12-31")
    page.click("#is-form button[type=submit]")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+1,233\.80$")
    page.fill("#bs-as-of", "2026-12-31")
    page.click("#bs-form button[type=submit]")
    expect_text(page, "#balance-sheet-table tr.grand", r"Net worth\s+1,233\.80$")
    assert page.locator("#bs-chart rect.bar").count() == 3
    person.shot("books")

    # The club wording (switched on the books page): other words, the very same figures.
    figures = page.locator("#income-statement .num, #balance-sheet .num")
    before = figures.all_inner_texts()
    assert "1,233.80" in before and "1,234.50" in before
    page.goto(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    page.select_option("#book-style", "club")
    expect_text(page, "#title", r"^Club accounts$")
    assert page.locator("label:has(input[value=out]) span").inner_text() == "Payment"
    page.goto(live.web + "/reports")
    page.wait_for_selector("body[data-ready=true]")
    for selector, value in [("#is-from", "2026-01-01"), ("#is-to", "2026-12-31")]:
        page.fill(selector, value)
    page.click("#is-form button[type=submit]")
    page.fill("#bs-as-of", "2026-12-31")
    page.click("#bs-form button[type=submit]")
    expect_text(page, "#income-statement-table tr.grand", r"^Surplus \(deficit\)\s+1,233\.80$")
    expect_text(page, "#balance-sheet-table tr.grand", r"^Total funds\s+1,233\.80$")
    assert page.locator("#reports-section h2").first.inner_text() == "Income and expenditure"
    expect(figures).to_have_text(before)
    assert live.call("GET", "/settings")[0] == 401  # (the API needs a credential)
    with live.app.app_context():
        from app.services.ledger import settings

        assert settings.get_settings() == {"book_style": "club"}
    person.shot("books-club")
    page.goto(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#title").inner_text() == "Club accounts"  # stored, not just shown


def test_a_metadata_document_client_is_shown_by_its_host(
    live, person, document_server, monkeypatch
):
    """A client whose id is the URL of its metadata document (served by a local HTTPS
    server the API trusts): the consent and device pages put the document's host first
    ("<host> says it is <name>") and warn as for a first-use dynamic client."""
    monkeypatch.setenv("SSL_CERT_FILE", str(document_server.ca_file))
    live.app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = True
    live.add_user()
    page = person.page
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    client_id = document_server.document(
        "/apps/helper.json", client_name="Your Bank <i>Official</i>", redirect_uris=[redirect_uri]
    )
    host = f"127.0.0.1:{document_server.port}"
    _, challenge = _pkce()
    query = urllib.parse.urlencode(
        {
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": live.api,
            "state": "s",
        }
    )
    page.goto(live.api + "/oauth/authorize?" + query)
    page.wait_for_url(re.compile(re.escape(live.web + "/signin?next=%2Fauthorize%3F")))
    person.first_sign_in()
    page.wait_for_url(live.web + "/authorize?" + query)
    page.wait_for_selector("#consent:not([hidden])")
    assert page.locator("#client-origin").is_visible()
    assert page.locator("#client-origin").inner_text() == (
        f"{host} says it is Your Bank <i>Official</i>."
    )
    assert page.locator("#client-host").inner_text() == host
    assert page.locator("#client-id").inner_text() == client_id
    warning = page.locator("#first-use-warning")
    assert warning.is_visible()
    assert f"described by a document on {host}" in warning.inner_text()
    assert "never been approved" in warning.inner_text()
    person.shot("consent-metadata-document")

    # The device page, for the same client.
    status, grant = live.call(
        "POST", "/oauth/device_authorization", form={"client_id": client_id, "resource": live.api}
    )
    assert status == 200, grant
    page.goto(grant["verification_uri_complete"])
    page.wait_for_selector("#device-request:not([hidden])")
    assert page.locator("#device-client-origin").inner_text() == (
        f"{host} says it is Your Bank <i>Official</i>."
    )
    device_warning = page.locator("#device-first-use-warning")
    assert device_warning.is_visible()
    assert f"described by a document on {host}" in device_warning.inner_text()
    person.shot("device-metadata-document")
    assert document_server.requests == ["/apps/helper.json"]  # one fetch, cached since

    # A first-party client on the same page shows no host line and no warning.
    status, other = live.call(
        "POST", "/oauth/device_authorization", form={"client_id": "svc-cli", "resource": live.api}
    )
    assert status == 200, other
    page.fill("#user-code", other["user_code"])
    page.click("#lookup")
    expect_text(page, "#device-code-shown", "^" + other["user_code"] + "$")
    assert page.locator("#device-client-origin").is_hidden()
    assert page.locator("#device-first-use-warning").is_hidden()


def test_a_person_locks_the_books_and_a_post_inside_the_lock_is_refused(live, person):
    live.add_user()
    page = person.page
    page.goto(live.web + "/")
    person.first_sign_in()
    page.wait_for_url(live.web + "/")
    page.goto(live.web + "/accounts")
    page.wait_for_selector("body[data-ready=true]")
    for name, kind in [("Bank", "asset"), ("Rent", "expense")]:
        page.fill("#account-name", name)
        page.select_option("#account-kind", kind)
        page.click("#account-submit")
        expect_text(page, "#new-account-message", rf"^Created {name}\.$")
    page.goto(live.web + "/year-end")  # closing the year is where the lock lives
    page.wait_for_selector("body[data-ready=true]")

    expect_text(page, "#lock-status", r"^The books are not locked")
    page.fill("#lock-date", "2026-03-31")
    page.click("#lock-submit")
    expect_text(page, "#lock-status", r"^The books are locked through 2026-03-31\.$")
    with live.app.app_context():
        from app.services.ledger import lock

        assert lock.get_lock() == {"locked_through": "2026-03-31"}
        db.session.rollback()
    page.goto(live.web + "/")
    page.wait_for_selector("body[data-ready=true]")
    expect_text(page, "#lock-line", r"locked through 2026-03-31")

    def record(on, description):
        page.check("input[name=mode][value=out]")
        page.fill("#occurred-on", on)
        page.fill("#description", description)
        page.fill("#amount", "12.00")
        page.select_option("#credit", label="Bank")
        page.select_option("#debit", label="Rent")
        page.click("#record-submit")

    record("2026-03-15", "March rent, late")
    expect_text(page, "#record-message", r"^Not recorded: The books are locked through 2026-03-31")
    assert live.transactions() == []
    record("2026-04-01", "April rent")
    expect_text(page, "#record-message", r"^Recorded: April rent, 12\.00\.$")
    assert [tx["description"] for tx in live.transactions()] == ["April rent"]

    page.goto(live.web + "/year-end")
    page.wait_for_selector("body[data-ready=true]")
    page.click("#lock-clear")
    expect_text(page, "#lock-status", r"^The books are not locked")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator("#lock-section")).to_be_visible()
    person.shot("books-lock")
