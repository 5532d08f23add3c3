"""A second real client: the MCP Inspector's CLI from the npm registry, against the service
under waitress with a minted bearer token.

The Inspector is pinned (INSPECTOR) and run on Node 22 from the npm registry's `node`
package, because Inspector 0.16 and later require Node >= 22 and npm on an older Node
silently resolves the last compatible release (0.15, which has no --header option).
The packages go to a local npm cache (NPM_CACHE); .ci/run fills it ahead of the suite, so
the test itself does not wait for the download (about 30 seconds when cold).

Skips, with the reason shown, where npx is absent (fails instead under CI, which installs
it: tests.support.missing_tool) or the packages cannot be fetched from the registry.
Once the Inspector is there, any failure against the server is a real failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.services.ledger import listing, reports
from tests.support import missing_tool

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
NODE = "node@22"
NPM_CACHE = os.environ.get("LEDGER_NPM_CACHE") or str(
    Path(__file__).resolve().parents[2] / ".npm-cache"
)
NPX = ["npx", "-y", "-p", NODE, "-p", INSPECTOR, "--"]


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "NPM_CONFIG_CACHE": NPM_CACHE, "NPM_CONFIG_UPDATE_NOTIFIER": "false"}
    return subprocess.run(
        NPX + args, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


@pytest.fixture(scope="module")
def inspector_ready():
    if shutil.which("npx") is None:
        missing_tool("npx (Node.js) is not installed: the MCP Inspector CLI test cannot run")
    try:
        probe = _run(["mcp-inspector", "--help"], timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip(f"fetching {INSPECTOR} and {NODE} from the npm registry timed out")
    if probe.returncode != 0:
        tail = (probe.stderr or probe.stdout).strip().splitlines()[-3:]
        pytest.skip(f"could not fetch {INSPECTOR} with {NODE} via npx: {' | '.join(tail)}")
    return True


def inspector(server, token: str, *args: str) -> subprocess.CompletedProcess:
    return _run(
        [
            "mcp-inspector",
            "--cli",
            server.url,
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {token}",
            *args,
        ],
        timeout=120,
    )


def test_inspector_cli_lists_the_six_tools_and_calls_them(
    inspector_ready, app, live_server, make_user, service_account, spec_tools
):
    make_user()
    checking = service_account("Checking", "asset")
    salary = service_account("Salary", "income")
    token = live_server.mint()

    listed = inspector(live_server, token, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = json.loads(listed.stdout)["tools"]
    assert {tool["name"] for tool in tools} == spec_tools and len(tools) == 6

    entries = json.dumps(
        [
            {"account_id": checking, "amount_cents": 1999},
            {"account_id": salary, "amount_cents": -1999},
        ]
    )
    recorded = inspector(
        live_server,
        token,
        "--method",
        "tools/call",
        "--tool-name",
        "record_transaction",
        "--tool-arg",
        "occurred_on=2026-01-05",
        "--tool-arg",
        "description=Paid by the inspector",
        "--tool-arg",
        f"entries={entries}",
    )
    assert recorded.returncode == 0, recorded.stderr
    result = json.loads(recorded.stdout)
    assert result["structuredContent"]["recorded"] is True
    tx_id = result["structuredContent"]["id"]

    sheet = inspector(
        live_server,
        token,
        "--method",
        "tools/call",
        "--tool-name",
        "balance_sheet",
        "--tool-arg",
        "as_of=2026-01-31",
    )
    assert sheet.returncode == 0, sheet.stderr
    sheet_result = json.loads(sheet.stdout)
    with app.app_context():
        from datetime import date

        expected = reports.balance_sheet(date(2026, 1, 31))
        [stored] = listing.list_transactions(None, None)
    assert sheet_result["structuredContent"] == expected
    assert json.loads(sheet_result["content"][0]["text"]) == expected
    assert expected["assets"] == [{"account": "Checking", "cents": 1999}]
    assert expected["retained_cents"] == 1999
    assert stored["id"] == tx_id
    assert stored["description"] == "Paid by the inspector"
    assert stored["created_by_email"] == "alice@example.com"


def test_inspector_cli_sees_the_refusals(inspector_ready, live_server, make_user):
    make_user()
    token = live_server.mint()
    backwards = inspector(
        live_server,
        token,
        "--method",
        "tools/call",
        "--tool-name",
        "income_statement",
        "--tool-arg",
        "from=2026-02-01",
        "--tool-arg",
        "to=2026-01-31",
    )
    assert backwards.returncode != 0
    assert "'to' must not be before 'from'" in backwards.stdout + backwards.stderr

    no_entry = inspector(live_server, "svc_not-a-real-token", "--method", "tools/list")
    assert no_entry.returncode != 0
    assert "list_accounts" not in no_entry.stdout
