"""Reading request bodies: JSON (415 for any other media type or an encoding other than
UTF-8), guarded against depth and size, then a marshmallow schema."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from flask import request
from marshmallow import EXCLUDE, Schema, ValidationError

from service.api.connections import request_body
from service.api.context import request_environ
from service.api.errors import BadRequest, NotJson

__all__ = ["MAX_DEPTH", "field_errors", "json_body", "load_body", "load_query"]

MAX_DEPTH = 16
"""How deeply a body's arrays and objects may nest (the deepest the contract has is 5: a
test-mode setup's table); deeper is a 400 before anything recursive (a schema, an error
message) sees the value."""


def load_body(
    schema: Schema,
    *,
    plain: Callable[[Any], Any] | None = None,
    environ: Mapping[str, Any] | None = None,
) -> Any:
    """Return the request's JSON body loaded by ``schema``; raise :class:`BadRequest`.

    A body sent as another media type than JSON (``text/plain``...), or not in UTF-8, is a
    415 (:class:`NotJson`); no ``Content-Type`` at all is read as JSON. Malformed JSON, JSON
    nested deeper than :data:`MAX_DEPTH` and schema errors are 400 answers; the body-size
    limit (413) is enforced by Flask's ``MAX_CONTENT_LENGTH``. ``plain``, if given,
    loads the common well-formed body as ``schema`` would, faster, or answers ``None`` to leave
    it to ``schema`` (which then also names what is wrong). ``environ``: the request's, when
    the caller holds it (``service.api.auth.Environ``).
    """
    if environ is None:
        environ = request_environ()
    raw = request_body(environ)
    if not raw:  # no body; whitespace alone is not JSON (a 400 like any malformed body)
        data: Any = {}
    else:
        _require_json(raw, environ)
        data = _parse(raw)
        _require_shallow(data, raw)
    if plain is not None:
        loaded = plain(data)
        if loaded is not None:
            return loaded
    try:
        return schema.load(data)
    except ValidationError as error:
        raise BadRequest(
            "the request body does not match the schema: " + _summary(error.messages),
            kind="invalid-body",
            errors=field_errors(error.messages),
        ) from None


def json_body(raw: bytes) -> Any:
    """The JSON value of ``raw``, a request's body, checked as :func:`load_body` checks it
    (415 unless JSON in UTF-8; 400 when malformed or too deep), for a body no schema loads."""
    _require_json(raw, request_environ())
    data = _parse(raw)
    _require_shallow(data, raw)
    return data


def load_query(schema: Schema) -> dict[str, Any]:
    """Return the query string loaded by ``schema`` (unknown names ignored); raise
    :class:`BadRequest` (``invalid-query``) naming each bad parameter."""
    if not request.query_string:
        defaults = _defaults(schema)
        if defaults is not None:  # what the schema loads from nothing, worked out once
            return dict(defaults)
    try:
        loaded: dict[str, Any] = schema.load(request.args, unknown=EXCLUDE)
    except ValidationError as error:
        by_name = (
            error.messages if isinstance(error.messages, dict) else {"_schema": error.messages}
        )
        raise BadRequest(
            "the query string is not valid: "
            + "; ".join(
                f"{name}: {' '.join(map(str, messages))}" for name, messages in by_name.items()
            ),
            kind="invalid-query",
            errors=field_errors(error.messages),
        ) from None
    return loaded


_DEFAULTS: dict[int, dict[str, Any] | None] = {}
_SCALARS = (str, int, float, bool, type(None))


def _defaults(schema: Schema) -> dict[str, Any] | None:
    """What ``schema`` loads from an empty query string, when that is plain values (kept per
    schema: they are made once per module); ``None`` when it refuses it or makes objects."""
    key = id(schema)
    if key not in _DEFAULTS:
        try:
            loaded: dict[str, Any] | None = schema.load({}, unknown=EXCLUDE)
        except ValidationError:
            loaded = None
        if loaded is not None and not all(isinstance(v, _SCALARS) for v in loaded.values()):
            loaded = None
        _DEFAULTS[key] = loaded
    return _DEFAULTS[key]


_JSON_TYPE = re.compile(r"application/([A-Za-z0-9.!#$&^_-]+\+)?json", re.IGNORECASE)
_PLAIN_JSON = frozenset({None, "", "application/json", "application/json; charset=utf-8"})
"""``Content-Type`` values that need no parsing to be read as JSON in UTF-8: nearly every
body comes with the first (werkzeug's parsing of the header costs a draft 10,000 instructions)."""


def _require_json(raw: bytes, environ: Mapping[str, Any]) -> None:
    """Raise :class:`NotJson` unless the request says its body is JSON (or says nothing),
    in UTF-8 (RFC 8259: JSON exchanged between systems is UTF-8)."""
    if environ.get("CONTENT_TYPE") not in _PLAIN_JSON:  # else parse what it says
        declared = request.mimetype
        if declared and not _JSON_TYPE.fullmatch(declared):
            raise NotJson(f"the body must be JSON (Content-Type: application/json), not {declared}")
        charset = request.mimetype_params.get("charset", "utf-8").lower()
        if charset not in ("utf-8", "utf8"):
            raise NotJson(f"a JSON body is UTF-8, not {charset}")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotJson("a JSON body is UTF-8 (RFC 8259)") from None


def _require_shallow(data: Any, raw: bytes) -> None:
    """Raise :class:`BadRequest` when ``data``, read from ``raw``, nests deeper than
    :data:`MAX_DEPTH` (walked without recursion: arrays and objects only; not walked when
    ``raw`` opens too few of them to nest that deep, as a move's body)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return
    level: list[Any] = [data]
    for _ in range(MAX_DEPTH):
        inner: list[Any] = []
        for value in level:
            if type(value) is list:
                inner.extend(v for v in value if type(v) in (list, dict))
            elif type(value) is dict:
                inner.extend(v for v in value.values() if type(v) in (list, dict))
        if not inner:
            return
        level = inner
    raise BadRequest(
        f"the JSON body nests arrays and objects more than {MAX_DEPTH} levels deep",
        kind="invalid-json",
    )


_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _parse(raw: bytes) -> Any:
    """The JSON value of ``raw`` as the standard library reads it: orjson first (several times
    faster), and the standard library for whatever orjson refuses (NaN, a BOM or UTF-16,
    nesting past orjson's limit, malformed JSON), which then decides and words the error.
    orjson reads an integer beyond 64 bits as a float: a body with 19 digits in a row goes
    to the standard library. Otherwise, where orjson accepts a document, both read the same
    value (``tests/api/test_request_parsing.py``)."""
    if _LONG_DIGITS.search(raw) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(raw)
    except RecursionError:
        raise BadRequest("the JSON body is nested too deeply", kind="invalid-json") from None
    except ValueError as error:
        raise BadRequest(f"the body is not valid JSON: {error}", kind="invalid-json") from None


def _summary(messages: Any, path: str = "") -> str:
    if isinstance(messages, dict):
        parts = [
            _summary(value, f"{path}.{key}" if path else str(key))
            for key, value in messages.items()
        ]
        return "; ".join(parts)
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return f"{path or 'body'}: {' '.join(messages)}"
    if isinstance(messages, list):
        return "; ".join(_summary(m, path) for m in messages)
    return f"{path or 'body'}: {messages}"


def field_errors(messages: Any, path: str = "") -> list[dict[str, str]]:
    """Flatten marshmallow's nested ``messages`` into ``[{"field": "a.0.b", "message": ...}]``.

    The body as a whole (marshmallow's ``_schema``, or a list at the top) is ``"_schema"``.
    """
    if isinstance(messages, dict):
        return [
            error
            for key, value in messages.items()
            for error in field_errors(
                value, path if key == "_schema" else f"{path}.{key}" if path else str(key)
            )
        ]
    if isinstance(messages, list):
        return [error for message in messages for error in field_errors(message, path)]
    return [{"field": path or "_schema", "message": str(messages)}]
