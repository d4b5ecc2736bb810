"""What the referee refuses, each with the stable code the API answers with.

Exception tree (beside :class:`service.game.GameError` and :class:`service.rules.IllegalTurn`,
the game's own refusals)::

    RefereeError
    ├── MatchNotFound          match-not-found          no such match (or it expired)
    ├── BadToken               unauthorized             the seat token is missing or unknown
    ├── TokenForAnotherMatch   forbidden                a token of another match
    ├── StaleVersion           stale-version            If-Match names an old version
    ├── IdempotencyMismatch    idempotency-key-reused   a key reused for another request
    ├── HintsOff               hints-off                the match has hints turned off
    ├── NotOwner               not-owner                the app's key, but another app's match
    ├── SeatRequired           seat-required            the app's key, but which seat leaves?
    └── Busy                   busy                     the match kept changing; nothing applied
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "BadToken",
    "Busy",
    "HintsOff",
    "IdempotencyMismatch",
    "MatchNotFound",
    "NotOwner",
    "RefereeError",
    "SeatRequired",
    "StaleVersion",
    "TokenForAnotherMatch",
]


class RefereeError(Exception):
    """Base of the service layer's refusals; ``kind`` is the stable code of each."""

    kind: ClassVar[str] = "referee-error"


class MatchNotFound(RefereeError, LookupError):
    """No match with that id (or it has expired)."""

    kind = "match-not-found"


class BadToken(RefereeError, PermissionError):
    """The seat token is missing or unknown."""

    kind = "unauthorized"


class TokenForAnotherMatch(RefereeError, PermissionError):
    """The token is valid, but for another match."""

    kind = "forbidden"


class StaleVersion(RefereeError):
    """``If-Match`` names a version that is not the current one."""

    kind = "stale-version"

    def __init__(self, current: int) -> None:
        super().__init__(
            f"If-Match names an old version; the match is at version {current}: "
            "reload it and decide again"
        )
        self.current = current


class IdempotencyMismatch(RefereeError, ValueError):
    """An ``Idempotency-Key`` reused for a different request."""

    kind = "idempotency-key-reused"


class HintsOff(RefereeError):
    """The match was created with hints turned off."""

    kind = "hints-off"


class NotOwner(RefereeError, PermissionError):
    """A valid app key, but the match belongs to another app (or to none)."""

    kind = "not-owner"


class SeatRequired(RefereeError, ValueError):
    """The app's key asks a seat to leave without saying which."""

    kind = "seat-required"


class Busy(RefereeError):
    """The match kept changing under us; nothing was applied (retry)."""

    kind = "busy"
