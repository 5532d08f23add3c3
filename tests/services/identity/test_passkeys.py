"""GET /auth/passkeys and DELETE /auth/passkeys/{id} (409 for the last one)."""

from sqlalchemy import select

from app.extensions import db
from app.models import Passkey


def test_list_passkeys(signin, client, clock, mint):
    signin.full()
    clock.advance(60)
    signin.register(name="phone")
    listed = client.get("/auth/passkeys").get_json()
    assert listed == [
        {
            "id": listed[0]["id"],
            "name": "Passkey 1",
            "created_at": "2026-11-21T12:00:00Z",
            "last_used_at": None,
        },
        {
            "id": listed[1]["id"],
            "name": "phone",
            "created_at": "2026-11-21T12:01:00Z",
            "last_used_at": None,
        },
    ]
    assert all(isinstance(p["id"], str) for p in listed)
    # bearer tokens may read the list
    bearer = client.get("/auth/passkeys", headers={"Authorization": f"Bearer {mint()}"})
    assert bearer.status_code == 200 and bearer.get_json() == listed


def test_delete_passkey_and_the_last_one_is_409(app, signin, client):
    signin.full()
    signin.register(name="phone")
    first, second = client.get("/auth/passkeys").get_json()
    assert client.delete(f"/auth/passkeys/{first['id']}").status_code == 204
    assert client.get("/auth/passkeys").get_json() == [second]
    last = client.delete(f"/auth/passkeys/{second['id']}")
    assert last.status_code == 409 and set(last.get_json()) == {"error"}
    with app.app_context():
        assert db.session.execute(select(Passkey.name)).scalars().all() == ["phone"]


def test_delete_unknown_or_foreign_passkey_is_404(app, client, make_user, authenticator):
    from tests.testkit import SignIn

    make_user("bob@example.com")
    bob = SignIn(client, authenticator)
    bob.full("bob@example.com")
    bob.register()
    bobs = [p["id"] for p in client.get("/auth/passkeys").get_json()]
    client.post("/auth/logout")
    make_user()
    alice = SignIn(client, authenticator)
    alice.full()
    alice.register()
    for passkey_id in (bobs[0], "999999", "abc", "-1", "1.0", "9" * 40):
        response = client.delete(f"/auth/passkeys/{passkey_id}")
        assert response.status_code == 404, passkey_id
        assert set(response.get_json()) == {"error"}
    with app.app_context():
        assert db.session.execute(select(Passkey)).scalars().all().__len__() == 4


def test_delete_passkey_refuses_bearer_tokens(app, signin, client, mint):
    signin.full()
    signin.register()
    passkey_id = client.get("/auth/passkeys").get_json()[0]["id"]
    token = mint()
    client.post("/auth/logout")
    response = client.delete(
        f"/auth/passkeys/{passkey_id}", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 403 and set(response.get_json()) == {"error"}
    with app.app_context():
        assert len(db.session.execute(select(Passkey)).scalars().all()) == 2


def test_half_session_cannot_list_or_delete(signin, client):
    signin.full()
    passkey_id = client.get("/auth/passkeys").get_json()[0]["id"]
    client.post("/auth/logout")
    signin.password()
    assert client.get("/auth/passkeys").status_code == 401
    assert client.delete(f"/auth/passkeys/{passkey_id}").status_code == 401
