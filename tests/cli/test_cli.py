"""Administrative commands (never HTTP): users and tokens."""

from app.extensions import db
from app.models import Session, Token, User
from app.services.identity import passwords, sessions


def invoke(runner, *args, stdin=None):
    return runner.invoke(args=list(args), input=stdin)


def test_user_add_prints_a_generated_password_once(app, runner):
    result = invoke(runner, "user", "add", "  Alice@Example.COM ")
    assert result.exit_code == 0, result.output
    password = result.stdout.strip()
    assert len(password) >= 16 and "\n" not in password
    with app.app_context():
        user = db.session.query(User).one()
        assert user.email == "alice@example.com"
        assert user.password_hash.startswith("$argon2")
        assert password not in user.password_hash
        assert passwords.verify(password, user.password_hash)[0]


def test_user_add_reads_the_password_from_stdin(app, runner):
    result = invoke(
        runner, "user", "add", "bob@example.com", "--password", "-", stdin="a long enough secret\n"
    )
    assert result.exit_code == 0, result.output
    assert "a long enough secret" not in result.stdout
    with app.app_context():
        user = db.session.query(User).one()
        assert passwords.verify("a long enough secret", user.password_hash)[0]


def test_password_on_the_command_line_is_refused(app, runner):
    result = invoke(runner, "user", "add", "bob@example.com", "--password", "hunter22hunter")
    assert result.exit_code != 0
    with app.app_context():
        assert db.session.query(User).count() == 0


def test_duplicate_email_fails_and_changes_nothing(app, runner):
    assert invoke(runner, "user", "add", "alice@example.com").exit_code == 0
    result = invoke(runner, "user", "add", "ALICE@example.com")
    assert result.exit_code != 0
    assert "already exists" in result.stderr
    assert result.stderr.count("\n") == 1
    with app.app_context():
        assert db.session.query(User).count() == 1


def test_malformed_email_fails(app, runner):
    for email in ["not-an-email", "a@b", "two@@example.com", "sp ace@example.com"]:
        result = invoke(runner, "user", "add", email)
        assert result.exit_code != 0, email
        assert "not a valid email" in result.stderr
    with app.app_context():
        assert db.session.query(User).count() == 0


def test_short_stdin_password_is_refused(app, runner):
    result = invoke(runner, "user", "add", "a@example.com", "--password", "-", stdin="short\n")
    assert result.exit_code != 0
    assert "at least 8" in result.stderr


def test_user_list_shows_passkeys_and_last_seen(app, runner, api, clock):
    invoke(runner, "user", "add", "bob@example.com")
    api.get("/accounts")  # alice uses her token: last seen is now
    result = invoke(runner, "user", "list")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "alice@example.com\t0\t2026-11-21T12:00:00Z",
        "bob@example.com\t0\tnever",
    ]


def test_mint_token_prints_only_the_token_and_it_works(app, runner, client):
    invoke(runner, "user", "add", "alice@example.com")
    result = invoke(runner, "mint-token", "alice@example.com")
    assert result.exit_code == 0
    token = result.stdout.strip()
    assert result.stdout == token + "\n" and token.startswith("svc_")
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    with app.app_context():
        row = db.session.query(Token).one()
        assert (row.kind, row.client_id, row.label, row.parent_id) == (
            "access",
            "svc-cli",
            "cli",
            None,
        )
        assert (row.expires_at - row.created_at).days == 365


def test_mint_token_label_and_days(app, runner):
    invoke(runner, "user", "add", "alice@example.com")
    assert (
        invoke(
            runner, "mint-token", "alice@example.com", "--label", "backup script", "--days", "7"
        ).exit_code
        == 0
    )
    with app.app_context():
        row = db.session.query(Token).one()
        assert row.label == "backup script" and (row.expires_at - row.created_at).days == 7
    assert invoke(runner, "mint-token", "alice@example.com", "--days", "0").exit_code != 0


def test_unknown_email_fails_clearly(app, runner):
    for args in (
        ["mint-token", "ghost@example.com"],
        ["user", "rm", "ghost@example.com"],
        ["user", "passwd", "ghost@example.com"],
    ):
        result = invoke(runner, *args)
        assert result.exit_code != 0
        assert "ghost@example.com" in result.stderr


def test_passwd_ends_sessions_and_revokes_tokens(app, runner, client):
    invoke(runner, "user", "add", "alice@example.com")
    token = invoke(runner, "mint-token", "alice@example.com").stdout.strip()
    with app.app_context():
        user_id = db.session.query(User).one().id
        sessions.create(user_id, mfa_complete=True)
        db.session.commit()
    result = invoke(
        runner,
        "user",
        "passwd",
        "alice@example.com",
        "--password",
        "-",
        stdin="brand new password\n",
    )
    assert result.exit_code == 0
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    with app.app_context():
        assert db.session.query(Session).count() == 0
        user = db.session.query(User).one()
        assert passwords.verify("brand new password", user.password_hash)[0]


def test_rm_deletes_the_user_with_sessions_and_tokens(app, runner, client):
    invoke(runner, "user", "add", "alice@example.com")
    token = invoke(runner, "mint-token", "alice@example.com").stdout.strip()
    assert invoke(runner, "user", "rm", "Alice@example.com").exit_code == 0
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    with app.app_context():
        assert db.session.query(User).count() == 0
        assert db.session.query(Token).count() == 0


def test_admin_commands_work_on_a_fresh_empty_database(tmp_path):
    from app import create_app

    app = create_app(
        {
            "DATABASE_URL": f"sqlite:///{tmp_path}/fresh.db",
            "TESTING": True,
            "PASSWORD_HASH_FAST": True,
        }
    )
    runner = app.test_cli_runner()
    result = runner.invoke(args=["user", "list"])
    assert result.exit_code == 0 and result.stdout == ""
    assert runner.invoke(args=["user", "add", "a@example.com"]).exit_code == 0
    with app.app_context():
        db.engine.dispose()
