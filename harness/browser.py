"""Chromium through Playwright with a virtual passkey: what the browser tests
(tests/web/web_support.py, tests/web/conftest.py) and bench/pages.py share.

- `CHROMIUM`, `CHROMIUM_ARGS`: Debian's Chromium and its flags (no browser download).
- `SIZES`: the two screens every page is checked and timed at.
- `add_authenticator(cdp)`: a virtual passkey authenticator on a page's CDP session,
  so `navigator.credentials.create()` and `.get()` succeed without any UI.
- `first_sign_in(page, email, password, passkey_name)`: on the sign-in page, the
  password step, then the first passkey enrolled (which completes the sign-in).
"""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("LEDGER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# The two screens every page is checked at: a desktop window and a 390x844 phone
# (the `size` fixture, tests/web/conftest.py, runs a test at each; bench/pages.py
# times every page at each).
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def add_authenticator(cdp) -> str:
    """A new virtual authenticator (CTAP2, internal, resident keys, user verified,
    presence simulated) on the CDP session; its id. WebAuthn.enable must be sent first."""
    return cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )["authenticatorId"]


def password_step(page, email: str, password: str) -> None:
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("#login-submit")


def first_sign_in(page, email: str, password: str, passkey_name: str = "Laptop") -> None:
    """On the sign-in page: the password, then the first passkey enrolled."""
    # Ready: signin.js has taken over the form (its button is disabled until then).
    page.wait_for_selector("body[data-ready=true] #login")
    password_step(page, email, password)
    # The password step runs argon2 and the login throttle: on a loaded CI machine
    # it has taken more than Playwright's default 10 s (seen once in a clean-clone run).
    page.wait_for_selector("#enrol-step:not([hidden])", timeout=30_000)
    page.fill("#passkey-name", passkey_name)
    page.click("#enrol-passkey")
