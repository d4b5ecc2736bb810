"""Turn deadlines: settling every turn whose time ran out, in order.

When a turn's time runs out, the player's draft is thrown away (its tiles never left
the rack: a draft is only a proposal). With no draft, or a draft that leaves the table
as it was, the player draws 1 tile; with a draft that changed the table, they draw
``rules.failed_turn_penalty`` tiles as a penalty (3, or 1 under seed 002's rules; fewer
when the pool runs out). With an empty pool the expiry counts as
a pass. The next turn's deadline counts from the expired deadline, not from now, so
several turns can expire in one settlement.

Under a bank clock a deadline may be the bank reaching zero: the flag falls. The turn ends as
a timeout all the same (the draft thrown away, the tiles owed drawn; with an empty pool no
pass is counted), then ``flag_fell``: the seat is out of the game, skipped from then on, its
rack charged as a loser's when the game ends. When one seat is left in the game, the game
ends at once and that seat scores as if it had gone out (reason ``flag``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import partial
from typing import Any

from service.game.clocks import flag_falls
from service.game.ending import last_one_in
from service.game.state import EventType, Match, Status, Table, Transition, record
from service.game.turns import end_turn, record_pass, take_from_pool
from service.rules import TurnEnd, set_key

__all__ = ["TIMEOUT_TILES", "advance_clock", "draft_changes_table", "settle"]

TIMEOUT_TILES = 1


def settle(match: Match, *, now: float) -> Transition:
    """Settle every deadline at or before ``now``, oldest first; no events when none is due.

    Each expiry emits ``turn_timed_out`` and then ``drew`` (or ``passed`` with an empty
    pool, which may end the game).
    """
    transition = Transition(match, ())
    while _is_due(transition.match, now):
        transition = transition.then(_expire)
    return transition


def draft_changes_table(draft: Table | None, table: Table) -> bool:
    """Whether ``draft`` is an arrangement other than ``table`` (groups in any tile order)."""
    if draft is None:
        return False
    return Counter(map(set_key, draft)) != Counter(map(set_key, table))


def _is_due(match: Match, now: float) -> bool:
    return (
        match.status is Status.PLAYING
        and match.turn_deadline is not None
        and match.turn_deadline <= now
    )


def _expire(match: Match) -> Transition:
    assert match.turn_deadline is not None
    at, seat = match.turn_deadline, match.current_seat
    reverted = draft_changes_table(match.draft, match.table)
    owed = match.rules.failed_turn_penalty if reverted else TIMEOUT_TILES
    flag = flag_falls(match)
    marked: dict[str, Any] = {"flag": True} if flag else {}
    timed_out = record(
        replace(match, draft=None),
        EventType.TURN_TIMED_OUT,
        at=at,
        seat=seat,
        reverted=reverted,
        penalty=owed,
        **marked,
    )
    if flag:
        return timed_out.then(lambda expired: _flag_fall(expired, seat, owed, at=at))
    if not match.pool:
        return timed_out.then(lambda expired: record_pass(expired, seat, at=at, timed_out=True))
    return timed_out.then(lambda expired: _draw_owed(expired, seat, owed, at=at))


def _draw_owed(match: Match, seat: int, owed: int, *, at: float) -> Transition:
    taken, drawn = take_from_pool(match, seat, owed)
    return end_turn(taken, seat, EventType.DREW, at=at, ended=TurnEnd.TIMEOUT, count=len(drawn))


def _flag_fall(match: Match, seat: int, owed: int, *, at: float) -> Transition:
    """``seat``'s bank reached zero: it draws what the timeout owes and is out of the game."""
    if match.pool:
        match, drawn = take_from_pool(match, seat, owed)
    else:
        drawn = ()
    out = replace(match, flagged=tuple(sorted((*match.flagged, seat))))
    left = out.in_game
    game_end = partial(last_one_in, seat=left[0], at=at) if len(left) == 1 else None
    return end_turn(
        out, seat, EventType.FLAG_FELL, at=at, game_end=game_end, ended=TurnEnd.FLAG,
        count=len(drawn),
    )  # fmt: skip


def advance_clock(match: Match, seconds: float, *, at: float) -> Transition:
    """Test mode: run ``match``'s clock ``seconds`` ahead from ``at`` (its time now).

    Emits ``clock_advanced``; the caller then settles what falls due by ``at + seconds``
    (:func:`settle`), each expiry at its own deadline, as if the time had passed.
    """
    offset = match.clock_offset + seconds
    return record(
        replace(match, clock_offset=offset),
        EventType.CLOCK_ADVANCED,
        at=at,
        seat=None,
        seconds=seconds,
        offset=offset,
    )
