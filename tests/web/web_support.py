"""Helpers shared by the web app tests (JavaScript units and browser scenarios)."""

import os


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


CHROMIUM = os.environ.get("LEDGER_CHROMIUM", "/usr/bin/chromium")
# BROWSER-TESTING.md: Debian's Chromium driven by Playwright, no browser download.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# The two screens every page is checked at: a desktop window and a 390x844 phone
# (the `size` fixture, tests/web/conftest.py, runs a test at each).
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def person_at(browser, live, viewport):
    """A person with a virtual passkey in a fresh browser context of this viewport
    (downloads accepted; page errors collected in `errors`): every browser test that
    checks a page at a size signs in through one of these (the `treasurer` fixture)."""
    from tests.web.test_web_browser import Person  # that module imports this one

    return Person(browser, live, viewport)
