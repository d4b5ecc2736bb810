"""Rate limits (flask-limiter, counted in Redis) and the CORS allowlist (flask-cors).

Rate limits: ``Settings.rate_limit`` (env ``RATE_LIMIT``) in flask-limiter's notation, several
limits separated by ``;`` (``"50/second;1000/minute"``); empty turns limiting off. Each limit
applies twice, across the whole API:

- per client address (``request.remote_addr``; behind a proxy, have the proxy's address
  replaced by the client's before the app sees it, e.g. with Werkzeug's ``ProxyFix``);
- per seat token, for requests that carry ``Authorization: Bearer <token>``. The counter is
  keyed by a SHA-256 digest of the token: the token itself is never stored or logged.
- per app key, for requests that carry ``X-API-Key`` (a backend behind many addresses, or
  many backends behind one, is counted as the one app it is). Keyed by a SHA-256 digest of
  the key, as a token is.

``/healthz``, ``/readyz``, ``/metrics`` (probes, scrapes) and ``OPTIONS`` (CORS preflight) are
not counted. The counters live in the service's Redis (``redis://`` from ``REDIS_URL``, or
``redis+cluster://`` from ``REDIS_CLUSTER_NODES``) under ``referee-limits:``, with fixed
windows, so every instance shares them. A request over a limit answers 429 ``problem+json`` (type
``urn:rummikub-referee:problem:too-many-requests``) with ``Retry-After`` in seconds.

When the counters' Redis cannot be reached, limiting *fails open*: the request goes on (it
then succeeds, or gets the store's own 503), each worker counts in memory meanwhile with the
same limits, logs one warning, and goes back to Redis once it answers again. A storage outage
never turns a request into a 500, and probes keep working. (A Redis Cluster client connects
when it is built: if the cluster cannot be reached when a worker starts, that worker counts in
memory until it restarts.)

CORS: ``Settings.cors_origins`` (env ``CORS_ORIGINS``, comma-separated exact origins such as
``https://play.example.com``) is the allowlist; empty adds no CORS header at all. Allowed
request headers: Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key;
exposed response headers: ETag, Location, Retry-After, Idempotent-Replayed, X-Request-ID
(``Content-Language`` is exposed by CORS itself). No cookies are involved (tokens travel in
``Authorization``), so credentials mode is off.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from flask import Flask, Response, current_app, request
from flask_cors import CORS
from flask_limiter import ApplicationLimit, Limiter, RateLimitExceeded

from service.api.apps import API_KEY_HEADER
from service.api.auth import bearer_token
from service.api.errors import problem_response
from service.config import Settings

__all__ = ["app_key_counter", "init_app", "seat_key"]

KEY_PREFIX = "referee-limits"
NOT_COUNTED = frozenset({"/healthz", "/readyz", "/metrics"})
ALLOWED_HEADERS = ("Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key")
EXPOSED_HEADERS = ("ETag", "Location", "Retry-After", "Idempotent-Replayed", "X-Request-ID")
CORS_METHODS = ("GET", "POST", "PUT", "OPTIONS")
log = logging.getLogger(__name__)


def init_app(app: Flask, *, storage_uri: str) -> None:
    """Install the rate limits and the CORS allowlist that the app's settings ask for; the
    counters are kept at ``storage_uri`` (the service's own Redis or Cluster, as
    :class:`service.bootstrap.Services` names it)."""
    settings: Settings = app.config["REFEREE_SETTINGS"]
    if settings.rate_limit.strip():
        _install_limiter(app, settings, storage_uri)
    if settings.cors_origins:
        CORS(
            app,
            origins=list(settings.cors_origins),
            allow_headers=list(ALLOWED_HEADERS),
            expose_headers=list(EXPOSED_HEADERS),
            methods=list(CORS_METHODS),
            supports_credentials=False,
            max_age=600,
            vary_header=True,
        )


def seat_key(token: str) -> str:
    """Return the counter key of a seat token: a digest, so the token is never stored."""
    return "seat:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]


def app_key_counter(key: str) -> str:
    """Return the counter key of an app's key: a digest, so the key is never stored."""
    return "app:" + hashlib.sha256(key.strip().encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _app_key() -> str:
    key = request.headers.get(API_KEY_HEADER)
    return "app:none" if key is None else app_key_counter(key)


def _address_key() -> str:
    return "addr:" + (request.remote_addr or "unknown")


def _seat_key_or_none() -> str | None:
    token = bearer_token()
    return None if token is None else seat_key(token)


def _seat_key() -> str:
    return _seat_key_or_none() or "seat:none"


def _install_limiter(app: Flask, settings: Settings, storage_uri: str) -> None:
    try:
        limiter = _limiter(settings, storage_uri)
        limiter.init_app(app)
    except Exception as error:  # a Redis Cluster client connects at once: it may be down
        log.warning(
            "rate limit storage unreachable at start (%s): counting in memory in this worker",
            type(error).__name__,
        )
        limiter = _limiter(settings, "memory://")
        limiter.init_app(app)
    limiter.request_filter(_not_counted)
    app.extensions["rate_limiter"] = limiter
    app.register_error_handler(RateLimitExceeded, _too_many_requests)


def _limiter(settings: Settings, uri: str) -> Limiter:
    limits = settings.rate_limit.strip()
    storage_options: dict[str, Any] = {}
    if uri != "memory://":
        storage_options = {
            "key_prefix": KEY_PREFIX,
            "socket_connect_timeout": settings.redis_connect_timeout,
            "socket_timeout": settings.redis_socket_timeout,
        }
    return Limiter(
        key_func=_address_key,
        application_limits=[
            ApplicationLimit(limits, key_function=_address_key, scope="address"),
            ApplicationLimit(
                limits,
                key_function=_seat_key,
                scope="seat",
                exempt_when=lambda: bearer_token() is None,
            ),
            ApplicationLimit(
                limits,
                key_function=_app_key,
                scope="app",
                exempt_when=lambda: request.headers.get(API_KEY_HEADER) is None,
            ),
        ],
        storage_uri=uri,
        storage_options=storage_options,
        strategy="fixed-window",
        headers_enabled=False,  # no extra Redis round trip per answer; 429 says Retry-After
        swallow_errors=True,  # fail open: a storage error never fails the request
        in_memory_fallback_enabled=True,  # ...and each worker counts in memory meanwhile
        in_memory_fallback=[limits],
    )


def _not_counted() -> bool:
    return request.method == "OPTIONS" or request.path in NOT_COUNTED


def _too_many_requests(error: RateLimitExceeded) -> Response:
    limit = error.limit.limit
    retry_after = _retry_after(limit.get_expiry())
    return problem_response(
        429,
        "too-many-requests",
        "Too many requests",
        f"over the limit of {limit}; retry in {retry_after} s",
        headers={"Retry-After": str(retry_after)},
    )


def _retry_after(window_seconds: int) -> int:
    """Seconds until the breached window resets (its full length when unknown), at least 1."""
    limiter: Limiter | None = current_app.extensions.get("rate_limiter")
    current = limiter.current_limit if limiter is not None else None
    try:
        if current is not None and current.breached:
            return min(window_seconds, max(1, math.ceil(current.reset_at - time.time())))
    except Exception:  # the counters' storage went away since the check: use the window
        log.warning("rate limit storage unreachable while computing Retry-After")
    return max(1, window_seconds)
