"""Who changes the books, and how: the Actor every event records besides the change.

Set once per request by the HTTP layer (routes/support.py), per tool call by the MCP
layer, overridden by the importer (acting(via="import")); the CLI's default is `cli`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Actor:
    """Who changes the books, and how: what every event records besides the change."""

    user_email: str | None = None
    via: str = "cli"
    client_id: str | None = None
    client_name: str | None = None


_NOBODY = Actor()  # frozen: the CLI's (and any unset context's) actor
_actor: ContextVar[Actor] = ContextVar("audit_actor", default=_NOBODY)  # noqa: B039


def set_actor(actor: Actor) -> None:
    """Set the actor for the rest of this context (an HTTP request: routes/support.py)."""
    _actor.set(actor)


def actor_for(caller, via: str | None = None) -> Actor:
    """The actor for a resolved caller (identity.credentials.Principal): `web` for a
    cookie session (no client), `api` for a bearer token with its OAuth client (the
    token's client; svc-cli for a minted token); `via` overrides (the MCP layer: mcp)."""
    if caller.via == "session":
        return Actor(user_email=caller.email, via=via or "web")
    return Actor(
        user_email=caller.email,
        via=via or "api",
        client_id=caller.client_id,
        client_name=caller.client_name,
    )


def current_actor() -> Actor:
    return _actor.get()


@contextmanager
def acting(**changes) -> Iterator[Actor]:
    """Within the block, record events with these fields changed (e.g. via="import")."""
    token = _actor.set(replace(_actor.get(), **changes))
    try:
        yield _actor.get()
    finally:
        _actor.reset(token)
