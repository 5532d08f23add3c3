"""The injectable clock: tests put a callable at app.config['CLOCK']."""

from datetime import UTC, date, datetime

from flask import current_app, has_app_context


def now() -> datetime:
    if has_app_context():
        source = current_app.config.get("CLOCK")
        if source is not None:
            return source()
    return datetime.now(UTC)


def today() -> date:
    return now().date()


def iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with a Z suffix, whole seconds (every timestamp in docs/openapi.yaml)."""
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
