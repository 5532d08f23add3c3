"""Configuration: documented defaults (docs/deploy.md), environment overrides, origins."""

import pytest

from app import create_app
from app.config import (
    api_origin_from_bind,
    canonical_origin,
    normalise_database_url,
    parse_host_port,
)


@pytest.mark.parametrize(
    "raw,canonical",
    [
        ("HTTP://LocalHost:38081/", "http://localhost:38081"),
        ("https://Books.Example.ORG", "https://books.example.org"),
        ("http://localhost:38081", "http://localhost:38081"),
        (" http://[::1]:8080/ ", "http://[::1]:8080"),
    ],
)
def test_origins_are_canonicalised(raw, canonical):
    assert canonical_origin(raw) == canonical


@pytest.mark.parametrize(
    "raw,url",
    [
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
    ],
)
def test_database_urls_select_psycopg3(raw, url):
    assert normalise_database_url(raw) == url


def test_host_port():
    assert parse_host_port("0.0.0.0:38081") == ("0.0.0.0", 38081)
    assert parse_host_port("[::1]:9000") == ("::1", 9000)
    assert parse_host_port(":9000") == ("0.0.0.0", 9000)
    with pytest.raises(ValueError):
        parse_host_port("localhost")


def test_contract_defaults(monkeypatch, tmp_path):
    for key in (
        "DATABASE_URL",
        "API_ORIGIN",
        "WEB_ORIGIN",
        "BIND_ADDR",
        "SESSION_TTL_DAYS",
        "OAUTH_CLIENT_COMPAT",
        "OAUTH_CIMD_ALLOW_PRIVATE",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LEDGER_INSTANCE_PATH", str(tmp_path))
    app = create_app()
    assert app.config["API_ORIGIN"] == "http://localhost:38081"
    assert app.config["WEB_ORIGIN"] == "http://localhost:38080"
    assert app.config["BIND_ADDR"] == "0.0.0.0:38081"
    assert app.config["SESSION_TTL_DAYS"] == 30
    assert app.config["OAUTH_CLIENT_COMPAT"] is False
    assert app.config["OAUTH_CIMD_ALLOW_PRIVATE"] is False
    assert app.config["DATABASE_URL"] == f"sqlite:///{tmp_path}/ledger.db"


def test_environment_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("LEDGER_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("API_ORIGIN", "HTTPS://Books.Example.org/")
    monkeypatch.setenv("WEB_ORIGIN", "https://app.example.org/")
    monkeypatch.setenv("SESSION_TTL_DAYS", "7")
    monkeypatch.setenv("OAUTH_CLIENT_COMPAT", "true")
    monkeypatch.setenv("OAUTH_CIMD_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1/none")
    app = create_app()
    assert app.config["API_ORIGIN"] == "https://books.example.org"
    assert app.config["WEB_ORIGIN"] == "https://app.example.org"
    assert app.config["SESSION_TTL_DAYS"] == 7
    assert app.config["OAUTH_CLIENT_COMPAT"] is True
    assert app.config["OAUTH_CIMD_ALLOW_PRIVATE"] is True
    assert app.config["SQLALCHEMY_DATABASE_URI"] == "postgresql+psycopg://postgres@127.0.0.1/none"


@pytest.mark.parametrize(
    "bind,origin",
    [
        ("0.0.0.0:39000", "http://localhost:39000"),
        (":39000", "http://localhost:39000"),
        ("127.0.0.1:38081", "http://localhost:38081"),
        ("[::]:39001", "http://localhost:39001"),
        ("[::1]:39002", "http://localhost:39002"),
        ("books.lan:39003", "http://books.lan:39003"),
        ("192.168.1.5:39004", "http://192.168.1.5:39004"),
        ("[fd00::5]:39005", "http://[fd00::5]:39005"),
        ("nonsense", "http://localhost:38081"),  # serve refuses it; other commands run
    ],
)
def test_api_origin_follows_bind_addr(bind, origin):
    assert api_origin_from_bind(bind) == origin


def test_a_newcomer_setting_only_bind_addr_gets_an_api_origin_on_that_port(monkeypatch, tmp_path):
    """Issue 44: BIND_ADDR on another port left API_ORIGIN (and the web app's API
    address) on the default port."""
    monkeypatch.delenv("API_ORIGIN", raising=False)
    monkeypatch.setenv("LEDGER_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("BIND_ADDR", "0.0.0.0:39000")
    app = create_app()
    assert app.config["API_ORIGIN"] == "http://localhost:39000"
    assert app.config["API_ORIGIN_DERIVED"] is True
    # Set anywhere (the environment, the instance's config.py, a test's mapping): kept.
    monkeypatch.setenv("API_ORIGIN", "http://localhost:38081")
    assert create_app().config["API_ORIGIN"] == "http://localhost:38081"
    assert create_app().config["API_ORIGIN_DERIVED"] is False
    monkeypatch.delenv("API_ORIGIN")
    (tmp_path / "config.py").write_text('API_ORIGIN = "https://books.example.org"\n')
    assert create_app().config["API_ORIGIN"] == "https://books.example.org"
    (tmp_path / "config.py").unlink()
    assert create_app({"API_ORIGIN": "http://x.example"}).config["API_ORIGIN"] == "http://x.example"
    assert create_app({"BIND_ADDR": "127.0.0.1:39100"}).config["API_ORIGIN"] == (
        "http://localhost:39100"
    )
