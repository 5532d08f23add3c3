def test_health(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.data == b"ok"


def test_full_session_cookie_reaches_full_routes(session_client):
    client = session_client(mfa_complete=True)
    assert client.get("/accounts").status_code == 200


def test_half_session_is_refused_on_full_routes(session_client):
    client = session_client(mfa_complete=False)
    response = client.get("/accounts")
    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]
