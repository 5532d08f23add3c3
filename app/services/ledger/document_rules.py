"""The rules a document's bytes and name are held to, before anything is stored
(docs/ledger.md, "Receipts"): the limits (MAX_DOCUMENT_BYTES,
MAX_DOCUMENTS_PER_TRANSACTION, MAX_DOCUMENT_STORE_BYTES), the type read from the
bytes (sniff), the stored name (clean_filename, then with_extension) and the one
pass over an upload that measures, hashes and types it (measure). The service that
stores documents is documents.py.
"""

from __future__ import annotations

import hashlib
import unicodedata
from pathlib import PurePath
from typing import IO

from flask import current_app, has_app_context

from ...models.documents import CHUNK_BYTES, FILENAME_MAX
from ..errors import BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_PER_TRANSACTION = 50
DEFAULT_MAX_STORE_BYTES = 2 * 1024 * 1024 * 1024
CHUNK = CHUNK_BYTES
ACCEPTED = ("application/pdf", "image/jpeg", "image/png", "image/webp", "image/heic")
# The extension a stored filename ends in, by the type read from the bytes; the others
# that count as right for it (any letter case).
EXTENSIONS = {
    "application/pdf": ("pdf",),
    "image/jpeg": ("jpg", "jpeg"),
    "image/png": ("png",),
    "image/webp": ("webp",),
    "image/heic": ("heic",),
}
HEIC_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"mif1", b"msf1"})
FALLBACK_NAME = "document"
# Character categories removed from filenames: control, format (bidi overrides,
# zero-width joiners...), surrogates, line and paragraph separators.
_STRIPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _setting(key: str, default: int) -> int:
    if has_app_context():
        return int(current_app.config.get(key) or default)
    return default


def max_bytes() -> int:
    return _setting("MAX_DOCUMENT_BYTES", DEFAULT_MAX_BYTES)


def max_per_transaction() -> int:
    return _setting("MAX_DOCUMENTS_PER_TRANSACTION", DEFAULT_MAX_PER_TRANSACTION)


def max_store_bytes() -> int:
    return _setting("MAX_DOCUMENT_STORE_BYTES", DEFAULT_MAX_STORE_BYTES)


def too_large(limit: int | None = None) -> PayloadTooLargeError:
    limit = max_bytes() if limit is None else limit
    return PayloadTooLargeError(
        f"the document is larger than the limit of {limit} bytes "
        f"({limit / 1048576:.4g} MiB, MAX_DOCUMENT_BYTES); nothing was stored"
    )


def unsupported() -> UnsupportedMediaTypeError:
    return UnsupportedMediaTypeError(
        "this type of file is not accepted: send a PDF, JPEG, PNG, WebP or HEIC "
        "document (" + ", ".join(ACCEPTED) + "), whatever the file claims to be"
    )


# --- the rules on bytes and names --------------------------------------------------


def sniff(head: bytes) -> str | None:
    """The document's type from its first bytes, or None when it is not accepted."""
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    # HEIC/HEIF: an ISO BMFF file opens with its `ftyp` box; the major brand follows.
    if head[4:8] == b"ftyp" and head[8:12] in HEIC_BRANDS:
        return "image/heic"
    return None


def clean_filename(raw: str | None) -> str:
    """The name as stored: last path component, no control or format characters, at
    most FILENAME_MAX characters keeping the extension; `document` if nothing is left."""
    if not raw:
        return FALLBACK_NAME
    kept = "".join(c for c in raw if unicodedata.category(c) not in _STRIPPED_CATEGORIES)
    name = kept.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name.strip("."):  # "", ".", "..": a path, not a name
        return FALLBACK_NAME
    if len(name) > FILENAME_MAX:
        ext = PurePath(name).suffix
        stem = name[: len(name) - len(ext)]
        if 0 < len(ext) < FILENAME_MAX:
            name = stem[: FILENAME_MAX - len(ext)].rstrip() + ext
        else:
            name = name[:FILENAME_MAX]
    return name or FALLBACK_NAME


def with_extension(name: str, kind: str) -> str:
    """The cleaned name ending in the extension of the type read from the bytes: a
    different or missing one (the text after the last dot, when that dot is not the
    first character) is replaced or added, the stem cut so the whole fits FILENAME_MAX."""
    right = EXTENSIONS[kind]
    dot = name.rfind(".")
    stem = name[:dot] if dot > 0 else name
    if dot > 0 and name[dot + 1 :].lower() in right:
        return name
    ending = "." + right[0]
    return stem[: FILENAME_MAX - len(ending)].rstrip() + ending


def measure(stream: IO[bytes], limit: int) -> tuple[int, str, str]:
    """(size, sha256 hex, content type) of a seekable stream, read CHUNK at a time;
    refuses (413, 400, 415) before anything is stored."""
    stream.seek(0)
    hasher = hashlib.sha256()
    size = 0
    head = b""
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        if len(head) < 16:
            head += chunk[:16]
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        hasher.update(chunk)
    if size == 0:
        raise BadRequestError("the 'file' part is empty: send the document's bytes")
    kind = sniff(head)
    if kind is None:
        raise unsupported()
    return size, hasher.hexdigest(), kind
