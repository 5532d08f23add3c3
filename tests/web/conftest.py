"""Fixtures of the browser tests (tests/web/web_support.py holds what they are built
from): `browser` (Debian's Chromium through Playwright, one per test module), `live`
(the API and the web app served on free `localhost` ports), `person` (a person with a
virtual passkey at the default size), and for the tests that check pages at each of
SIZES: `size` and `treasurer`."""

import pytest

from app import create_app
from app.extensions import db
from app.web import create_web_app
from harness.inprocess import InProcessServer
from tests.support import free_port
from tests.testkit import reset_database
from tests.web.web_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SIZES,
    Live,
    Person,
    missing_browser_tools,
    person_at,
    require_browser_tools,
)


@pytest.fixture(scope="module")
def browser():
    missing = missing_browser_tools()
    if missing:
        if require_browser_tools():
            pytest.fail(missing + " (CI/LEDGER_REQUIRE_BROWSER set: browser tests are required)")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def live(database_url):
    api_port, web_port = free_port(), free_port()
    api_url, web_url = f"http://localhost:{api_port}", f"http://localhost:{web_port}"
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "API_ORIGIN": api_url,
            "WEB_ORIGIN": web_url,
            "PASSWORD_HASH_FAST": True,
            # The real clock: device polling intervals and the throttle are real waits here.
        }
    )
    try:
        with app.app_context():
            reset_database()
        # As `serve` runs them: both apps in one loop thread (harness/inprocess.py).
        with InProcessServer(
            app, create_web_app(api_url, web_url), ports=[api_port, web_port], host="localhost"
        ):
            yield Live(app, api_url, web_url)
    finally:
        # Even when a server could not start: an open connection left to the garbage
        # collector warns inside whichever test happens to be running then.
        with app.app_context():
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def person(browser, live):
    someone = Person(browser, live)
    yield someone
    someone.close()


@pytest.fixture(params=sorted(SIZES))
def size(request):
    """ "desktop" or "phone": the test runs once at each of SIZES."""
    return request.param


@pytest.fixture
def treasurer(browser, live, size):
    """A person with a passkey, in a browser at `size`; page errors fail the test."""
    someone = person_at(browser, live, SIZES[size])
    yield someone
    someone.close()
