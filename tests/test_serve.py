"""The real command: `ledger-service serve` migrates, then answers over HTTP."""

import os
import subprocess
import time
import urllib.request

from sqlalchemy import create_engine, text

from tests.conftest import console_script, free_port


def _env(database_url, tmp_path, **extra):
    env = dict(os.environ)
    env.update({"DATABASE_URL": database_url, "LEDGER_INSTANCE_PATH": str(tmp_path)}, **extra)
    return env


def _wait_for_health(url, proc, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited early: {proc.stdout.read()}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                return response.status, response.read()
        except OSError:
            time.sleep(0.2)
    raise AssertionError("serve did not answer in time")


def test_serve_migrates_and_answers_health(scratch_database_url, tmp_path):
    port = free_port()
    with subprocess.Popen(
        console_script() + ["serve"],
        env=_env(scratch_database_url, tmp_path, BIND_ADDR=f"127.0.0.1:{port}",
                 API_ORIGIN=f"http://127.0.0.1:{port}"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as proc:
        _check_serving(port, proc)


def _check_serving(port, proc):
    try:
        assert _wait_for_health(f"http://127.0.0.1:{port}", proc) == (200, b"ok")
        request = urllib.request.Request(f"http://127.0.0.1:{port}/accounts")
        try:
            urllib.request.urlopen(request, timeout=5)
            raise AssertionError("an unauthenticated call succeeded")
        except urllib.error.HTTPError as err:
            assert err.code == 401
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_default_database_is_sqlite_in_the_instance_folder(tmp_path):
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env["LEDGER_INSTANCE_PATH"] = str(tmp_path)
    result = subprocess.run(console_script() + ["user", "list"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ledger.db").exists()


def test_instances_starting_at_once_migrate_safely(scratch_database_url, tmp_path):
    """Several processes bring one empty database to head at the same moment."""
    procs = [
        subprocess.Popen(console_script() + ["user", "list"], env=_env(scratch_database_url, tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
