"""Administrative effects on sign-in state: `user list`, `user passwd`, `user rm`."""

from sqlalchemy import select

from app.extensions import db
from app.models import Passkey, Session, Token, Transaction
from tests.support import PASSWORD


def test_user_list_shows_passkey_count_and_last_seen(runner, signin, make_user, clock):
    make_user("bob@example.com")
    clock.advance(60)
    signin.full()
    signin.register(name="phone")
    result = runner.invoke(args=["user", "list"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "alice@example.com\t2\t2026-11-21T12:01:00Z",
        "bob@example.com\t0\tnever",
    ]


def test_last_seen_moves_with_elevation_and_bearer_use(runner, signin, client, mint, clock):
    signin.password()
    clock.advance(30)
    signin.register()
    assert (
        "alice@example.com\t1\t2026-11-21T12:00:30Z" in runner.invoke(args=["user", "list"]).output
    )
    token = mint()
    clock.advance(90)
    client.get("/accounts", headers={"Authorization": f"Bearer {token}"})
    assert "2026-11-21T12:02:00Z" in runner.invoke(args=["user", "list"]).output


def test_user_passwd_ends_sessions_and_revokes_tokens(app, runner, signin, client, mint):
    signin.full()
    token = mint()
    result = runner.invoke(
        args=["user", "passwd", "alice@example.com", "--password", "-"],
        input="another long password\n",
    )
    assert result.exit_code == 0, result.output
    assert client.get("/accounts").status_code == 401
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    with app.app_context():
        assert db.session.execute(select(Session)).first() is None
        assert all(t.revoked_at for t in db.session.execute(select(Token)).scalars())
        assert len(db.session.execute(select(Passkey)).all()) == 1  # passkeys stay
    assert signin.password(password=PASSWORD).status_code == 401
    assert signin.password(password="another long password").status_code == 200


def test_user_passwd_unknown_email_fails_and_changes_nothing(runner, signin, client):
    signin.full()
    result = runner.invoke(
        args=["user", "passwd", "nobody@example.com", "--password", "-"],
        input="another long password\n",
    )
    assert result.exit_code != 0
    assert "nobody@example.com" in result.output
    assert client.get("/accounts").status_code == 200


def test_user_rm_cascades_sign_in_state_and_keeps_transactions(app, runner, signin, client, mint):
    signin.full()
    token = mint()
    bank = client.post("/accounts", json={"name": "Bank", "kind": "asset"}).get_json()["id"]
    food = client.post("/accounts", json={"name": "Food", "kind": "expense"}).get_json()["id"]
    posted = client.post(
        "/transactions",
        json={
            "occurred_on": "2026-11-20",
            "description": "groceries",
            "entries": [
                {"account_id": food, "amount_cents": 1250},
                {"account_id": bank, "amount_cents": -1250},
            ],
        },
    )
    assert posted.status_code == 201
    result = runner.invoke(args=["user", "rm", "alice@example.com"])
    assert result.exit_code == 0, result.output
    assert client.get("/accounts").status_code == 401
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    with app.app_context():
        assert db.session.execute(select(Session)).first() is None
        assert db.session.execute(select(Token)).first() is None
        assert db.session.execute(select(Passkey)).first() is None
        (tx,) = db.session.execute(select(Transaction)).scalars().all()
        assert tx.description == "groceries" and tx.created_by is None
    assert signin.password(password=PASSWORD).status_code == 401
    assert runner.invoke(args=["user", "rm", "alice@example.com"]).exit_code != 0
