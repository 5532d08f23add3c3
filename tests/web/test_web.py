"""The web app's server: page shells, static files with the right types, the
generated /config.js, safety headers, and where `serve` puts it (WEB_BIND_ADDR)."""

import re
from pathlib import Path
from urllib.parse import urljoin

import pytest

from app.cli.serving import web_bind_addr
from app.web import PAGES, STATIC_DIR, create_web_app

API = "http://localhost:38081"
WEB = "http://localhost:38080"


class Fetched:
    """A response read whole and closed (file responses hold an open file until closed)."""

    def __init__(self, response):
        with response:
            self.status_code = response.status_code
            self.headers = response.headers
            self.mimetype = response.mimetype
            self.text = response.get_data(as_text=True)


class Web:
    def __init__(self, app):
        self.client = app.test_client()

    def get(self, path):
        return Fetched(self.client.get(path))

    def post(self, path):
        return Fetched(self.client.post(path))


@pytest.fixture
def web():
    return Web(create_web_app(API, WEB))


@pytest.mark.parametrize("path", sorted(PAGES))
def test_every_page_is_html_with_its_module(web, path):
    response = web.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.text
    scripts = re.findall(r'<script type="module" src="([^"]+)"', html)
    assert len(scripts) == 1, scripts
    module = web.get(scripts[0])
    assert module.status_code == 200
    assert module.headers["Content-Type"] == "text/javascript; charset=utf-8"
    css = web.get(re.search(r'<link rel="stylesheet" href="([^"]+)"', html).group(1))
    assert css.status_code == 200 and css.mimetype == "text/css"


def test_pages_are_kept_out_of_frames_and_scripts_come_from_here(web):
    headers = web.get("/authorize?client_id=x").headers
    csp = headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp
    assert f"connect-src 'self' {API}" in csp  # the pages may call the API and nothing else
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"


def test_config_module_carries_the_configured_api_origin():
    client = Web(create_web_app("https://books.example.org", "https://app.example.org"))
    response = client.get("/config.js")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/javascript; charset=utf-8"
    body = response.text
    assert 'export const API_ORIGIN = "https://books.example.org";' in body
    assert 'export const WEB_ORIGIN = "https://app.example.org";' in body
    assert (
        "connect-src 'self' https://books.example.org"
        in response.headers["Content-Security-Policy"]
    )


def test_every_module_import_resolves(web):
    """Follow every import of every shipped module: a typo would break a page at load."""
    seen, queue = set(), [f"/static/js/pages/{Path(p).stem}.js" for p in PAGES.values()]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        response = web.get(path)
        assert response.status_code == 200, path
        assert response.headers["Content-Type"].startswith("text/javascript"), path
        source = response.text
        queue.extend(
            urljoin(path, target)
            for target in re.findall(
                r'^\s*(?:import|export)[^;]*?from\s+"([^"]+)"', source, re.MULTILINE | re.DOTALL
            )
        )
    assert "/config.js" in seen and "/static/js/money.js" in seen
    shipped = {
        "/static/js/" + str(p.relative_to(STATIC_DIR / "js"))
        for p in (STATIC_DIR / "js").rglob("*.js")
    }
    assert shipped <= seen, f"modules no page loads: {shipped - seen}"


def _walk(web, entry):
    """Every module entry imports, directly or not, read through the server."""
    seen, queue = set(), [entry]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        source = web.get(path).text
        queue.extend(
            urljoin(path, target)
            for target in re.findall(
                r'^\s*(?:import|export)[^;]*?from\s+"([^"]+)"', source, re.MULTILINE | re.DOTALL
            )
        )
    return seen - {entry}


@pytest.mark.parametrize("route", sorted(PAGES))
def test_each_shell_preloads_every_module_of_its_page(web, route):
    """Speed (docs/web.md): the shell names every module its page imports, directly or
    not, so the browser fetches them at once rather than one level of imports per
    round trip; all of them under this release's /v/<version>/static/ path."""
    html = web.get(route).text
    script = re.search(r'<script type="module" src="(/v/[0-9a-f]{16})(/static/[^"]+)"', html)
    assert script, html
    release, entry = script.groups()
    hrefs = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    assert len(hrefs) == len(set(hrefs))
    unversioned = {h.removeprefix(release) for h in hrefs}
    assert unversioned == _walk(web, entry)
    assert all(h.startswith(release + "/static/") or h == "/config.js" for h in hrefs)
    assert html.index("modulepreload") < html.index('<script type="module"')
    assert 'href="/static/' not in html and 'src="/static/' not in html


def test_release_paths_are_kept_by_the_browser_and_others_revalidated(web, tmp_path):
    html = web.get("/").text
    release = re.search(r'src="(/v/[0-9a-f]{16})/static/js/pages/books.js"', html).group(1)
    kept = web.get(release + "/static/js/money.js")
    assert kept.status_code == 200
    assert kept.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert kept.text == web.get("/static/js/money.js").text
    for path in ("/v/0000000000000000/static/js/money.js", "/static/js/money.js", "/"):
        assert web.get(path).headers["Cache-Control"] == "no-cache", path
    assert web.get(release + "/static/js/package.json").status_code == 404
    assert web.get(release + "/static/../__init__.py").status_code == 404
    # A release's name changes with any byte of any static file.
    from app.web import preload

    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_text("export const A = 1;\n")
    before = preload.static_version(tmp_path)
    (tmp_path / "js" / "a.js").write_text("export const A = 2;\n")
    assert preload.static_version(tmp_path) != before


def test_a_shell_is_answered_304_when_unchanged(web):
    first = web.client.get("/reports")
    again = web.client.get("/reports", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    "path",
    [
        "/static/js/package.json",  # not a served type
        "/static/../__init__.py",  # outside the static folder
        "/static/%2e%2e/__init__.py",
        "/static/js/missing.js",
        "/books.html",
        "/nowhere",
    ],
)
def test_nothing_else_is_served(web, path):
    assert web.get(path).status_code == 404


def test_pages_answer_get_only(web):
    assert web.post("/signin").status_code == 405


def test_web_bind_addr_follows_the_contract():
    assert web_bind_addr({"WEB_BIND_ADDR": None, "WEB_ORIGIN": WEB}) == ("0.0.0.0", 38080)
    assert web_bind_addr({"WEB_BIND_ADDR": "", "WEB_ORIGIN": "https://app.example.org"}) == (
        "0.0.0.0",
        443,
    )
    assert web_bind_addr({"WEB_BIND_ADDR": None, "WEB_ORIGIN": "http://books.lan"}) == (
        "0.0.0.0",
        80,
    )
    assert web_bind_addr({"WEB_BIND_ADDR": "127.0.0.1:9000", "WEB_ORIGIN": WEB}) == (
        "127.0.0.1",
        9000,
    )
    assert web_bind_addr({"WEB_BIND_ADDR": "[::1]:9000", "WEB_ORIGIN": WEB}) == ("::1", 9000)
    for off in ("off", "OFF", " Off "):
        assert web_bind_addr({"WEB_BIND_ADDR": off, "WEB_ORIGIN": WEB}) is None
    assert (
        web_bind_addr({"WEB_BIND_ADDR": "127.0.0.1:9000", "WEB_ORIGIN": WEB}, no_web=True) is None
    )
    with pytest.raises(ValueError):
        web_bind_addr({"WEB_BIND_ADDR": "localhost", "WEB_ORIGIN": WEB})


def test_api_lets_the_web_origin_read_retry_after(client):
    """The sign-in page shows the throttle wait; CORS must expose Retry-After to it."""
    response = client.get("/health", headers={"Origin": WEB})
    assert response.headers["Access-Control-Allow-Origin"] == WEB
    assert "retry-after" in response.headers["Access-Control-Expose-Headers"].lower()
    other = client.get("/health", headers={"Origin": "http://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_the_web_app_never_reaches_for_the_database():
    """It is a client of the API like any other: no models, services or db session."""
    import ast

    web_dir = Path(__file__).resolve().parents[2] / "app" / "web"
    for source in web_dir.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom):
                module = ("." * node.level) + (node.module or "")
                assert not any(
                    part in module for part in ("models", "services", "extensions", "db")
                ), (source.name, module)
            if isinstance(node, ast.Import):
                assert not any(
                    a.name.startswith(("sqlalchemy", "flask_sqlalchemy")) for a in node.names
                ), source.name


def test_the_favicon_is_served(web):
    """Browsers ask for /favicon.ico on every page: an icon, never a 404."""
    with web.client.get("/favicon.ico") as response:
        assert response.status_code == 200
        assert response.mimetype == "image/x-icon"
        assert response.get_data()[:4] == b"\x00\x00\x01\x00"  # an ICO header
        assert "Content-Security-Policy" in response.headers
