"""Paging cursors, every pager's: opaque to clients, recognisable as the service's own.

Two wire formats, one per kind of position, both kept as clients have them:

- keyset cursors (`c1`: encode, decode) for the transaction listing and a register,
  whose order is a date then an id;
- sequence cursors (`a1`: encode_seq, decode_seq) for GET /audit and GET /documents,
  whose order is one increasing number (an event's seq, a document's id).

Keyset cursors. A cursor names the last row of the page it ends (a keyset position: a date and an
id) and is bound to the listing it came from (its kind, e.g. the transactions or
one account's register, and its filters). Its text is

    c1.<base64url of the JSON [kind, scope, "YYYY-MM-DD", id]>.<check>

where check is a truncated SHA-256 over the payload with a fixed label. The check is
no secret (a cursor grants nothing: it only says where a page starts, within what
the caller may read anyway); it makes every cursor the service did not issue, or
that was cut, edited or taken from another listing, a clean 400 instead of a page
from somewhere else. All state is in the cursor: nothing is kept between requests.

Sequence cursors. Their text is base64url (unpadded) of `a1.<seq>.<tag>`, the tag a
truncated HMAC-SHA-256 under the public SEQ_KEY over the seq and the listing's filters:
recognition, not secrecy, as above; any cursor not so made is the one 400 SEQ_REFUSED.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from datetime import date

from ..errors import BadRequestError
from . import validate

VERSION = "c1"
_LABEL = b"ledger-service paging cursor v1\x00"
NOT_OURS = "'cursor' is not a cursor this service issued"
OTHER_LISTING = "'cursor' belongs to a listing with other filters; start again without it"


def _check(payload: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(_LABEL + payload).digest()[:12]).decode()


def scope_of(*parts) -> str:
    """A short fingerprint of a listing's filters (which the cursor must be used with)."""
    text = json.dumps([str(p) if isinstance(p, date) else p for p in parts], ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode(kind: str, scope: str, day: date, row_id: int) -> str:
    payload = json.dumps([kind, scope, day.isoformat(), row_id], separators=(",", ":")).encode()
    body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    return f"{VERSION}.{body}.{_check(payload)}"


def decode(text: str, kind: str, scope: str) -> tuple[date, int]:
    """The (date, id) a cursor names; BadRequestError unless this listing issued it."""
    parts = text.split(".")
    if len(parts) != 3 or parts[0] != VERSION:
        raise BadRequestError(NOT_OURS)
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
    except (binascii.Error, ValueError):
        raise BadRequestError(NOT_OURS) from None
    if not hmac.compare_digest(_check(payload), parts[2]):
        raise BadRequestError(NOT_OURS)
    try:
        found_kind, found_scope, day_text, row_id = json.loads(payload)
        day = date.fromisoformat(day_text)
    except (ValueError, TypeError):
        raise BadRequestError(NOT_OURS) from None
    if (
        not isinstance(row_id, int)
        or isinstance(row_id, bool)
        or not 0 < row_id <= validate.INT64_MAX
    ):
        raise BadRequestError(NOT_OURS)
    if found_kind != kind or found_scope != scope:
        raise BadRequestError(OTHER_LISTING)
    return day, row_id


SEQ_VERSION = "a1"
SEQ_KEY = b"ledger-service audit cursor v1"
SEQ_REFUSED = "'cursor' is not one this listing gave out with these filters"
_DIGITS = re.compile(r"[0-9]{1,19}\Z")


def _seq_tag(seq: int, filters: str) -> str:
    # Recognition, not secrecy: every caller may read the whole trail anyway. The tag
    # ties a cursor to this listing and its filters, so a cursor of another listing
    # (or another filter) is refused rather than misread.
    return hmac.new(SEQ_KEY, f"{seq}|{filters}".encode(), hashlib.sha256).hexdigest()[:20]


def encode_seq(seq: int, filters: str) -> str:
    """The sequence cursor after `seq` in the listing whose filters are `filters`."""
    raw = f"{SEQ_VERSION}.{seq}.{_seq_tag(seq, filters)}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_seq(text: str, filters: str) -> int:
    """The seq a sequence cursor names; BadRequestError unless this listing issued it."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        version, seq_text, tag = raw.split(".")
        seq = int(seq_text)
    except (ValueError, UnicodeDecodeError):
        raise BadRequestError(SEQ_REFUSED) from None
    if version != SEQ_VERSION or not _DIGITS.match(seq_text) or not 1 <= seq <= validate.INT64_MAX:
        raise BadRequestError(SEQ_REFUSED)
    if not hmac.compare_digest(tag, _seq_tag(seq, filters)):
        raise BadRequestError(SEQ_REFUSED)
    return seq
