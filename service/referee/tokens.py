"""Seat tokens: ``<match id>.<secret>``; only their SHA-256 is stored, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Sequence

from service.referee.errors import BadToken, TokenForAnotherMatch

__all__ = ["digest", "new_token", "seat_of", "with_digests"]


def new_token(match_id: str) -> str:
    """A fresh token for a seat of ``match_id``."""
    return f"{match_id}.{secrets.token_urlsafe(24)}"


def digest(token: str) -> str:
    """What is stored of ``token``."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def with_digests(seats: tuple[str, ...], tokens: dict[int, str]) -> tuple[str, ...]:
    """The seats' token digests with those of ``tokens`` replaced."""
    return tuple(
        digest(tokens[seat]) if seat in tokens else stored for seat, stored in enumerate(seats)
    )


def seat_of(
    match_id: str,
    seats: Sequence[str],
    token: str | None,
    *,
    seats_of: Callable[[str], Sequence[str]],
) -> int:
    """The seat ``token`` opens among ``seats`` (the digests of ``match_id``'s seats).

    Raises BadToken (none, or unknown), TokenForAnotherMatch (one of the seats of the match
    its prefix names, as ``seats_of`` tells)."""
    if not token:
        raise BadToken("a seat token is required: send Authorization: Bearer <token>")
    hashed = digest(token)
    found = None
    for seat, stored in enumerate(seats):
        if hmac.compare_digest(stored, hashed):
            found = seat
    if found is not None:
        return found
    owner = token.partition(".")[0]
    if (
        owner
        and owner != match_id
        and len(owner) <= 64
        and any(hmac.compare_digest(h, hashed) for h in seats_of(owner))
    ):
        raise TokenForAnotherMatch("this token belongs to another match")
    raise BadToken("the seat token is not valid for this match")
