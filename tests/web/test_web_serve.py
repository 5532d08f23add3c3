"""`ledger-service serve` runs the API and the web app together; --no-web and
WEB_BIND_ADDR=off run the API alone; SIGTERM and Ctrl-C stop both.

These run on a SQLite file only: what is checked here is the serving (ports,
processes, signals), which does not depend on the data store; `test_serve.py`
already starts `serve` on both dialects.
"""

import os
import signal
import socket
import urllib.error
import urllib.request

import pytest

from bench import serve_signals
from harness.serve_trials import Trials
from harness.server import Service
from tests.support import free_port

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def _start(tmp_path, api_port, *args, sigint_ignored=None, **env_extra):
    """serve on api_port with only the settings given (none from this process's
    environment, the web app on unless told); running, not yet answering."""
    env = {"WEB_BIND_ADDR": None, "API_ORIGIN": None, "WEB_ORIGIN": None, **env_extra}
    return Service(
        f"sqlite:///{tmp_path}/serve.db", tmp_path, port=api_port, args=args, **env
    ).launch(sigint_ignored=sigint_ignored)


def _get(url, cookie=None):
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.headers, response.read().decode()


def _listening(port) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(service, sig=signal.SIGTERM):
    """(exit status, everything it printed); fails if sig did not stop it in 15 s."""
    code = service.stop(sig, timeout=15, must_stop=True)
    return code, service.log_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_api_and_web_and_one_signal_stops_both(tmp_path, sig):
    api_port, web_port = free_port(), free_port()
    api_origin = f"http://localhost:{api_port}"
    service = _start(
        tmp_path,
        api_port,
        WEB_BIND_ADDR=f"127.0.0.1:{web_port}",
        API_ORIGIN=api_origin,
        WEB_ORIGIN=f"http://localhost:{web_port}",
    )
    secret = "svc_session=do-not-log-" + os.urandom(8).hex()
    try:
        assert service.wait_for(f"http://127.0.0.1:{api_port}/health")[2] == "ok"
        status, headers, html = service.wait_for(f"http://127.0.0.1:{web_port}/")
        assert status == 200 and headers.get_content_type() == "text/html"
        assert "/static/js/pages/books.js" in html
        _, headers, config = _get(f"http://127.0.0.1:{web_port}/config.js", cookie=secret)
        assert f'API_ORIGIN = "{api_origin}"' in config
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get(f"http://127.0.0.1:{web_port}/nowhere", cookie=secret)
        missing.value.close()
        assert missing.value.code == 404
    finally:
        code, output = _stop(service, sig)
    assert code == 0, output
    assert not _listening(api_port) and not _listening(web_port)
    assert f"127.0.0.1:{web_port}" in output
    assert secret.split("=")[1] not in output  # the web server never logs request cookies


def test_ctrl_c_stops_serve_started_as_a_background_job(tmp_path):
    """A shell starts a background job with SIGINT ignored, and Python then never
    raises KeyboardInterrupt: serve stopped only on SIGTERM (issue 28, item 10; the
    README's test command started that way failed "serve did not stop on SIGINT")."""
    api_port, web_port = free_port(), free_port()
    service = _start(
        tmp_path,
        api_port,
        sigint_ignored=True,
        WEB_BIND_ADDR=f"127.0.0.1:{web_port}",
        WEB_ORIGIN=f"http://localhost:{web_port}",
    )
    try:
        service.wait_for(f"http://127.0.0.1:{api_port}/health")
        service.wait_for(f"http://127.0.0.1:{web_port}/signin")
    finally:
        code, output = _stop(service, signal.SIGINT)
    assert code == 0, output
    assert "stopped (SIGINT)" in output
    assert not _listening(api_port) and not _listening(web_port)


def test_a_signal_at_any_moment_of_start_up_stops_serve(tmp_path):
    """SIGINT and SIGTERM sent at moments spread from spawning to serving (during
    the app's loading, the migrations, the binding, the threads' start): serve always
    ends within 15 s, lets go of its ports and never leaves the schema half-migrated.
    `python -m bench.serve_signals --trials 100` is the long run (docs/reliability.md)."""
    report = serve_signals.run(trials=6, folder=tmp_path)
    assert report["failures"] == 0, report["failed"]
    assert report["trials"] == 6


@pytest.mark.parametrize(
    "output, outcome",
    [
        ("Aborted!\n", "ended by the signal's default, before serve began"),
        (
            "Traceback (most recent call last):\n  ...\nImportError: cannot import name 'x'\n",
            "failed",
        ),
        ("", "failed"),  # exit 1 with nothing printed: not click's ending of a SIGINT
    ],
)
def test_exit_1_before_serve_began_is_the_signal_only_without_a_traceback(
    tmp_path, output, outcome
):
    """How the long run judges a SIGINT trial that ended with exit 1 before serve's
    first line: click's "Aborted!" is the signal's ending; a traceback is a crash."""
    trials = Trials(tmp_path)
    judged, problem = trials._judge(
        signal.SIGINT, 1, output, "", free_port(), free_port(), tmp_path / "untouched.db"
    )
    assert judged == outcome, problem


@pytest.mark.parametrize("how", [("--no-web",), "off"])
def test_api_alone(tmp_path, how):
    api_port, web_port = free_port(), free_port()
    args = how if isinstance(how, tuple) else ()
    extra = (
        {"WEB_BIND_ADDR": how}
        if isinstance(how, str)
        else {"WEB_BIND_ADDR": f"127.0.0.1:{web_port}"}
    )
    service = _start(tmp_path, api_port, *args, WEB_ORIGIN=f"http://localhost:{web_port}", **extra)
    try:
        assert service.wait_for(f"http://127.0.0.1:{api_port}/health")[2] == "ok"
        assert not _listening(web_port)
    finally:
        code, output = _stop(service)
    assert code == 0, output
    assert "web app not served here" in output


def test_web_defaults_to_the_port_of_web_origin(tmp_path):
    api_port, web_port = free_port(), free_port()
    service = _start(tmp_path, api_port, WEB_ORIGIN=f"http://localhost:{web_port}")
    try:
        status, _, html = service.wait_for(f"http://127.0.0.1:{web_port}/signin")
        assert status == 200 and 'id="login"' in html
    finally:
        code, output = _stop(service)
    assert code == 0, output
    assert f"0.0.0.0:{web_port}" in output


def test_a_taken_web_port_is_a_clear_failure(tmp_path):
    api_port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        web_port = taken.getsockname()[1]
        service = _start(tmp_path, api_port, WEB_BIND_ADDR=f"127.0.0.1:{web_port}")
        service.proc.wait(timeout=60)
        code, output = _stop(service)
    assert code == 1
    assert f"error: cannot listen on 127.0.0.1:{web_port}" in output
    assert "Traceback" not in output
    assert not _listening(api_port)  # nothing half-started is left behind
