"""Apps and their keys: who is calling, server to server (``X-API-Key``).

The keys are configured as :mod:`service.appkeys` reads them: live apps, and sandbox apps,
which on any server may use the test features (:func:`may_use_test_features`) for their own
matches. An app is live or sandbox, never both. Keys are never logged nor put in an answer.
"""

from __future__ import annotations

from flask import Flask, current_app, request

from service.appkeys import MIN_KEY_LENGTH, AppKeys, BadKeyConfig
from service.config import Settings

__all__ = [
    "API_KEY_HEADER",
    "MIN_KEY_LENGTH",
    "ApiKeyRequired",
    "AppKeys",
    "BadKeyConfig",
    "KeyRefused",
    "RefWithoutKey",
    "TestFeaturesOff",
    "UnknownApiKey",
    "calling_app",
    "creating_app",
    "init_app",
    "is_sandbox",
    "may_use_test_features",
    "required_app",
]

API_KEY_HEADER = "X-API-Key"


class KeyRefused(PermissionError):
    """401: the request names no app it may act for; ``kind`` says why."""

    kind = "api-key-refused"


class UnknownApiKey(KeyRefused):
    """``X-API-Key`` holds a key no app has."""

    kind = "unknown-api-key"


class RefWithoutKey(ValueError):
    """Players' refs sent without an app's key (a ref is the app's id for its user)."""

    kind = "ref-without-key"


class ApiKeyRequired(KeyRefused):
    """The operation needs an app's key and the request has none."""

    kind = "api-key-required"


class TestFeaturesOff(PermissionError):
    """403: a test feature asked for by a live app on a server not in test mode."""

    kind = "test-features-off"


def init_app(app: Flask) -> None:
    """Read the apps' keys from the app's settings; raise :class:`BadKeyConfig` if malformed."""
    app.extensions["app_keys"] = AppKeys.from_settings(app.config["REFEREE_SETTINGS"])


def calling_app() -> str | None:
    """The app whose key came in ``X-API-Key``, or ``None`` without the header.

    Raises :class:`UnknownApiKey` (401) for a key no app has.
    """
    key = request.headers.get(API_KEY_HEADER)
    if key is None:
        return None
    name = _keys().identify(key.strip())
    if name is None:
        raise UnknownApiKey(f"the {API_KEY_HEADER} header does not hold the key of any app")
    return name


def required_app() -> str:
    """The calling app; raises :class:`KeyRefused` (401) without a valid ``X-API-Key``."""
    name = calling_app()
    if name is None:
        raise ApiKeyRequired(f"this needs an app's key: send {API_KEY_HEADER}: <key>")
    return name


def creating_app(*, refs: bool) -> str | None:
    """The app creating a match (``None``: anonymous), for a body with players' ``refs`` or
    not. Raises :class:`UnknownApiKey`, :class:`ApiKeyRequired` when anonymous matches are
    off, :class:`RefWithoutKey` (400) for refs without a key."""
    app = calling_app()
    if app is None and not current_app.config["REFEREE_SETTINGS"].anonymous_matches:
        raise ApiKeyRequired(
            f"this referee creates matches for apps only: send {API_KEY_HEADER}: <key>"
        )
    if app is None and refs:
        raise RefWithoutKey(f"players' refs are an app's ids: send {API_KEY_HEADER}: <key>")
    return app


def _keys() -> AppKeys:
    keys: AppKeys = current_app.extensions["app_keys"]
    return keys


def is_sandbox(app: str | None) -> bool:
    """Whether ``app`` (a calling app's name, or ``None``) is a sandbox app."""
    return _keys().is_sandbox(app)


def may_use_test_features(app: str | None) -> bool:
    """Whether a request of ``app`` (the calling app's name; ``None``: no key) may use the test
    features: ``seed``, ``setup``, ``from_record``, ``scenario``, the match clock and webhook
    test events. Always in test mode (``REFEREE_TEST_MODE=1``); on any other server only a
    sandbox app may, and only for its own matches (the caller checks the owner)."""
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    return settings.test_mode or _keys().is_sandbox(app)
