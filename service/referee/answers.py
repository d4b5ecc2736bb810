"""What the referee takes and gives: the guards of a move, and the answers of its use cases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.game import Match
from service.game.frozen import maker
from service.referee.errors import StaleVersion
from service.store import Receipt

__all__ = ["NO_GUARDS", "Created", "Guards", "Idempotency", "Moved", "Rematched", "moved"]


@dataclass(frozen=True)
class Idempotency:
    """An ``Idempotency-Key`` and the fingerprint of the request that carried it."""

    key: str
    fingerprint: str


@dataclass(frozen=True)
class Guards:
    """What guards a move: ``if_match``, the version the client decided on (``If-Match``), and
    ``idempotency``, the key that makes a resent move answer as the first did."""

    if_match: int | None = None
    idempotency: Idempotency | None = None

    @property
    def versioned(self) -> bool:
        """Whether the move holds only at the version ``If-Match`` names."""
        return self.if_match is not None

    def require_version(self, version: int, *, moved: bool = False) -> None:
        """Raise StaleVersion unless the match at ``version`` is the one ``If-Match`` names;
        ``moved``: time moved the match on (a turn timed out, bots played), so the version the
        client decided on is no longer the match's, whatever is stored."""
        if self.if_match is not None and (moved or self.if_match != version):
            raise StaleVersion(version)


NO_GUARDS = Guards()


@dataclass(frozen=True)
class Created:
    """A new match and the seats' tokens (shown once)."""

    match: Match
    tokens: tuple[str, ...]
    now: float


@dataclass(frozen=True, slots=True)
class Moved:
    """The answer to a move: the version it made, the match as the mover sees it, the tile
    codes the mover drew; ``replayed`` when it is the kept first answer to its key."""

    version: int
    render: Callable[[], dict[str, Any]]  # the view, made only when asked for (see ``view``)
    drawn: tuple[str, ...] = ()
    replayed: bool = False

    @property
    def view(self) -> dict[str, Any]:
        """The match as the mover sees it (an answer with ``Prefer: return=minimal`` never
        asks, and the view is not made)."""
        return self.render()

    @classmethod
    def kept(cls, receipt: Receipt, *, replayed: bool = False) -> Moved:
        """The answer a receipt keeps."""
        return moved(receipt.version, lambda: receipt.view, receipt.drawn, replayed)


moved = maker(Moved)  # made on every move (service.game.frozen)


@dataclass(frozen=True)
class Rematched:
    """A rematch, whether this call created it, and fresh tokens for the seats it shows."""

    match: Match
    tokens: dict[int, str]
    created: bool
    now: float
