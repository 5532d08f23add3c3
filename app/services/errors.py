"""Domain errors raised by services and mapped once per interface.

HTTP: app.errors turns a ServiceError into `{error}` with its status.
MCP: the JSON-RPC layer turns a 400-class ServiceError into -32602, others into -32603;
an error whose `invalid_params` is true is -32602 whatever its HTTP status (a refusal of
the call's arguments the model can act on, such as the lock date or a reused key).

A rejection that is itself a state change (a login failure counted, a code killed,
a device attempt spent, a slow_down poll time stored) sets `commit = True`: the
runner that ends the unit (store.run_unit, through store.finish) then commits the session
before answering instead of rolling it back.

The classes that stand for an HTTP status end in `Error` (BadRequestError,
NotFoundError, ...), so none reads as werkzeug's exception of the same status: these
are domain errors, mapped to a status in one place, never raised by werkzeug.
"""

from __future__ import annotations


class ServiceError(Exception):
    status = 400
    commit = False
    invalid_params = False  # MCP -32602 with this message, though HTTP answers `status`
    # Further members of the HTTP error body beside `error` (e.g. difference_cents).
    extra: dict | None = None

    def __init__(self, message: str, *, commit: bool | None = None):
        super().__init__(message)
        self.message = message
        if commit is not None:
            self.commit = commit


class BadRequestError(ServiceError):
    status = 400


class UnauthenticatedError(ServiceError):
    status = 401


class ForbiddenError(ServiceError):
    status = 403


class NotFoundError(ServiceError):
    status = 404


class ConflictError(ServiceError):
    status = 409


class UnsupportedMediaTypeError(ServiceError):
    status = 415


class PayloadTooLargeError(ServiceError):
    status = 413


class UnprocessableError(ServiceError):
    status = 422


class InsufficientStorageError(ServiceError):
    """507: what the store is allowed to hold is full (MAX_DOCUMENT_STORE_BYTES)."""

    status = 507


class BooksLocked(ConflictError):
    """Something dated on or before the lock date: 409 over HTTP, -32602 over MCP."""

    invalid_params = True


class UnknownReplaced(NotFoundError):
    """A correction's `replaces` names no transaction: 404 over HTTP, -32602 over MCP."""

    invalid_params = True


class Reconciled(ConflictError):
    """A transaction with a reconciled entry cannot be deleted or replaced: 409 over
    HTTP, -32602 over MCP."""

    invalid_params = True


class KeyReused(UnprocessableError):
    """An idempotency key sent again with another request: 422 over HTTP, -32602 over MCP."""

    invalid_params = True


class KeyInFlight(ConflictError):
    """An idempotency key whose first request has not finished: 409; MCP -32602."""

    invalid_params = True


class TooManyAttempts(ServiceError):
    status = 429

    def __init__(self, message: str, *, retry_after: int, commit: bool | None = None):
        super().__init__(message, commit=commit)
        self.retry_after = retry_after


# The one sentence every interface answers for a fault (HTTP 500, OAuth server_error,
# MCP -32603); the details go to the server log only.
GENERIC_FAULT = "something went wrong on the server; the details are in the server log"

BALANCE_MESSAGE = (
    "the transaction does not balance: its entries must number at least 2 and sum to 0"
)
RANGE_MESSAGE = (
    "the amounts are too large: an account's balance would leave the signed 64-bit range"
)
CONFLICT_MESSAGE = "the change conflicts with data already stored (for example an unknown account)"
