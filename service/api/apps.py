"""Apps and their keys: who is calling, server to server (``X-API-Key``).

``REFEREE_API_KEYS`` holds ``name=key`` pairs, comma-separated; ``REFEREE_API_KEYS_FILE``
names a file of such pairs, one a line (a mounted secret; blank lines and ``#`` comments
are skipped). Both may be given. A key has at least 24 characters. ``REFEREE_SANDBOX_KEYS``
and ``REFEREE_SANDBOX_KEYS_FILE`` name sandbox apps the same way: on any server they may use
the test features (:func:`may_use_test_features`) for their own matches. An app is live or
sandbox, never both. Only the SHA-256 of
each key is kept; a key sent is compared with every one of them with
:func:`hmac.compare_digest`, with no early exit, so the answer's timing says nothing
about which key came close. Keys are never logged nor put in an answer.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flask import Flask, current_app, request

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
MIN_KEY_LENGTH = 24
MAX_KEY_LENGTH = 256
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_KEY = re.compile(r"^[!-~]+$")  # printable ASCII without spaces


class BadKeyConfig(ValueError):
    """``REFEREE_API_KEYS`` or its file cannot be read; the message never holds a key."""


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


@dataclass(frozen=True)
class AppKeys:
    """The configured apps: the SHA-256 of each key, with its app's name; ``sandbox``, the
    names of the sandbox apps."""

    _digests: tuple[tuple[bytes, str], ...] = ()
    sandbox: frozenset[str] = frozenset()

    @classmethod
    def parse(
        cls, pairs: Sequence[tuple[str, str]], sandbox_pairs: Sequence[tuple[str, str]] = ()
    ) -> AppKeys:
        """Read ``(where, "name=key")`` pairs of live apps, then of sandbox apps; raise
        :class:`BadKeyConfig` for a bad one, or a name or key given twice."""
        names: set[str] = set()
        digests: dict[bytes, str] = {}
        sandbox: set[str] = set()
        tagged = [(False, *p) for p in pairs] + [(True, *p) for p in sandbox_pairs]
        for in_sandbox, where, pair in tagged:
            name, sep, key = (part.strip() for part in pair.partition("="))
            if not sep or not _NAME.match(name):
                raise BadKeyConfig(
                    f"{where}: expected name=key, the name of letters, digits, '_', '.', '-'"
                )
            if not MIN_KEY_LENGTH <= len(key) <= MAX_KEY_LENGTH or not _KEY.match(key):
                raise BadKeyConfig(
                    f"{where} (app {name!r}): a key is {MIN_KEY_LENGTH}-{MAX_KEY_LENGTH} "
                    "printable ASCII characters without spaces"
                )
            digest = _digest(key)
            if name in names or digest in digests:
                raise BadKeyConfig(
                    f"{where}: app {name!r}, or its key, is named twice"
                    " (an app is live or sandbox, never both)"
                )
            names.add(name)
            digests[digest] = name
            if in_sandbox:
                sandbox.add(name)
        return cls(tuple(digests.items()), frozenset(sandbox))

    @classmethod
    def from_settings(cls, settings: Settings) -> AppKeys:
        """The live apps named by ``api_keys`` and the file ``api_keys_file``, and the
        sandbox apps named by ``sandbox_keys`` and ``sandbox_keys_file``, together."""
        return cls.parse(
            _pairs("REFEREE_API_KEYS", settings.api_keys, settings.api_keys_file),
            _pairs("REFEREE_SANDBOX_KEYS", settings.sandbox_keys, settings.sandbox_keys_file),
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The apps' names, live and sandbox, in the order configured."""
        return tuple(name for _, name in self._digests)

    def is_sandbox(self, name: str | None) -> bool:
        """Whether ``name`` is a sandbox app (``None``, no app, is not)."""
        return name in self.sandbox

    def identify(self, key: str) -> str | None:
        """The name of the app whose key is ``key``, or ``None``."""
        digest = _digest(key)
        found = None
        for stored, name in self._digests:
            if hmac.compare_digest(stored, digest):
                found = name
        return found

    def __repr__(self) -> str:
        return f"AppKeys(apps={list(self.names)!r})"


def _pairs(variable: str, listed: str, file: str) -> list[tuple[str, str]]:
    """The ``(where, "name=key")`` pairs of ``variable`` (comma-separated) and of the file
    ``variable``_FILE names; raise :class:`BadKeyConfig` when the file cannot be read."""
    pairs = [
        (f"{variable} entry {number}", pair)
        for number, pair in enumerate(listed.split(","), start=1)
        if pair.strip()
    ]
    if file:
        source = f"{variable}_FILE {file}"
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise BadKeyConfig(f"{source}: {type(error).__name__}") from None
        pairs += [
            (f"{source} line {number}", line)
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
    return pairs


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


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
