"""Fixtures of the browser tests that check pages at a size (tests/web/web_support.py
holds SIZES and person_at). `browser` and `live` are the browser tests' own
(tests/web/test_web_browser.py), which each such module takes in by name."""

import pytest

from tests.web.web_support import SIZES, person_at


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
