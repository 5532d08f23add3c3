"""Reading a multipart/form-data upload: one part named `file`, for every upload route
(documents.py: receipts; statements.py: bank statements).

Its body may be larger than MAX_BODY_BYTES: up to the route's own limit plus the
multipart framing (MULTIPART_ALLOWANCE). Werkzeug spools the part to a temporary file
as it arrives, so the body is never held in memory whole; the spooled files are
closed when the block ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from flask import request
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

from ..services.errors import BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError

MULTIPART_ALLOWANCE = 64 * 1024  # boundaries and part headers around the file


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
    try:
        if (request.content_length or 0) > limit + MULTIPART_ALLOWANCE:
            raise too_large(limit)  # before reading a byte of it
        try:
            part = request.files.get("file")
        except RequestEntityTooLarge:
            raise too_large(limit) from None
        except (ClientDisconnected, ValueError):
            raise BadRequestError("the multipart body could not be read") from None
        yield part
    finally:
        request.close()  # the spooled temporary files, now
