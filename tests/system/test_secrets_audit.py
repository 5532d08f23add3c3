"""Secrets audit: after every flow has run, no secret handed out is stored raw.

One run signs alice in for real (password, then a passkey through the software
authenticator, then again with the enrolled passkey), mints a token, runs the code
flow with PKCE, a refresh, the device flow (one claimed, one left pending), a dynamic
registration, and a password change. Then every column of every table is dumped and
searched for each secret the run handed out: tokens, refresh tokens, codes, device
codes, session ids (half and full), and both passwords.

User codes (XXXX-XXXX) are not in the list: they are shown to people, are typed back
by them, and alone grant nothing (approving needs a full session; redeeming needs the
device code). The device code, the secret the polling machine holds, is checked.

Also: password hashes are argon2id with sensible production parameters, and secrets
are compared in constant time (or looked up by digest in the store).
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

from sqlalchemy import inspect, text

from app import create_app, store
from app.extensions import db
from app.services import crypto
from app.services.identity import passwords, users
from tests.services.oauth.flow import OAuthFlow, query_of
from tests.support import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
NEW_PASSWORD = "a new and longer passphrase 2026"


def dump_every_table(app) -> tuple[str, dict[str, list[tuple]]]:
    """All stored values of all tables as one text blob, and the rows per table."""
    rows_by_table = {}
    values = []
    with app.app_context():
        names = inspect(db.engine).get_table_names()
        with db.engine.connect() as conn:
            for name in names:
                rows = conn.execute(text(f'SELECT * FROM "{name}"')).all()
                rows_by_table[name] = rows
                for row in rows:
                    for value in row:
                        if isinstance(value, bytes | bytearray | memoryview):
                            values.append(bytes(value).decode("latin-1"))
                            values.append(bytes(value).hex())
                        elif value is not None:
                            values.append(str(value))
    return "\n".join(values), rows_by_table


def test_every_flow_leaves_no_secret_in_the_store(app, client, signin, mint):
    handed_out: dict[str, str] = {}

    # Sign-in: password (half-session), first passkey (full), sign out, password and
    # the enrolled passkey again (a second full session).
    assert signin.password().status_code == 200
    handed_out["half-session id"] = signin.cookie()
    assert signin.register(name="laptop").status_code == 200
    handed_out["full session id (after enrolment)"] = signin.cookie()
    assert client.post("/auth/logout").status_code == 204
    assert signin.password().status_code == 200
    handed_out["second half-session id"] = signin.cookie()
    assert signin.assert_passkey().status_code == 200
    handed_out["full session id (after passkey)"] = signin.cookie()

    # The code flow with PKCE, from this full session; one code left unredeemed.
    flow = OAuthFlow(client, None)
    handed_out["unredeemed authorization code"] = flow.code()
    handed_out["PKCE verifier"] = flow.verifier
    code = query_of(flow.approve(True).get_json()["redirect"])["code"]
    handed_out["redeemed authorization code"] = code
    pair = flow.exchange(code).get_json()
    handed_out["access token (code)"] = pair["access_token"]
    handed_out["refresh token (code)"] = pair["refresh_token"]
    rotated = flow.refresh(pair["refresh_token"]).get_json()
    handed_out["access token (refresh)"] = rotated["access_token"]
    handed_out["refresh token (refresh)"] = rotated["refresh_token"]

    # The device flow: one approved and claimed, one left pending.
    claimed = flow.device_start().get_json()
    approved = client.post(
        "/oauth/device/approve", json={"user_code": claimed["user_code"], "approve": True}
    )
    assert approved.status_code == 204
    device_pair = flow.poll(claimed["device_code"]).get_json()
    handed_out["claimed device code"] = claimed["device_code"]
    handed_out["access token (device)"] = device_pair["access_token"]
    handed_out["refresh token (device)"] = device_pair["refresh_token"]
    handed_out["pending device code"] = flow.device_start().get_json()["device_code"]

    # Dynamic registration (no secret is issued; the response must not carry one).
    registered = client.post("/oauth/register", json={"redirect_uris": ["https://a.example/cb"]})
    assert registered.status_code == 201
    assert not {"client_secret", "registration_access_token"} & set(registered.get_json())

    # An administratively minted token, used once (so its last-use bookkeeping ran).
    minted = mint(label="audit")
    handed_out["minted token"] = minted
    for token in (minted, rotated["access_token"], device_pair["access_token"]):
        used = client.get("/auth/me", headers={"Authorization": f"Bearer {token}"})
        assert used.status_code == 200

    # A dump while the sessions are live (the password change below deletes them).
    blob_with_sessions, _ = dump_every_table(app)
    session_digest = hashlib.sha256(handed_out["full session id (after passkey)"].encode())
    assert session_digest.hexdigest() in blob_with_sessions, "the session is not stored digested"

    # A password change from the full session (ends sessions, revokes tokens).
    changed = client.post(
        "/auth/password", json={"current_password": PASSWORD, "new_password": NEW_PASSWORD}
    )
    assert changed.status_code == 204
    handed_out["old password"] = PASSWORD
    handed_out["new password"] = NEW_PASSWORD

    assert all(handed_out.values()), handed_out
    assert len(set(handed_out.values())) == len(handed_out), "every secret is distinct"

    blob, rows = dump_every_table(app)
    blob += "\n" + blob_with_sessions
    for what, raw in handed_out.items():
        assert raw not in blob, f"the {what} is stored raw"
        if raw.startswith(crypto.TOKEN_PREFIX):  # nor its random part without the prefix
            assert raw[len(crypto.TOKEN_PREFIX) :] not in blob, f"the {what} is stored raw"

    # The scan is not blind: what is stored is the SHA-256 digest of each token and code.
    for what in (
        "access token (code)",
        "refresh token (refresh)",
        "minted token",
        "pending device code",
        "unredeemed authorization code",
    ):
        digest = hashlib.sha256(handed_out[what].encode()).hexdigest()
        assert digest in blob, f"the {what} is not stored as its digest"

    # Passwords are stored as argon2id hashes only.
    hashes = [r.password_hash for r in rows["users"]]
    assert hashes and all(h.startswith("$argon2id$") for h in hashes), hashes


ARGON2 = re.compile(r"^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$")


def test_production_password_hashes_are_argon2id_with_sensible_parameters(database_url, tmp_path):
    """Through a production app (no PASSWORD_HASH_FAST): the hash a new user gets."""
    app = create_app({"DATABASE_URL": database_url})
    assert not app.config["PASSWORD_HASH_FAST"]
    with app.app_context():
        from tests.testkit import reset_database

        reset_database()
        store.write_intent.set(True)
        users.add_user("prod@example.com", "a production passphrase")
        store.commit()
        stored = users.find_user("prod@example.com").password_hash
        assert passwords.verify("a production passphrase", stored) == (True, None)
        assert passwords.verify("a wrong passphrase", stored)[0] is False
        db.session.remove()  # (the next test's app fixture empties the tables)
        db.engine.dispose()
    match = ARGON2.match(stored)
    assert match, stored
    memory_kib, time_cost, parallelism = map(int, match.groups())
    # OWASP's floor for argon2id is 19 MiB with t=2 (or more memory with t=1);
    # RFC 9106's second recommended profile, 64 MiB, t=3, p=4, is what we expect.
    assert memory_kib >= 19 * 1024 and time_cost >= 2 and parallelism >= 1
    assert (memory_kib, time_cost, parallelism) == (65536, 3, 4)
    # Salts are random: the same password never hashes the same twice.
    with app.app_context():
        assert passwords.hash_password("same") != passwords.hash_password("same")


# ------------------------------------------------------------- constant time
SECRETISH = re.compile(
    r"token|secret|password|verifier|challenge|code|digest|cookie|session|hash|user_code", re.I
)


def _name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        inner = _name(node.value)
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        return f"{inner}[{key}]" if inner else None
    if isinstance(node, ast.Call):
        return _name(node.func)
    return None


def _is_column(node) -> bool:
    """Model.column: a SQL comparison, i.e. a lookup the store does by (digest) value."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id[:1].isupper()
    )


def plain_secret_comparisons(source: str) -> list[str]:
    """`==`/`!=` in Python between secret-looking values (not literals, not SQL columns)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            if not isinstance(op, ast.Eq | ast.NotEq):
                continue
            if isinstance(left, ast.Constant) or isinstance(right, ast.Constant):
                continue
            if _is_column(left) or _is_column(right):
                continue
            if any(n and SECRETISH.search(n) for n in (_name(left), _name(right))):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_secret_comparisons_are_constant_time_or_digest_lookups():
    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        offenders.extend(
            f"{path.relative_to(ROOT)} {hit}"
            for hit in plain_secret_comparisons(path.read_text(encoding="utf-8"))
        )
    assert not offenders, "compare secrets with crypto.same():\n" + "\n".join(offenders)


def test_the_scan_flags_what_it_must():
    assert plain_secret_comparisons("ok = row.code_challenge == pkce(verifier)")
    assert plain_secret_comparisons("if stored_token != presented: pass")
    assert not plain_secret_comparisons("q = select(Token).where(Token.id == digest(token))")
    assert not plain_secret_comparisons("ok = crypto.same(row.code_challenge, pkce(verifier))")
    assert not plain_secret_comparisons("if kind == 'access': pass")


def test_crypto_same_is_hmac_compare_digest():
    import inspect as pyinspect

    assert "hmac.compare_digest" in pyinspect.getsource(crypto.same)
    assert crypto.same("svc_abc", "svc_abc") and not crypto.same("svc_abc", "svc_abd")
