"""Committing what a use case decided: the :class:`Change` computed on a loaded match, and the
one retry loop of the use cases (a commit that loses a race is computed again on the fresh
state, a bounded number of times, so that no update is lost and a move that has become illegal
meanwhile is refused instead of applied twice)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from service.game import Transition
from service.referee.errors import Busy
from service.store import Change, Loaded, Receipt, Stale, change

__all__ = ["MAX_ATTEMPTS", "Reload", "change_of", "game_now", "retrying"]

MAX_ATTEMPTS = 12
R = TypeVar("R")


class Reload(Exception):
    """Raised by an attempt judged on a worker's cached copy: judge again on a fresh one."""


def retrying(
    load: Callable[[], Loaded],
    attempt: Callable[[Loaded], R],
    *,
    first: Loaded | None = None,
    take_answer: bool = False,
) -> R:
    """``attempt(loaded)`` on the match ``load`` reads (``first``, when given, the first time)
    until it returns.

    An attempt that raises :class:`Reload` is made again at once on a fresh load; one that
    raises :class:`~service.store.Stale` (its commit lost a race) again after a short random
    back-off, or, with ``take_answer``, at once on the match the first commit's answer carried
    (the worker's copy was behind). Raise Busy when :data:`MAX_ATTEMPTS` are used up.
    """
    loaded = first
    for number in range(MAX_ATTEMPTS):
        if loaded is None:
            loaded = load()
        try:
            return attempt(loaded)
        except Reload:
            loaded = None
        except Stale as stale:
            loaded = stale.fresh if take_answer and number == 0 else None
            if loaded is None:
                _back_off(number)
    raise Busy("the match kept changing while this request was applied; nothing was changed, retry")


def change_of(
    loaded: Loaded,
    transition: Transition,
    *,
    seats: tuple[str, ...] | None = None,
    receipt: tuple[int, str, Receipt] | None = None,
    guarded: bool = False,
) -> Change:
    """The commit of ``transition``, computed on ``loaded`` (its clock checked when that is
    the worker's copy, whose clock is an estimate), with the seats' digests ``seats`` when
    they change."""
    return change(
        loaded.match.version,
        transition.match,
        loaded.seats if seats is None else seats,
        transition.events,
        loaded.now,
        check_clock=not loaded.fresh,
        receipt=receipt,
        guarded=guarded,
        read_at=loaded.read_at,
        previous=loaded.match,
    )


def game_now(loaded: Loaded) -> float:
    """The match's own clock: the shared one, ahead by what test mode advanced it."""
    return loaded.now + loaded.match.clock_offset


def _back_off(attempt: int) -> None:
    """Sleep a short random while after losing a race, so racers spread out."""
    time.sleep(random.uniform(0, min(0.05, 0.002 * 2**attempt)))
