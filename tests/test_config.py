"""Configuration: documented defaults (docs/deploy.md), environment overrides, origins."""

import pytest

from app import create_app
from app.config import canonical_origin, normalise_database_url, parse_host_port


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
