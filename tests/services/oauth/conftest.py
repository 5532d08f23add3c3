"""Fixtures for the OAuth tests (the shared ones come from tests/conftest.py)."""

import pytest

from tests.services.oauth.flow import OAuthFlow


@pytest.fixture
def oauth(client, session_client):
    """An OAuth driver over the test client (flow.py beside this file); .human() signs alice in."""
    return OAuthFlow(client, session_client)
