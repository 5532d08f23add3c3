"""The companion web app: page shells and static files on WEB_ORIGIN.

A second, small WSGI app. It never touches the database: every page is static
HTML plus JavaScript modules that call the API cross-origin with
`credentials: "include"`, like any other client. The one generated file is
/config.js, which tells the pages where the API lives (API_ORIGIN).

Cookies ignore ports, so this server also receives the API's `svc_session`
cookie. It never reads, logs or forwards request cookies (nothing here logs
requests at all; waitress keeps no access log).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from flask import Flask, Response, abort, request, send_from_directory

from . import preload

HERE = Path(__file__).resolve().parent
PAGES_DIR = HERE / "pages"
STATIC_DIR = HERE / "static"

# Path -> page shell. Each shell loads its own module from /static/js/pages/.
# One page per view (docs/web.md "Pages"); the shared header (static/js/nav.js)
# links them. A view's state that must survive a reload lives in its query
# (/register?account=3), never in the path, so every view is one fixed shell.
PAGES = {
    "/": "books.html",
    "/register": "register.html",
    "/accounts": "accounts.html",
    "/reports": "reports.html",
    "/import": "import.html",
    "/signin": "signin.html",
    "/authorize": "authorize.html",
    "/device": "device.html",
    "/security": "security.html",
    "/history": "history.html",
    "/year-end": "year-end.html",
    "/budgets": "budgets.html",
    "/statements": "statements.html",
    "/rules": "rules.html",
    "/annual-report": "annual-report.html",
    "/expected": "expected.html",
}

# Served types, fixed here rather than guessed from the host's mime.types:
# module scripts must come as JavaScript or the browser refuses to run them.
STATIC_TYPES = {
    ".js": "text/javascript",  # werkzeug adds "; charset=utf-8" to text types
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


def content_security_policy(api_origin: str) -> str:
    """Scripts and styles only from this origin; fetches only here and to the API.

    frame-ancestors 'none' keeps the consent and device pages out of frames
    (no clickjacking an Approve button).
    """
    return "; ".join(
        [
            "default-src 'self'",
            f"connect-src 'self' {api_origin}",
            "script-src 'self'",
            "style-src 'self'",
            # blob: the receipts shown in the page (documents.js), made by its own
            # scripts from the API's bytes.
            "img-src 'self' data: blob:",
            "frame-src blob:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def _page_view(filename: str, version: str):
    """The view of one page: the shell with every module of its page announced and every
    static file under this release's path (preload.py), built once."""
    shell = preload.with_preloads((PAGES_DIR / filename).read_text("utf-8"), STATIC_DIR)
    body = preload.versioned(shell, version).encode()
    etag = hashlib.sha256(body).hexdigest()[:32]

    def view():
        response = Response(body, mimetype="text/html", headers={"Cache-Control": "no-cache"})
        response.set_etag(etag)
        return response.make_conditional(request)

    view.__name__ = "page_" + filename.split(".")[0]
    return view


def _static_routes(app: Flask, version: str) -> None:
    """The favicon and the static files, plain and under this release's path."""

    @app.get("/favicon.ico")
    def favicon():
        # Browsers ask for it on every page: an answer, not a 404 in every log.
        response = send_from_directory(STATIC_DIR, "favicon.ico", mimetype=STATIC_TYPES[".ico"])
        response.headers["Cache-Control"] = "public, max-age=86400"
        return response

    @app.get("/static/<path:filename>")
    def static_file(filename: str):
        mimetype = STATIC_TYPES.get(Path(filename).suffix)
        if mimetype is None:
            abort(404)
        response = send_from_directory(STATIC_DIR, filename, mimetype=mimetype)
        # No build step means no fingerprinted names: revalidate so upgrades show at once.
        response.headers["Cache-Control"] = "no-cache"
        return response

    @app.get("/v/<release>/static/<path:filename>")
    def versioned_static_file(release: str, filename: str):
        # The same files under a path naming this release's static files (their hash):
        # kept by the browser without asking again, as they never change under that
        # name. Another release's name (a page from before an upgrade) is answered
        # with today's file, revalidated as above.
        response = static_file(filename)
        if release == version:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return response


def create_web_app(api_origin: str, web_origin: str) -> Flask:
    """Build the web app for canonical origins (see app.config.canonical_origin)."""
    app = Flask(__name__, static_folder=None)
    app.config["API_ORIGIN"] = api_origin
    app.config["WEB_ORIGIN"] = web_origin
    csp = content_security_policy(api_origin)
    config_js = (
        "// Generated by the web server from its configuration.\n"
        f"export const API_ORIGIN = {json.dumps(api_origin)};\n"
        f"export const WEB_ORIGIN = {json.dumps(web_origin)};\n"
    )

    version = preload.static_version(STATIC_DIR)
    for path, filename in PAGES.items():
        app.add_url_rule(path, view_func=_page_view(filename, version), methods=["GET"])

    @app.get("/config.js")
    def config_module():
        return Response(
            config_js,
            mimetype=STATIC_TYPES[".js"],
            headers={"Cache-Control": "no-cache"},
        )

    _static_routes(app, version)

    @app.after_request
    def security_headers(response):
        response.headers["Content-Security-Policy"] = csp
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    return app
