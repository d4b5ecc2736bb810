"""The one error envelope: every failure is ``application/problem+json`` (RFC 9457).

:data:`ANSWERS` is the one table from an exception class to its status and title; an
exception is answered by the first class of its MRO found there, and its problem type ends in
the exception's own ``kind`` (game and referee errors carry theirs). Werkzeug's HTTP errors
(404 unknown route, 405, 413...) are answered here too, so no view needs a try/except.

Only the API's own request errors are raised here: :class:`BadRequest` (400, a malformed
body, query or header) and :class:`NotJson` (415, a body that is not JSON).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, request
from werkzeug.exceptions import HTTPException

from service.api.apps import API_KEY_HEADER, KeyRefused, RefWithoutKey, TestFeaturesOff
from service.api.connections import Refused, ServerBusy, TooManyStreams
from service.api.language import localized
from service.game import (
    BadTimeGift,
    GameError,
    InvalidMatch,
    PassRefused,
    RedealRefused,
    UnknownSeat,
)
from service.jsoncodec import dumps
from service.observability import record_refusal
from service.record import RecordError
from service.referee import (
    BadCursor,
    BadToken,
    Busy,
    HintsOff,
    IdempotencyMismatch,
    MatchNotFound,
    NotOwner,
    OutcomeUnknown,
    RecordNotFound,
    RefereeError,
    SeatRequired,
    StaleVersion,
    StoreUnavailable,
    TokenForAnotherMatch,
)
from service.rules import IllegalTurn
from service.webhooks import BadTarget, DeliveryNotFound, TooManyWebhooks, WebhookNotFound

__all__ = ["ANSWERS", "Answer", "BadRequest", "NotJson", "init_app", "problem_response"]

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:rummikub-referee:problem:"
log = logging.getLogger(__name__)

Details = Callable[[Any], tuple[str, dict[str, Any], dict[str, str]]]
"""From an exception: the detail sentence, extra members, headers."""


class BadRequest(Exception):
    """400: a malformed request (body, query or header); ``kind`` names what is wrong."""

    kind = "bad-request"

    def __init__(self, detail: str, *, kind: str | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.kind = kind or self.kind
        self.extra = extra


class NotJson(BadRequest):
    """415: a body that is not JSON (another media type, or not UTF-8)."""

    kind = "unsupported-media-type"


@dataclass(frozen=True)
class Answer:
    """How an exception class is answered; ``details`` adds to the plain ``str(error)``."""

    status: int
    title: str
    details: Details | None = None


def _plain(error: Exception) -> tuple[str, dict[str, Any], dict[str, str]]:
    return str(error), {}, {}


def _bad_request(error: BadRequest) -> tuple[str, dict[str, Any], dict[str, str]]:
    return str(error), error.extra, {}


def _unauthorized(error: BadToken) -> tuple[str, dict[str, Any], dict[str, str]]:
    return str(error), {}, {"WWW-Authenticate": "Bearer"}


def _key_refused(error: KeyRefused) -> tuple[str, dict[str, Any], dict[str, str]]:
    return str(error), {}, {"WWW-Authenticate": f'ApiKey header="{API_KEY_HEADER}"'}


def _not_found(error: MatchNotFound) -> tuple[str, dict[str, Any], dict[str, str]]:
    return f"there is no match {error} (finished matches expire after a while)", {}, {}


def _stale(error: StaleVersion) -> tuple[str, dict[str, Any], dict[str, str]]:
    current = error.current
    return str(error), {"current_version": current}, {"ETag": f'"{current}"'}


def _busy(error: Busy) -> tuple[str, dict[str, Any], dict[str, str]]:
    return str(error), {}, {"Retry-After": "1"}


def _refused(error: Refused) -> tuple[str, dict[str, Any], dict[str, str]]:
    return str(error), {}, {"Retry-After": str(error.retry_after)}


def _illegal(error: IllegalTurn) -> tuple[str, dict[str, Any], dict[str, str]]:
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
    count = len(violations)
    detail = f"the play breaks {count} rule{'s' if count != 1 else ''}: " + "; ".join(
        v.message for v in error.violations
    )
    return detail, {"violations": violations}, {}


def _unavailable(error: StoreUnavailable) -> tuple[str, dict[str, Any], dict[str, str]]:
    log.warning("storage unavailable: %s", error)
    retry = str(current_app.config["REFEREE_SETTINGS"].retry_after_seconds)
    detail = "the game store cannot be reached right now; nothing was changed: retry later"
    if isinstance(error, OutcomeUnknown):
        detail = (
            "the game store stopped answering while this move was being saved: it may or may "
            "not have been applied. Resend it with the same Idempotency-Key (it is then "
            "applied at most once), or reload the match before deciding again"
        )
    return detail, {}, {"Retry-After": retry}


ANSWERS: dict[type[Exception], Answer] = {
    BadRequest: Answer(400, "Malformed request", _bad_request),
    NotJson: Answer(415, "Unsupported media type", _bad_request),
    RefWithoutKey: Answer(400, "Refs need an app's key"),
    BadToken: Answer(401, "Missing or unknown seat token", _unauthorized),
    KeyRefused: Answer(401, "Missing or unknown API key", _key_refused),
    TokenForAnotherMatch: Answer(403, "Token for another match"),
    NotOwner: Answer(403, "Not this app's match"),
    TestFeaturesOff: Answer(403, "Test features are off"),
    UnknownSeat: Answer(403, "Unknown seat"),
    MatchNotFound: Answer(404, "No such match", _not_found),
    GameError: Answer(409, "Not allowed now"),
    HintsOff: Answer(409, "Hints are off"),
    Busy: Answer(409, "The match is busy", _busy),
    StaleVersion: Answer(412, "The match has changed", _stale),
    InvalidMatch: Answer(422, "Refused"),
    PassRefused: Answer(422, "Refused"),
    RedealRefused: Answer(422, "Refused"),
    BadTimeGift: Answer(400, "Time cannot be given so"),
    IllegalTurn: Answer(422, "The play breaks the rules", _illegal),
    IdempotencyMismatch: Answer(422, "Idempotency-Key reused"),
    SeatRequired: Answer(422, "Which seat?"),
    BadCursor: Answer(422, "Unknown cursor"),
    RecordError: Answer(400, "Not a record that can be read"),
    RecordNotFound: Answer(404, "No such game or turn"),
    BadTarget: Answer(400, "Webhook URL refused"),
    WebhookNotFound: Answer(404, "No such webhook"),
    DeliveryNotFound: Answer(404, "No such delivery"),
    TooManyWebhooks: Answer(422, "Too many webhooks"),
    TooManyStreams: Answer(429, "Too many open streams", _refused),
    ServerBusy: Answer(503, "Too many open streams here", _refused),
    StoreUnavailable: Answer(503, "Storage unavailable", _unavailable),
}

_KINDS = {
    IllegalTurn: "illegal-play",
    StoreUnavailable: "storage-unavailable",
    BadCursor: "bad-cursor",
}


def answer_for(error: Exception) -> tuple[Answer, str] | None:
    """The table's answer for ``error`` (along its MRO) and its problem kind, or ``None``."""
    for cls in type(error).__mro__:
        answer = ANSWERS.get(cls)
        if answer is not None:
            kind = _KINDS.get(cls) or getattr(error, "kind", None) or "internal-error"
            return answer, kind
    return None


def problem_response(
    status: int,
    kind: str,
    title: str,
    detail: str,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A problem+json response, written like every other answer (compact JSON)."""
    body = {"type": TYPE_PREFIX + kind, "title": title, "status": status, "detail": detail}
    body.update(extra or {})
    body, language = localized(body)
    response = Response(dumps(body), status=status, mimetype=PROBLEM_JSON)
    response.headers.update(headers or {})
    response.headers.update({"Content-Language": language, "Vary": "Accept-Language"})
    return response


def _from_table(error: Exception) -> Response:
    found = answer_for(error)
    if found is None:
        return _from_unexpected(error)
    answer, kind = found
    detail, extra, headers = (answer.details or _plain)(error)
    if isinstance(error, IllegalTurn):
        record_refusal(v.code for v in error.violations)
    elif isinstance(error, GameError):
        record_refusal([error.kind])
    return problem_response(answer.status, kind, answer.title, detail, extra, headers)


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
        limit = request.max_content_length or current_app.config["MAX_CONTENT_LENGTH"]
        detail = f"the request body is over {limit} bytes"
    elif status == 404:
        detail = f"there is nothing at {request.path}"
    headers = {k: v for k, v in error.get_headers() if k.lower() in {"allow", "retry-after"}}
    return problem_response(status, kind, title, detail, headers=headers)


def _from_unexpected(error: Exception) -> Response:
    log.exception("unexpected error", exc_info=error)
    return problem_response(500, "internal-error", "Internal error", "an unexpected error occurred")


def init_app(app: Flask) -> None:
    """Register the handlers that turn every failure into problem+json."""
    app.register_error_handler(HTTPException, _from_http)
    for cls in (*ANSWERS, RefereeError):
        app.register_error_handler(cls, _from_table)
    app.register_error_handler(Exception, _from_unexpected)
