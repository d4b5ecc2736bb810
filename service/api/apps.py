"""Apps and their keys: who is calling, server to server (``X-API-Key``).

``REFEREE_API_KEYS`` holds ``name=key`` pairs, comma-separated; ``REFEREE_API_KEYS_FILE``
names a file of such pairs, one a line (a mounted secret; blank lines and ``#`` comments
are skipped). Both may be given. A key has at least 24 characters. Only the SHA-256 of
each key is kept; a key sent is compared with every one of them with
:func:`hmac.compare_digest`, with no early exit, so the answer's timing says nothing
about which key came close. Keys are never logged nor put in an answer.
"""

from __future__ import annotations

import hashlib
import hmac
import re
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
    "UnknownApiKey",
    "calling_app",
    "creating_app",
    "init_app",
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


@dataclass(frozen=True)
class AppKeys:
    """The configured apps: the SHA-256 of each key, with its app's name."""

    _digests: tuple[tuple[bytes, str], ...] = ()

    @classmethod
    def parse(cls, pairs: list[tuple[str, str]]) -> AppKeys:
        """Read ``(where, "name=key")`` pairs; raise :class:`BadKeyConfig` for a bad one."""
        names: set[str] = set()
        digests: dict[bytes, str] = {}
        for where, pair in pairs:
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
                raise BadKeyConfig(f"{where}: app {name!r}, or its key, is named twice")
            names.add(name)
            digests[digest] = name
        return cls(tuple(digests.items()))

    @classmethod
    def from_settings(cls, settings: Settings) -> AppKeys:
        """The apps named by ``api_keys`` and by the file ``api_keys_file``, together."""
        pairs = [
            (f"REFEREE_API_KEYS entry {number}", pair)
            for number, pair in enumerate(settings.api_keys.split(","), start=1)
            if pair.strip()
        ]
        if settings.api_keys_file:
            source = f"REFEREE_API_KEYS_FILE {settings.api_keys_file}"
            try:
                text = Path(settings.api_keys_file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise BadKeyConfig(f"{source}: {type(error).__name__}") from None
            pairs += [
                (f"{source} line {number}", line)
                for number, line in enumerate(text.splitlines(), start=1)
                if line.strip() and not line.lstrip().startswith("#")
            ]
        return cls.parse(pairs)

    @property
    def names(self) -> tuple[str, ...]:
        """The apps' names, in the order configured."""
        return tuple(name for _, name in self._digests)

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
    keys: AppKeys = current_app.extensions["app_keys"]
    name = keys.identify(key.strip())
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
