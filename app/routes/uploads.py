"""Reading a multipart/form-data upload: one part named `file`, for every upload route
(documents.py: receipts; statements.py: bank statements); and answering the stored file
back (file_response), for both alike.

spooled_unit is the flow both upload views share (marked boundary.spooled): the part
spooled, then written in one unit of work.

Its body may be larger than MAX_BODY_BYTES: up to the route's own limit plus the
multipart framing (MULTIPART_ALLOWANCE). Werkzeug spools the part to a temporary file
as it arrives, so the body is never held in memory whole; the spooled files are
closed when the block ends.
"""

from __future__ import annotations

import base64
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar
from urllib.parse import quote

from flask import Response, current_app, request
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

from .. import config, store
from ..services.errors import BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError

T = TypeVar("T")

MULTIPART_ALLOWANCE = config.MULTIPART_ALLOWANCE  # one value: the server's body limit uses it
# Werkzeug's own bounds on a multipart body (it refuses either with its 413, which is
# answered as what it is: too many parts, not a size).
MAX_PARTS = 1000
MAX_FIELD_BYTES = 500_000


def too_many_parts(what: str) -> BadRequestError:
    return BadRequestError(
        f"the multipart body has too many parts (at most {MAX_PARTS}) or a form field "
        f"over {MAX_FIELD_BYTES} bytes: send one part named 'file' holding the {what}"
    )


@contextmanager
def file_part(
    what: str, limit: int, too_large: Callable[[int], PayloadTooLargeError]
) -> Iterator[FileStorage | None]:
    """The request's part named `file` (None when absent), its form fields readable
    meanwhile as request.form: 415 unless multipart/form-data, too_large(limit) (413)
    when the body is larger than `limit` plus the framing, before a byte is read."""
    if request.mimetype != "multipart/form-data":
        raise UnsupportedMediaTypeError(
            f"send the {what} as multipart/form-data with one part named 'file'"
        )
    request.max_content_length = limit + MULTIPART_ALLOWANCE
    request.max_form_parts = MAX_PARTS
    request.max_form_memory_size = MAX_FIELD_BYTES
    try:
        if (request.content_length or 0) > limit + MULTIPART_ALLOWANCE:
            raise too_large(limit)  # before reading a byte of it
        try:
            part = request.files.get("file")
        except RequestEntityTooLarge:
            # The body's length was checked above when it was declared; an undeclared
            # one (chunked) went past it when the stream ran out at its maximum.
            if request.content_length is None and getattr(request.stream, "is_exhausted", False):
                raise too_large(limit) from None
            raise too_many_parts(what) from None
        except (ClientDisconnected, ValueError):
            raise BadRequestError("the multipart body could not be read") from None
        yield part
    finally:
        request.close()  # the spooled temporary files, now


def spooled_unit(
    what: str,
    limit: int,
    too_large: Callable[[int], PayloadTooLargeError],
    write: Callable[[FileStorage | None], T],
) -> T:
    """The upload flow (boundary.spooled): the request's part named `file` spooled by
    file_part, then write(part) run as one unit through store.run_unit while the part
    is open; write's result. A retry re-runs only write, the part rewound to its start
    first; the spooled files are closed when the unit has ended."""

    def from_the_start(part: FileStorage | None) -> T:
        if part is not None:
            part.stream.seek(0)
        return write(part)

    with file_part(what, limit, too_large) as part:
        return store.run_unit(from_the_start, part)


def content_disposition(filename: str) -> str:
    """attachment, with an ASCII fallback name and the exact name (RFC 6266, 8187)."""
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode("ascii")
    ascii_name = "".join(c for c in ascii_name if c.isprintable() and c not in '"\\') or "document"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


def file_response(
    body: bytes | Iterable[bytes],
    *,
    mimetype: str,
    filename: str,
    sha256: bytes,
    size: int | None = None,
) -> Response:
    """A stored file as a download: attachment under its name, never sniffed or cached,
    its SHA-256 in Repr-Digest; Content-Length given when the body is streamed."""
    response = current_app.response_class(body, status=200, mimetype=mimetype)
    if size is not None:
        response.headers["Content-Length"] = str(size)
    response.headers["Content-Disposition"] = content_disposition(filename)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Repr-Digest"] = f"sha-256=:{base64.b64encode(sha256).decode('ascii')}:"
    return response
