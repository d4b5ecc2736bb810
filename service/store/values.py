"""The values the store takes and hands out: a loaded match, a change to commit, the receipt of
a move's first answer, and an event as stored. They import nothing of Redis."""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service.game import Event, EventType, Match
from service.game.frozen import maker

__all__ = ["Change", "Loaded", "Receipt", "StoredEvent", "change", "loaded_copy"]


@dataclass(frozen=True, slots=True)
class Loaded:
    """A match as stored, the seats' token digests, and the shared clock (Redis ``TIME``).

    ``fresh`` is False for a worker's cached copy, whose version may be behind and whose
    clock is an estimate: a commit computed on it is checked against both. ``read_at`` is when
    that estimate was made, on the worker's monotonic clock (0: not known).
    """

    match: Match
    seats: tuple[str, ...]
    now: float
    fresh: bool = True
    read_at: float = 0.0


@dataclass(frozen=True)
class Receipt:
    """The first answer to an ``Idempotency-Key``: what a resent request gets back."""

    fingerprint: str
    version: int
    drawn: tuple[str, ...]
    view: dict[str, Any]


class _CommitIds:
    """Ids no other commit has: a random prefix drawn once per process (again in a forked
    child) and a count. A commit's id lets its script recognise the same commit sent again
    after a lost answer; it is never a secret, and a count costs less than drawing 12 random
    bytes for every move."""

    def __init__(self) -> None:
        self._draw()
        os.register_at_fork(after_in_child=self._draw)

    def _draw(self) -> None:
        self._prefix = secrets.token_urlsafe(6) + "."  # 48 random bits
        self._count = itertools.count()

    def __call__(self) -> str:
        return self._prefix + str(next(self._count))


_commit_ids = _CommitIds()


@dataclass(frozen=True, slots=True)
class Change:
    """A commit: ``match`` (with ``events``) replaces the version ``before`` (None: a new
    match), computed at ``now``; ``receipt`` is ``(seat, key, receipt)`` to keep, for a
    request that named the version it was computed on (``If-Match``) when ``guarded``.
    ``check_clock``: ``now`` is the worker's estimate, made at ``read_at`` on its monotonic
    clock (0: not known); the commit sends it moved on by the time since, and Redis refuses
    it when that is off its own clock by more than the tolerance. ``previous``: the match the
    change was computed on (version ``before``), when known: a next deadline the same as its
    own is not written again (the commit that stored ``previous`` indexed it)."""

    before: int | None
    match: Match
    seats: tuple[str, ...]
    events: tuple[Event, ...]
    now: float
    check_clock: bool = False
    receipt: tuple[int, str, Receipt] | None = None
    guarded: bool = False
    commit_id: str = field(default_factory=_commit_ids)
    read_at: float = 0.0
    previous: Match | None = None  # the match as stored at ``before``, when the caller holds it


loaded_copy: Callable[[Match, tuple[str, ...], float, bool, float], Loaded] = maker(Loaded)
"""``Loaded(match, seats, now, fresh, read_at)`` made faster (``service.game.frozen``), every
argument given: every request that reads a worker's copy makes one."""
_made_change = maker(Change)


def change(
    before: int | None,
    match: Match,
    seats: tuple[str, ...],
    events: tuple[Event, ...],
    now: float,
    *,
    check_clock: bool = False,
    receipt: tuple[int, str, Receipt] | None = None,
    guarded: bool = False,
    read_at: float = 0.0,
    previous: Match | None = None,
) -> Change:
    """``Change(...)`` made faster (``service.game.frozen``: 13,000 instructions a commit's
    change through the dataclass, 4,000 this way), with a new commit id."""
    return _made_change(
        before,
        match,
        seats,
        events,
        now,
        check_clock,
        receipt,
        guarded,
        _commit_ids(),
        read_at,
        previous,
    )


@dataclass(frozen=True)
class StoredEvent:
    """An event as stored: its version, type and public JSON (one line)."""

    version: int
    type: EventType
    json: str
