"""`ledger-service serve` runs the API and the web app together; --no-web and
WEB_BIND_ADDR=off run the API alone; SIGTERM and Ctrl-C stop both.

These run on a SQLite file only: what is checked here is the serving (ports,
processes, signals), which does not depend on the data store; `test_serve.py`
already starts `serve` on both dialects.
"""

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.support import console_script, free_port


def _start(tmp_path, *args, **env_extra):
    env = dict(os.environ)
    for key in ("WEB_BIND_ADDR", "BIND_ADDR", "API_ORIGIN", "WEB_ORIGIN", "DATABASE_URL"):
        env.pop(key, None)
    env.update({"DATABASE_URL": f"sqlite:///{tmp_path}/serve.db",
                "LEDGER_INSTANCE_PATH": str(tmp_path)})
    env.update(env_extra)
    return subprocess.Popen(console_script() + ["serve", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _get(url, cookie=None):
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.headers, response.read().decode()


def _wait(url, proc, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited early: {proc.stdout.read()}")
        try:
            return _get(url)
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer in time")


def _listening(port) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError("serve did not stop on " + sig.name) from None
    return proc.returncode, out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_api_and_web_and_one_signal_stops_both(tmp_path, sig):
    api_port, web_port = free_port(), free_port()
    api_origin = f"http://localhost:{api_port}"
    proc = _start(tmp_path, BIND_ADDR=f"127.0.0.1:{api_port}",
                  WEB_BIND_ADDR=f"127.0.0.1:{web_port}", API_ORIGIN=api_origin,
                  WEB_ORIGIN=f"http://localhost:{web_port}")
    secret = "svc_session=do-not-log-" + os.urandom(8).hex()
    try:
        assert _wait(f"http://127.0.0.1:{api_port}/health", proc)[2] == "ok"
        status, headers, html = _wait(f"http://127.0.0.1:{web_port}/", proc)
        assert status == 200 and headers.get_content_type() == "text/html"
        assert "/static/js/pages/books.js" in html
        _, headers, config = _get(f"http://127.0.0.1:{web_port}/config.js", cookie=secret)
        assert f'API_ORIGIN = "{api_origin}"' in config
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get(f"http://127.0.0.1:{web_port}/nowhere", cookie=secret)
        missing.value.close()
        assert missing.value.code == 404
    finally:
        code, output = _stop(proc, sig)
    assert code == 0, output
    assert not _listening(api_port) and not _listening(web_port)
    assert f"127.0.0.1:{web_port}" in output
    assert secret.split("=")[1] not in output  # the web server never logs request cookies


@pytest.mark.parametrize("how", [("--no-web",), "off"])
def test_api_alone(tmp_path, how):
    api_port, web_port = free_port(), free_port()
    args = how if isinstance(how, tuple) else ()
    extra = {"WEB_BIND_ADDR": how} if isinstance(how, str) else {
        "WEB_BIND_ADDR": f"127.0.0.1:{web_port}"}
    proc = _start(tmp_path, *args, BIND_ADDR=f"127.0.0.1:{api_port}",
                  WEB_ORIGIN=f"http://localhost:{web_port}", **extra)
    try:
        assert _wait(f"http://127.0.0.1:{api_port}/health", proc)[2] == "ok"
        assert not _listening(web_port)
    finally:
        code, output = _stop(proc)
    assert code == 0, output
    assert "web app not served here" in output


def test_web_defaults_to_the_port_of_web_origin(tmp_path):
    api_port, web_port = free_port(), free_port()
    proc = _start(tmp_path, BIND_ADDR=f"127.0.0.1:{api_port}",
                  WEB_ORIGIN=f"http://localhost:{web_port}")
    try:
        status, _, html = _wait(f"http://127.0.0.1:{web_port}/signin", proc)
        assert status == 200 and 'id="login"' in html
    finally:
        code, output = _stop(proc)
    assert code == 0, output
    assert f"0.0.0.0:{web_port}" in output


def test_a_taken_web_port_is_a_clear_failure(tmp_path):
    api_port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        web_port = taken.getsockname()[1]
        proc = _start(tmp_path, BIND_ADDR=f"127.0.0.1:{api_port}",
                      WEB_BIND_ADDR=f"127.0.0.1:{web_port}")
        output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{web_port}" in output
    assert "Traceback" not in output
    assert not _listening(api_port)  # nothing half-started is left behind
