"""Helpers shared by the web app tests (JavaScript units and browser scenarios): whether
the browser tools are required, Chromium's path and flags, the two SIZES, the live pair
of servers (`Live`), a person with a virtual passkey (`Person`, `person_at`) and the
waiting assertions (`expect`, `expect_text`). The fixtures over them (`browser`, `live`,
`person`, `size`, `treasurer`) are in tests/web/conftest.py; the page checks the sized
views share (`sign_in`, `go`, `fits`, ...) in tests/web/pages.py."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from app import store
from harness import browser as browser_kit
from harness.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: F401 - re-exported for conftest
from tests.support import PASSWORD


def require_browser_tools() -> bool:
    """True where node and Chromium must be present (CI installs them): skip → fail.

    LEDGER_REQUIRE_BROWSER wins when set (0/false/no turns the requirement off);
    otherwise CI or LEDGER_REQUIRE_POSTGRES, the flags `.ci/run` sets, imply it.
    """
    explicit = os.environ.get("LEDGER_REQUIRE_BROWSER")
    if explicit is not None and explicit.strip() != "":
        return explicit.strip().lower() not in ("0", "false", "no")
    flag = os.environ.get("CI") or os.environ.get("LEDGER_REQUIRE_POSTGRES") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


# The two screens every page is checked at (harness/browser.py, shared with
# bench/pages.py): a desktop window and a 390x844 phone (the `size` fixture,
# tests/web/conftest.py, runs a test at each).
SIZES = dict(browser_kit.SIZES)


def person_at(browser, live, viewport):
    """A person with a virtual passkey in a fresh browser context of this viewport
    (downloads accepted; page errors collected in `errors`): every browser test that
    checks a page at a size signs in through one of these (the `treasurer` fixture)."""
    return Person(browser, live, viewport)


SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def missing_browser_tools() -> str | None:
    """Why the browser tests cannot run here (None: Chromium and Playwright are present)."""
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    return None


class Live:
    """The running pair of servers plus plain-HTTP helpers playing the other clients."""

    def __init__(self, app, api_url, web_url):
        self.app, self.api, self.web = app, api_url, web_url

    def add_user(self, email="alice@example.com", password=PASSWORD):
        from app.services.identity import users

        with self.app.app_context():
            users.add_user(email, password)
            store.commit()

    def call(self, method, path, *, json_body=None, form=None, token=None):
        """(status, parsed body) of one API call made outside the browser."""
        headers, data = {}, None
        if json_body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(json_body).encode()
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            data = urllib.parse.urlencode(form).encode()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.api + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw, status = response.read(), response.status
        except urllib.error.HTTPError as err:
            with err:
                raw, status = err.read(), err.code
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode()

    def transactions(self):
        from app.services.ledger import listing

        with self.app.app_context():
            return listing.list_transactions(None, None)


class Person:
    """One browser profile with a virtual passkey authenticator (CDP WebAuthn domain)."""

    def __init__(self, browser, live, viewport=None):
        self.live = live
        # Downloads accepted (Playwright's default, said aloud for the pages that export).
        self.context = browser.new_context(
            viewport=viewport or {"width": 1200, "height": 900}, accept_downloads=True
        )
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.errors = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("WebAuthn.enable", {"enableUI": False})
        self.authenticator = self._add_authenticator()

    def _add_authenticator(self):
        return browser_kit.add_authenticator(self.cdp)

    def new_device(self):
        """Swap the authenticator for a fresh one (another device, no credentials yet)."""
        self.cdp.send(
            "WebAuthn.removeVirtualAuthenticator", {"authenticatorId": self.authenticator}
        )
        self.authenticator = self._add_authenticator()

    def credentials(self):
        return self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})[
            "credentials"
        ]

    def user_verified(self, flag: bool):
        self.cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": self.authenticator, "isUserVerified": flag},
        )

    def password_step(self, email="alice@example.com", password=PASSWORD):
        browser_kit.password_step(self.page, email, password)

    def first_sign_in(self, email="alice@example.com", passkey_name="Laptop"):
        """On the sign-in page: password, then enrol the first passkey."""
        browser_kit.first_sign_in(self.page, email, PASSWORD, passkey_name)

    def books(self):
        self.page.goto(self.live.web + "/")
        self.page.wait_for_selector("body[data-ready=true]")

    def message(self, selector="#message"):
        locator = self.page.locator(selector)
        locator.wait_for(state="visible")
        return locator.inner_text()

    def shot(self, name):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    def close(self):
        self.context.close()
        assert self.errors == [], f"uncaught errors in the page: {self.errors}"


def expect(locator):
    """Playwright's retrying assertions (imported late: Playwright may be absent)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def expect_text(page, selector, pattern, timeout=10_000):
    """Wait until the element's text matches (the pages update asynchronously)."""
    deadline = time.monotonic() + timeout / 1000
    text = ""
    while time.monotonic() < deadline:
        locator = page.locator(selector)
        if locator.count() and locator.first.is_visible():
            text = locator.first.inner_text()
            if re.search(pattern, text):
                return text
        page.wait_for_timeout(50)
    raise AssertionError(f"{selector} never matched {pattern!r}; last text: {text!r}")
