"""Reading the request headers that identify and guard a move."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from flask import request

from service.api.connections import request_body
from service.api.context import request_environ
from service.api.errors import BadRequest
from service.referee import NO_GUARDS, Guards, Idempotency

__all__ = [
    "bearer_token",
    "check_prefer",
    "guards",
    "idempotency",
    "if_match",
    "if_none_match",
    "prefers_minimal",
]

MAX_KEY_LENGTH = 128


Environ = Mapping[str, Any]
"""The request's WSGI environ, which each reader here takes when the caller holds it: every
``request.environ`` goes through Flask's context proxy (three Python calls), and a move read it
seven times (``environ`` None: read it from Flask's context, ``service.api.context``)."""


def bearer_token(environ: Environ | None = None) -> str | None:
    """Return the token of ``Authorization: Bearer <token>``, or ``None`` when absent."""
    header: str = (request_environ() if environ is None else environ).get(
        "HTTP_AUTHORIZATION", ""
    )  # what request.headers reads
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _version(header: str, value: str | None) -> int | None:
    if value is None:
        return None
    text = value.strip()
    if text.startswith("W/"):
        text = text[2:]
    text = text.strip('"')
    if not text.isdigit() or not text.isascii() or len(text) > 18:
        raise BadRequest(f'{header} must be a match version such as "12"', kind="bad-header")
    return int(text)


def guards(environ: Environ | None = None) -> Guards:
    """Return what guards a move: its ``If-Match`` and ``Idempotency-Key`` (and check its
    ``Prefer``: a refusal must come before the move acts)."""
    if environ is None:
        environ = request_environ()
    if (  # none of them sent (nearly every move): nothing to read
        "HTTP_IF_MATCH" not in environ
        and "HTTP_IDEMPOTENCY_KEY" not in environ
        and "HTTP_PREFER" not in environ
    ):
        return NO_GUARDS
    check_prefer(environ)
    if_matched, idempotent = if_match(environ), idempotency(environ)
    if if_matched is None and idempotent is None:
        return NO_GUARDS
    return Guards(if_match=if_matched, idempotency=idempotent)


def if_match(environ: Environ | None = None) -> int | None:
    """Return the version named by ``If-Match`` (``"12"``, ``W/"12"`` or ``12``)."""
    return _version(
        "If-Match", (request_environ() if environ is None else environ).get("HTTP_IF_MATCH")
    )


def if_none_match() -> int | None:
    """Return the version named by ``If-None-Match``; ``None`` for absent or ``*``."""
    value = request_environ().get("HTTP_IF_NONE_MATCH")
    if value is None or value.strip() == "*":
        return None
    return _version("If-None-Match", value)


MAX_PREFER_LENGTH = 256
_PREFER = re.compile(r"[ -~]*")  # printable ASCII and spaces: no TAB, no control character


def check_prefer(environ: Environ | None = None) -> None:
    """Raise :class:`BadRequest` (``bad-header``) for a ``Prefer`` header beyond what the
    contract states: over :data:`MAX_PREFER_LENGTH` characters, or other than printable
    ASCII and spaces. Checked before a move acts, so a refusal never follows a move applied."""
    header = (request_environ() if environ is None else environ).get("HTTP_PREFER")
    if header is None:
        return
    if len(header) > MAX_PREFER_LENGTH or _PREFER.fullmatch(header) is None:
        raise BadRequest(
            f"Prefer must be at most {MAX_PREFER_LENGTH} printable ASCII characters "
            "(such as return=minimal)",
            kind="bad-header",
        )


def prefers_minimal(environ: Environ | None = None) -> bool:
    """Whether the request asks ``Prefer: return=minimal`` (RFC 7240): the move's answer is
    then a 204 with the version in its ``ETag``, without the view. Any other preference, or a
    ``Prefer`` this does not read, leaves the full answer (a preference may be ignored)."""
    # what request.headers reads, less the wrapping
    header = (request_environ() if environ is None else environ).get("HTTP_PREFER")
    if not isinstance(header, str):
        return False
    for preference in header.split(","):
        name, _, value = preference.partition(";")[0].partition("=")
        if name.strip().lower() == "return" and value.strip().strip('"').lower() == "minimal":
            return True
    return False


def idempotency(environ: Environ | None = None) -> Idempotency | None:
    """Return the ``Idempotency-Key`` with a fingerprint of the request it came with."""
    key = (request_environ() if environ is None else environ).get("HTTP_IDEMPOTENCY_KEY")
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isprintable() or not key.isascii():
        raise BadRequest(
            f"Idempotency-Key must be 1-{MAX_KEY_LENGTH} printable ASCII characters",
            kind="bad-header",
        )
    digest = hashlib.sha256()
    digest.update(f"{request.method} {request.path}\n".encode())
    digest.update(_canonical(request_body()))
    return Idempotency(key, digest.hexdigest())


def _canonical(raw: bytes) -> bytes:
    """The body with insignificant whitespace and key order removed, when it is JSON."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":")).encode()
    except (ValueError, RecursionError):
        return raw
