"""The apps' keys as configured (no Flask: the dispatcher reads the apps' names here too).

``REFEREE_API_KEYS`` holds ``name=key`` pairs, comma-separated; ``REFEREE_API_KEYS_FILE``
names a file of such pairs, one a line (a mounted secret; blank lines and ``#`` comments
are skipped). Both may be given. A key has at least 24 characters. ``REFEREE_SANDBOX_KEYS``
and ``REFEREE_SANDBOX_KEYS_FILE`` name sandbox apps the same way. Only the SHA-256 of each
key is kept; a key sent is compared with every one of them with :func:`hmac.compare_digest`,
with no early exit, so the answer's timing says nothing about which key came close.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from service.config import Settings

__all__ = ["MAX_KEY_LENGTH", "MIN_KEY_LENGTH", "AppKeys", "BadKeyConfig"]

MIN_KEY_LENGTH = 24
MAX_KEY_LENGTH = 256
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_KEY = re.compile(r"^[!-~]+$")  # printable ASCII without spaces


class BadKeyConfig(ValueError):
    """``REFEREE_API_KEYS`` or its file cannot be read; the message never holds a key."""


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
            _pairs("api_keys", settings.api_keys, settings.api_keys_file),
            _pairs("sandbox_keys", settings.sandbox_keys, settings.sandbox_keys_file),
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


def _pairs(setting: str, listed: str, file: str) -> list[tuple[str, str]]:
    """The ``(where, "name=key")`` pairs of ``setting`` (comma-separated) and of the file
    ``setting``_file names; raise :class:`BadKeyConfig` when the file cannot be read."""
    variable = Settings.variable(setting)
    pairs = [
        (f"{variable} entry {number}", pair)
        for number, pair in enumerate(listed.split(","), start=1)
        if pair.strip()
    ]
    if file:
        source = f"{Settings.variable(setting + '_file')} {file}"
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
