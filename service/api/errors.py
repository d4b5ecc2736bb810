"""The one error envelope: every failure is ``application/problem+json`` (RFC 9457).

Exception tree::

    Problem                  an answer other than success, with its status and type
    ├── BadRequest           400 malformed JSON or a body that fails its schema
    ├── Unauthorized         401 missing or unknown seat token
    ├── Forbidden            403 a token for another match
    ├── NotFound             404 unknown match
    ├── Conflict             409 not your turn, wrong phase
    ├── PreconditionFailed   412 stale If-Match
    ├── Unprocessable        422 a move that breaks a rule
    └── Unavailable          503 storage unavailable (with Retry-After)

Werkzeug's HTTP errors (404 unknown route, 405, 413) and Redis connection
errors are mapped here too, so no view needs a try/except.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, current_app, request
from redis.exceptions import RedisClusterException, RedisError
from werkzeug.exceptions import HTTPException

from service.api.language import localized
from service.game import GameError, InvalidMatch, PassRefused, UnknownSeat
from service.jsoncodec import dumps
from service.observability import record_refusal
from service.referee import (
    BadToken,
    HintsOff,
    IdempotencyMismatch,
    MatchNotFound,
    RefereeError,
    StaleVersion,
    TokenForAnotherMatch,
)
from service.rules import IllegalTurn

__all__ = [
    "BadRequest",
    "Conflict",
    "Forbidden",
    "NotFound",
    "PreconditionFailed",
    "Problem",
    "Unauthorized",
    "Unavailable",
    "Unprocessable",
    "init_app",
    "problem_response",
]

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:rummikub-referee:problem:"
log = logging.getLogger(__name__)


class Problem(Exception):
    """An error answer: ``status``, a stable ``kind`` (the end of its ``type``), a ``detail``."""

    status = 500
    kind = "internal-error"
    title = "Internal error"

    def __init__(
        self, detail: str, *, kind: str | None = None, title: str | None = None, **extra: Any
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.kind = kind or self.kind
        self.title = title or self.title
        self.extra = extra
        self.headers: dict[str, str] = {}


class BadRequest(Problem):
    status, kind, title = 400, "bad-request", "Malformed request"


class Unauthorized(Problem):
    status, kind, title = 401, "unauthorized", "Missing or unknown seat token"


class Forbidden(Problem):
    status, kind, title = 403, "forbidden", "Token for another match"


class NotFound(Problem):
    status, kind, title = 404, "not-found", "Not found"


class Conflict(Problem):
    status, kind, title = 409, "conflict", "Not allowed now"


class PreconditionFailed(Problem):
    status, kind, title = 412, "stale-version", "The match has changed"


class Unprocessable(Problem):
    status, kind, title = 422, "illegal-move", "The move breaks a rule"


class Unavailable(Problem):
    status, kind, title = 503, "storage-unavailable", "Storage unavailable"


def problem_response(
    status: int,
    kind: str,
    title: str,
    detail: str,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """Return a problem+json response."""
    body = {"type": TYPE_PREFIX + kind, "title": title, "status": status, "detail": detail}
    body.update(extra or {})
    body, language = localized(body)
    response = Response(dumps(body) + b"\n", status=status, mimetype=PROBLEM_JSON)
    response.headers.update(headers or {})
    response.headers.update({"Content-Language": language, "Vary": "Accept-Language"})
    return response


def _from_problem(error: Problem) -> Response:
    return problem_response(
        error.status, error.kind, error.title, error.detail, error.extra, error.headers
    )


_HTTP_KINDS = {
    400: ("bad-request", "Malformed request"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    413: ("body-too-large", "Request body too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    429: ("too-many-requests", "Too many requests"),
}


def _from_http(error: HTTPException) -> Response:
    status = error.code or 500
    kind, title = _HTTP_KINDS.get(status, ("http-error", error.name))
    detail = error.description or title
    if status == 413:
        detail = f"the request body is over {current_app.config['MAX_CONTENT_LENGTH']} bytes"
    elif status == 404:
        detail = f"there is nothing at {request.path}"
    headers = {k: v for k, v in error.get_headers() if k.lower() in {"allow", "retry-after"}}
    return problem_response(status, kind, title, detail, headers=headers)


def _from_redis(error: RedisError | RedisClusterException) -> Response:
    log.warning("storage unavailable: %s", type(error).__name__)
    retry = str(current_app.config["REFEREE_SETTINGS"].retry_after_seconds)
    return problem_response(
        503,
        "storage-unavailable",
        "Storage unavailable",
        "the game store cannot be reached right now; a move sent now may or may not have been "
        "applied: retry it with the same Idempotency-Key, which never applies it twice",
        headers={"Retry-After": retry},
    )


def _from_game(error: GameError) -> Response:
    record_refusal([error.kind])
    status = 422 if isinstance(error, PassRefused | InvalidMatch) else 409
    if isinstance(error, UnknownSeat):
        status = 403
    title = {409: "Not allowed now", 422: "Refused", 403: "Unknown seat"}[status]
    return problem_response(status, error.kind, title, str(error))


def _from_illegal(error: IllegalTurn) -> Response:
    violations = [
        {
            "code": v.code,
            "message": v.message,
            "set_index": v.set_index,
            "tiles": list(v.tiles),
            "params": v.params,
        }
        for v in error.violations
    ]
    record_refusal(v.code for v in error.violations)
    count = len(violations)
    detail = f"the play breaks {count} rule{'s' if count != 1 else ''}: " + "; ".join(
        v.message for v in error.violations
    )
    return problem_response(
        422, "illegal-play", "The play breaks the rules", detail, {"violations": violations}
    )


def _from_referee(error: RefereeError) -> Response:
    if isinstance(error, MatchNotFound):
        return problem_response(
            404,
            "match-not-found",
            "No such match",
            f"there is no match {error} (finished matches expire after a while)",
        )
    if isinstance(error, BadToken):
        return problem_response(
            401,
            "unauthorized",
            "Missing or unknown seat token",
            str(error),
            headers={"WWW-Authenticate": "Bearer"},
        )
    if isinstance(error, TokenForAnotherMatch):
        return problem_response(403, "forbidden", "Token for another match", str(error))
    if isinstance(error, StaleVersion):
        return problem_response(
            412,
            "stale-version",
            "The match has changed",
            f"If-Match names an old version; the match is at version {error.current}: "
            "reload it and decide again",
            {"current_version": error.current},
            headers={"ETag": f'"{error.current}"'},
        )
    if isinstance(error, HintsOff):
        return problem_response(409, "hints-off", "Hints are off", str(error))
    if isinstance(error, IdempotencyMismatch):
        return problem_response(422, "idempotency-key-reused", "Idempotency-Key reused", str(error))
    return problem_response(
        409,
        "busy",
        "The match is busy",
        "the match kept changing while this request was applied; nothing was changed, retry",
        headers={"Retry-After": "1"},
    )


def _from_unexpected(error: Exception) -> Response:
    log.exception("unexpected error", exc_info=error)
    return problem_response(500, "internal-error", "Internal error", "an unexpected error occurred")


def init_app(app: Flask) -> None:
    """Register the handlers that turn every failure into problem+json."""
    app.register_error_handler(Problem, _from_problem)
    app.register_error_handler(HTTPException, _from_http)
    app.register_error_handler(RedisError, _from_redis)
    app.register_error_handler(RedisClusterException, _from_redis)
    app.register_error_handler(GameError, _from_game)
    app.register_error_handler(IllegalTurn, _from_illegal)
    app.register_error_handler(RefereeError, _from_referee)
    app.register_error_handler(Exception, _from_unexpected)
