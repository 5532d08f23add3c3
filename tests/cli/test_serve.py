"""The real command: `ledger-service serve` migrates, then answers over HTTP."""

import os
import subprocess

import pytest
from sqlalchemy import create_engine, text

from harness.server import Service, free_port, http
from tests.support import console_script

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def test_serve_migrates_and_answers_health(scratch_database_url, tmp_path):
    with Service(scratch_database_url, tmp_path) as service:
        service.start()
        assert http("GET", service.origin + "/health") == (200, "ok")
        status, body = http("GET", service.origin + "/accounts")
        assert (status, body) == (401, {"error": "authentication required"})


def test_only_bind_addr_set_the_web_app_calls_the_api_on_its_port(tmp_path):
    """Issue 44: a newcomer who sets only BIND_ADDR (another port) got a web app calling
    the API at the default port. API_ORIGIN, unset, follows BIND_ADDR, and serve says so."""
    web = free_port()
    service = Service(
        f"sqlite:///{tmp_path / 'ledger.db'}",
        tmp_path / "instance",
        API_ORIGIN=None,
        WEB_BIND_ADDR=f"127.0.0.1:{web}",
        WEB_ORIGIN=f"http://localhost:{web}",
    )
    with service:
        service.start()
        status, config_js = http("GET", f"http://127.0.0.1:{web}/config.js")
        log = service.log_text()
    api = f"http://localhost:{service.port}"
    assert status == 200
    assert f'API_ORIGIN = "{api}"' in config_js
    assert f"API_ORIGIN {api})" in log
    assert (
        f"API_ORIGIN is not set: {api}, from BIND_ADDR 127.0.0.1:{service.port} "
        "(set API_ORIGIN when clients reach the API at another address)"
    ) in log


def test_default_database_is_sqlite_in_the_instance_folder(tmp_path):
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env["LEDGER_INSTANCE_PATH"] = str(tmp_path)
    result = subprocess.run(
        console_script() + ["user", "list"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ledger.db").exists()


def test_instances_starting_at_once_migrate_safely(scratch_database_url, tmp_path):
    """Several processes bring one empty database to head at the same moment."""
    env = dict(os.environ, DATABASE_URL=scratch_database_url, LEDGER_INSTANCE_PATH=str(tmp_path))
    procs = [
        subprocess.Popen(
            console_script() + ["user", "list"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = []
    for p in procs:
        _, err = p.communicate(timeout=120)
        results.append((p.returncode, err))
    assert [code for code, _ in results] == [0, 0, 0, 0], results
    engine = create_engine(scratch_database_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
            assert conn.execute(text("SELECT count(*) FROM oauth_clients")).scalar() == 2
            assert conn.execute(text("SELECT count(*) FROM settings")).scalar() == 1
    finally:
        engine.dispose()
