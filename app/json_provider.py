"""Flask's JSON provider with orjson doing the encoding.

Large responses (a month of transactions at a million postings is ~3 MB) spend
most of their time in the standard library's encoder; orjson is about ten times
faster. Output is the same JSON: compact separators, keys in insertion order,
dates and anything else orjson does not take natively go through Flask's own
default(). Non-ASCII text is sent as UTF-8 instead of \\u escapes (equivalent
JSON). Anything orjson refuses (an integer beyond 64 bits) falls back to the
standard encoder, so no response changes meaning.

parse_body() is the one parser of JSON request bodies (see its docstring).
"""

from __future__ import annotations

import json
import re
from typing import cast

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider

_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS


class FastJSONProvider(DefaultJSONProvider):
    def _encode(self, obj) -> bytes:
        options = _OPTIONS | (orjson.OPT_SORT_KEYS if self.sort_keys else 0)
        return orjson.dumps(obj, default=self.default, option=options)

    def dumps(self, obj, **kwargs) -> str:
        if kwargs:  # indent, separators, ...: the standard encoder honours them
            return super().dumps(obj, **kwargs)
        try:
            return self._encode(obj).decode()
        except TypeError:
            return super().dumps(obj)

    def response(self, *args, **kwargs):
        if (self.compact is None and self._app.debug) or self.compact is False:
            return super().response(*args, **kwargs)  # pretty-printed for humans
        obj = self._prepare_response_obj(args, kwargs)
        try:
            body = self._encode(obj) + b"\n"
        except TypeError:
            return super().response(*args, **kwargs)
        # The app's class is flask.Response (its sansio base, as typed, takes no body).
        response_class = cast("type[Response]", self._app.response_class)
        return response_class(body, mimetype=self.mimetype)


# --- request bodies ------------------------------------------------------------------

NOT_JSON = "not valid JSON"
NOT_UNICODE = "not valid Unicode: it contains a lone surrogate (\\ud800 to \\udfff)"
# A JSON escape of a UTF-16 surrogate; only bodies holding one need the full walk.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class BodyNotJSON(ValueError):
    """A request body this service does not take as JSON; `reason` is NOT_JSON or NOT_UNICODE."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _lone_surrogate(value) -> bool:
    """Whether any string (key or value) in the parsed document is not valid Unicode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def parse_body(raw: bytes, **options):
    """The one JSON body parser (ledger, auth and OAuth JSON routes, and the MCP envelope).

    Refuses (BodyNotJSON) what json.loads would turn into an exception other than a
    ValueError or into text the database cannot store: nesting too deep for the parser
    (RecursionError), bytes that do not decode (strictly: an encoded surrogate is
    refused too) and a lone surrogate written as a \\u escape. `options` go to json.loads.
    """
    try:
        text = raw.decode(json.detect_encoding(raw))
    except (UnicodeDecodeError, LookupError) as exc:
        raise BodyNotJSON(NOT_JSON) from exc
    try:
        value = json.loads(text, **options)
    except (ValueError, RecursionError) as exc:
        raise BodyNotJSON(NOT_JSON) from exc
    if _SURROGATE_ESCAPE.search(text) and _lone_surrogate(value):
        raise BodyNotJSON(NOT_UNICODE)
    return value
