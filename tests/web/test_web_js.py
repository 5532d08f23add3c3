"""The web app's pure JavaScript rules (dollar text → cents, the two entries of a
recording, safe sign-in redirects, user-code normalisation), run by node's own
test runner: tests/js/*.test.mjs.

Where node is missing the test is skipped with a visible reason, except under
CI / LEDGER_REQUIRE_BROWSER, where `.ci/run` installs node and a skip would hide
a gap, so it fails instead.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.web.web_support import require_browser_tools

JS_TESTS = Path(__file__).resolve().parents[1] / "js"


def test_javascript_rules_pass_under_node():
    node = shutil.which("node")
    if node is None:
        reason = "node is not installed: the JavaScript unit tests in tests/js did not run"
        if require_browser_tools():
            pytest.fail(reason + " (CI/LEDGER_REQUIRE_BROWSER set)")
        pytest.skip(reason)
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert len(files) >= 2, files
    result = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=120)
    summary = [line for line in result.stdout.splitlines() if line.startswith("# ")]
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    # The runner really ran the cases (an empty run also exits 0).
    passed = next(int(line.split()[2]) for line in summary if line.startswith("# pass"))
    assert passed >= 60, summary


def test_the_history_pages_list_of_actions_is_the_services():
    """tests/js/history-words.test.mjs checks a phrase for every action of
    tests/js/audit-actions.json; this keeps that file equal to the service's ACTIONS
    (an action added there without words on the History page fails here)."""
    from app.services.ledger.audit.objects import ACTIONS

    listed = json.loads((JS_TESTS / "audit-actions.json").read_text())
    assert listed == list(ACTIONS), (
        "copy ACTIONS to tests/js/audit-actions.json and give each new action its words "
        "in app/web/static/js/history-words.js"
    )
