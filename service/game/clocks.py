"""The bank clock of a match (SPEC section 6): each player's bank, flag fall, giving time.

``Match.banks`` holds each seat's bank: for the seat to move, as it stood when its turn
began (the turn's time is charged when the turn ends); for the others, what they have left.
It is empty under a per-turn clock. A turn's deadline is the moment its bank reaches zero
(:meth:`service.rules.Clock.zero_after`), or the per-turn cap when ``turn_seconds`` is given
and comes first. At a deadline that is the bank's zero the flag falls
(:func:`service.game.timers.settle` ends the turn as a timeout and the seat is out of the
game: ``Match.flagged``).

Every turn-ending event of a bank-clock match carries ``used`` (what the turn cost the bank),
``increment`` (what it earned) and ``time_left`` (every seat's bank after it), so that
``used + left + given == bank + increments`` can be checked from the log.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service.game.errors import BadTimeGift, RuleNotInForce, UnknownSeat, WrongPhase
from service.game.state import EventType, Match, Status, Transition, record
from service.rules import Rules, TurnEnd

__all__ = [
    "MAX_GIFT_SECONDS",
    "charge_turn",
    "flag_falls",
    "give_time",
    "starting_banks",
    "time_left",
    "turn_deadline",
]

MAX_GIFT_SECONDS = 3600


def starting_banks(rules: Rules, seats: int) -> tuple[float, ...]:
    """Every seat's bank at the start of a game (none under a per-turn clock)."""
    if not rules.clock.is_bank:
        return ()
    return (float(rules.clock.bank_seconds),) * seats


def turn_deadline(rules: Rules, banks: tuple[float, ...], seat: int, at: float) -> float | None:
    """When the turn of ``seat`` that starts ``at`` ends unless the player ends it: the cap of
    ``turn_seconds``, or the moment the bank reaches zero, whichever comes first (None: never)."""
    cap = at + rules.turn_seconds if rules.turn_seconds else None
    if not banks:
        return cap
    zero = at + rules.clock.zero_after(banks[seat])
    return zero if cap is None else min(cap, zero)


def flag_falls(match: Match) -> bool:
    """Whether the running turn's deadline is its bank reaching zero (not the per-turn cap)."""
    if not match.banks or match.turn_deadline is None:
        return False
    zero = match.turn_started + match.rules.clock.zero_after(match.banks[match.current_seat])
    return match.turn_deadline >= zero


def charge_turn(
    match: Match, seat: int, *, at: float, ended: TurnEnd
) -> tuple[Match, dict[str, Any]]:
    """Charge ``seat``'s bank for its turn, which started at ``match.turn_started`` and ended
    ``at`` as ``ended``; return the match and the event data that says so (none under a
    per-turn clock)."""
    if not match.banks:
        return match, {}
    clock = match.rules.clock
    before = match.banks[seat]
    used = max(0.0, at - match.turn_started)
    after = clock.after_turn(before, used, ended)
    increment = clock.increment_seconds if ended is TurnEnd.PLAYER else 0
    banks = _with(match.banks, seat, after)
    return replace(match, banks=banks), {
        "used": before + increment - after,
        "increment": increment,
        "time_left": list(banks),
    }


def time_left(match: Match, *, now: float) -> list[float] | None:
    """Every seat's bank as of ``now``: the seat to move's counts down (None: per-turn clock)."""
    if not match.banks:
        return None
    if match.status is not Status.PLAYING:
        return list(match.banks)
    seat, clock = match.current_seat, match.rules.clock
    running = clock.running(match.banks[seat], now - match.turn_started)
    return list(_with(match.banks, seat, running))


def give_time(match: Match, seat: int, seconds: int, *, by: int | None, now: float) -> Transition:
    """Add ``seconds`` to ``seat``'s bank, given by the seat ``by`` (None: the match's owner);
    emits ``time_given``. The deadline of a running turn moves with its bank.

    Raises :class:`UnknownSeat` for a seat the match lacks, :class:`RuleNotInForce` under a
    per-turn clock, :class:`WrongPhase` unless a game
    is being played and ``seat`` is still in it, :class:`BadTimeGift` for a seat giving
    itself time or seconds outside 1 to :data:`MAX_GIFT_SECONDS`.
    """
    if not 0 <= seat < len(match.players):
        raise UnknownSeat(f"this match has seats 0 to {len(match.players) - 1}, not {seat}")
    if not match.rules.clock.is_bank:
        raise RuleNotInForce("this match keeps time per turn: there is no bank to give time to")
    if by == seat:
        raise BadTimeGift("a seat cannot give itself time")
    if not 1 <= seconds <= MAX_GIFT_SECONDS:
        raise BadTimeGift(f"time is given in whole seconds, 1 to {MAX_GIFT_SECONDS}")
    if match.status is not Status.PLAYING:
        raise WrongPhase("time can be given only while a game is being played")
    if seat in match.flagged:
        raise WrongPhase(f"seat {seat}'s flag has fallen: it is out of this game")
    banks = _with(match.banks, seat, match.banks[seat] + seconds)
    changes: dict[str, Any] = {"banks": banks}
    if seat == match.current_seat:
        changes["turn_deadline"] = turn_deadline(match.rules, banks, seat, match.turn_started)
    given = replace(match, **changes)
    return record(
        given,
        EventType.TIME_GIVEN,
        at=now,
        seat=seat,
        seconds=seconds,
        by_seat=by,
        time_left=time_left(given, now=now),
        turn_deadline=given.turn_deadline,
    )


def _with(banks: tuple[float, ...], seat: int, value: float) -> tuple[float, ...]:
    return (*banks[:seat], value, *banks[seat + 1 :])
