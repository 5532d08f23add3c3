"""The nginx example in docs/deploy.md, run for real in front of the service on loopback."""

import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from harness.server import Service, http
from tests.support import free_port, missing_tool
from tests.testkit import BOUNDARY, multipart

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

DEPLOY_DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def example_config() -> str:
    text = DEPLOY_DOC.read_text()
    block = re.search(r"<!-- nginx-example:start -->\s*```nginx\n(.*?)```", text, re.S)
    assert block, "docs/deploy.md lost its nginx example"
    return block.group(1)


@pytest.fixture
def nginx_binary():
    found = shutil.which("nginx") or (Path("/usr/sbin/nginx").exists() and "/usr/sbin/nginx")
    if not found:
        missing_tool("nginx is not installed (Debian package nginx; .ci/run installs it)")
    return found


def test_documented_nginx_config_fronts_the_service(nginx_binary, scratch_database_url, tmp_path):
    proxy_port = free_port()
    service = Service(
        scratch_database_url,
        tmp_path,
        TRUSTED_PROXIES="1",
        API_ORIGIN=f"http://localhost:{proxy_port}",
    )
    token = service.user_with_token()
    service.start()
    work = Path(tempfile.mkdtemp(prefix="ledger-nginx-"))
    work.chmod(0o777)
    config = (
        example_config()
        .replace("/run/nginx-ledger.pid", str(work / "nginx.pid"))
        .replace("/var/log/nginx/ledger-error.log", str(work / "error.log"))
        .replace("/var/lib/nginx/", str(work) + "/")
        .replace("127.0.0.1:38081", f"127.0.0.1:{service.port}")
        .replace("listen 8443;", f"listen 127.0.0.1:{proxy_port};")
    )
    (work / "nginx.conf").write_text(config)
    proc = subprocess.Popen(
        [nginx_binary, "-c", str(work / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{proxy_port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if http("GET", base + "/health", timeout=2) == (200, "ok"):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (
                proc.stderr.read() if proc.poll() else "nginx not up"
            )
            time.sleep(0.2)

        status, body = http("GET", base + "/accounts")
        assert (status, body) == (401, {"error": "authentication required"})
        status, body = http(
            "POST", base + "/accounts", token=token, body={"name": "Bank", "kind": "asset"}
        )
        assert (status, body["name"]) == (201, "Bank")
        status, listed = http("GET", base + "/accounts", token=token)
        assert (status, [a["name"] for a in listed]) == (200, ["Bank"])
        # Bodies over the service's limit but under the proxy's reach the service: ledger shape.
        status, body = http(
            "POST",
            base + "/accounts",
            token=token,
            body={"name": "x" * (1024 * 1024 + 100), "kind": "asset"},
        )
        assert (status, body) == (413, {"error": "request entity too large"})
        # A receipt of 5 MiB passes the upload route's own proxy limit (docs/deploy.md).
        expense = http(
            "POST", base + "/accounts", token=token, body={"name": "Food", "kind": "expense"}
        )[1]["id"]
        status, made = http(
            "POST",
            base + "/transactions",
            token=token,
            body={
                "occurred_on": "2026-03-01",
                "description": "scan",
                "entries": [
                    {"account_id": expense, "amount_cents": 100},
                    {"account_id": listed[0]["id"], "amount_cents": -100},
                ],
            },
        )
        assert status == 201
        scan = b"%PDF-1.4\n" + b"\x00" * (5 * 1024 * 1024)
        upload = urllib.request.Request(
            f"{base}/transactions/{made['id']}/documents",
            method="POST",
            data=multipart(scan, "scan.pdf", "application/pdf"),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
            },
        )
        with urllib.request.urlopen(upload, timeout=60) as response:
            assert response.status == 201
            assert json.loads(response.read())["size"] == len(scan)
    finally:
        proc.terminate()
        proc.communicate(timeout=15)
        service.stop()
        shutil.rmtree(work, ignore_errors=True)
