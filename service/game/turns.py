"""A player's turn: play, draw or pass, and the draft they share while they think.

Each action checks, in order: the seat exists (:class:`UnknownSeat`), a game is being
played (:class:`WrongPhase`), it is that seat's turn (:class:`NotYourTurn`) and the
turn's deadline has not passed (:class:`DeadlinePassed`: apply :func:`settle` first).
A refused action raises and returns nothing: the match the caller holds is unchanged
and the turn goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from service.game.clocks import charge_turn, turn_deadline
from service.game.ending import stalemate, went_out
from service.game.errors import (
    DeadlinePassed,
    MatchCanceled,
    NotYourTurn,
    PassRefused,
    PoolEmpty,
    PoolNotEmpty,
    UnknownSeat,
    WrongPhase,
)
from service.game.memo import per_object
from service.game.state import (
    CanPlay,
    Ending,
    EventType,
    Match,
    Status,
    Table,
    Transition,
    as_table,
    evolver,
    made_event,
    made_transition,
    record,
    sorted_rack,
    table_codes,
)
from service.rules import (
    IllegalTurn,
    StalemateEnd,
    Tile,
    TurnEnd,
    check_conservation,
    check_turn,
    codes_of,
    conserves,
    tiles_of,
)

__all__ = [
    "draw",
    "end_turn",
    "pass_turn",
    "play",
    "record_pass",
    "require_playing",
    "require_seat",
    "save_draft",
    "stalemate_if_nobody_can_play",
    "start_turn",
    "take_from_pool",
]


def play(match: Match, seat: int, table: Sequence[Sequence[Tile]], *, now: float) -> Transition:
    """Replace the table with ``table``, the whole new table ``seat`` sends.

    The tiles added leave the rack and the player has melded; an empty rack ends the
    game (``played``, ``game_over``...), else the next seat's turn starts. Raises
    :class:`IllegalTurn` with every violation when the play breaks a rule.
    """
    _require_turn(match, seat, now)
    after = as_table(table)
    player = match.players[seat]
    rack = Counter(player.rack)
    violations = check_turn(match.table, after, rack, melded=player.melded, rules=match.rules)
    if violations:
        raise IllegalTurn(violations)
    added = rack & (tiles_of(after) - tiles_of(match.table))  # rack tiles: jokers unnamed
    remaining = sorted_rack((rack - added).elements())
    played = replace(
        match.with_player(seat, replace(player, rack=remaining, melded=True)),
        table=after,
        passes_in_a_row=0,
    )
    return end_turn(
        played,
        seat,
        EventType.PLAYED,
        at=now,
        game_end=None if remaining else partial(went_out, seat=seat, at=now),
        table=table_codes(after),
        added=codes_of(sorted_rack(added.elements())),
        went_out=not remaining,
    )


def draw(match: Match, seat: int, *, now: float) -> Transition:
    """Take the pool's next tile onto ``seat``'s rack and end the turn (the draft is dropped).

    The drawn tile is in ``Transition.drawn``. Raises :class:`PoolEmpty` when the pool is empty.
    """
    _require_turn(match, seat, now)
    if not match.pool:
        raise PoolEmpty("the pool is empty: play, or pass if you cannot play")
    taken, drawn = take_from_pool(match, seat, 1)
    return replace(end_turn(taken, seat, EventType.DREW, at=now, count=len(drawn)), drawn=drawn)


def pass_turn(
    match: Match, seat: int, *, now: float, can_play: CanPlay | None = None
) -> Transition:
    """Pass: allowed only with an empty pool and when ``can_play`` finds no legal play.

    When every seat has passed in a row, or at the first pass with
    :attr:`StalemateEnd.FIRST_CANNOT_PLAY`, the game ends in a stalemate. Raises
    :class:`PoolNotEmpty` while the pool holds tiles, :class:`PassRefused` when
    ``can_play`` returns ``True``.
    """
    _require_turn(match, seat, now)
    if match.pool:
        raise PoolNotEmpty(f"the pool still holds {len(match.pool)} tiles: play or draw")
    player = match.players[seat]
    if can_play is not None and can_play(
        match.table, Counter(player.rack), player.melded, match.rules
    ):
        raise PassRefused("a legal play exists: you must play while you can")
    return record_pass(match, seat, at=now)


# A player shares drafts again and again in one turn, on the same rack and table: their tiles
# are counted once per object (a rack of 14: 23,000 instructions a draft; a table of 60 tiles
# about 60,000), as for the stored form (service.game.codec).
_rack_tiles: Callable[[tuple[Tile, ...]], Counter[Tile]] = per_object(Counter, 4096)
_table_tiles: Callable[[tuple[tuple[Tile, ...], ...]], Counter[Tile]] = per_object(tiles_of, 4096)


def save_draft(
    match: Match, seat: int, table: Sequence[Sequence[Tile]] | None, *, now: float
) -> Transition:
    """Share ``table`` as the current player's work in progress (``None`` withdraws it).

    The draft may hold incomplete or invalid sets (empty ones are dropped) but must keep
    every table tile and add only tiles from the rack; raises :class:`IllegalTurn` with
    those violations otherwise.
    """
    _require_turn(match, seat, now)
    version = match.version + 1
    if table is None:
        return made_transition(
            _with_draft(match, None, version),
            (made_event(EventType.DRAFT_UPDATED, version, now, seat, {"draft": None}),),
            (),
        )
    draft = tuple([tuple(tiles) for tiles in table if tiles])
    before, rack = _table_tiles(match.table), _rack_tiles(match.players[seat].rack)
    if not conserves(before, draft, rack):  # what is wrong, named (as rarely as a typo)
        raise IllegalTurn(check_conservation(before, tiles_of(draft), rack))
    # record(match, DRAFT_UPDATED, at=now, seat=seat, changes={"draft": draft}, draft=codes),
    # written out: a draft is shared again and again in one turn
    return made_transition(
        _with_draft(match, draft, version),
        (made_event(EventType.DRAFT_UPDATED, version, now, seat, {"draft": table_codes(draft)}),),
        (),
    )


_with_draft: Callable[[Match, Table | None, int], Match] = evolver("draft", "version")


def stalemate_if_nobody_can_play(match: Match, *, now: float, can_play: CanPlay) -> Transition:
    """End the game when the pool is empty and ``can_play`` proves that no seat can play.

    Returns the match unchanged (no events) unless every seat's answer is ``False``.
    """
    if match.status is not Status.PLAYING or match.pool:
        return Transition(match, ())
    for seat in match.in_game:
        player = match.players[seat]
        if can_play(match.table, Counter(player.rack), player.melded, match.rules) is not False:
            return Transition(match, ())
    return stalemate(match, Ending.NOBODY_CAN_PLAY, next_seat=match.current_seat, at=now)


def require_seat(match: Match, seat: int) -> None:
    """Raise :class:`UnknownSeat` unless ``seat`` is one of the match's seats."""
    if not 0 <= seat < len(match.players):
        raise UnknownSeat(f"this match has seats 0 to {len(match.players) - 1}, not {seat}")


def start_turn(match: Match, seat: int, *, at: float) -> Match:
    """Return ``match`` with ``seat``'s turn starting at ``at``, with its deadline."""
    return replace(match, **_turn_start(match, seat, at))


def _turn_start(match: Match, seat: int, at: float) -> dict[str, Any]:
    """The fields :func:`start_turn` changes."""
    deadline = turn_deadline(match.rules, match.banks, seat, at)
    return {"current_seat": seat, "turn_started": at, "turn_deadline": deadline, "draft": None}


def end_turn(
    match: Match,
    seat: int,
    event_type: EventType,
    *,
    at: float,
    game_end: Callable[[Match], Transition] | None = None,
    ended: TurnEnd = TurnEnd.PLAYER,
    **data: Any,
) -> Transition:
    """Record ``seat``'s turn as ``event_type`` (ended as ``ended``, which the bank clock
    charges) and start the turn of the next seat still in the game.

    With ``game_end`` the game ends instead (the event names no next seat). The event's
    data gets ``next_seat`` and ``turn_deadline``, and under a bank clock what the turn
    cost (see :mod:`service.game.clocks`).
    """
    match, clock = charge_turn(match, seat, at=at, ended=ended)
    data.update(clock)
    played = {"turns_played": match.turns_played + 1}
    if game_end is not None:
        finished = record(
            match,
            event_type,
            at=at,
            seat=seat,
            changes=played,
            **data,
            next_seat=None,
            turn_deadline=None,
        )
        return finished.then(game_end)
    following = _turn_start(match, match.next_in_game(seat), at)
    return record(  # the turn recorded and the next one started: one copy of the match
        match,
        event_type,
        at=at,
        seat=seat,
        changes={**following, **played},
        **data,
        next_seat=following["current_seat"],
        turn_deadline=following["turn_deadline"],
    )


def take_from_pool(match: Match, seat: int, count: int) -> tuple[Match, tuple[Tile, ...]]:
    """Move up to ``count`` tiles from the head of the pool to ``seat``'s rack."""
    drawn = match.pool[:count]
    player = match.players[seat]
    taken = match.with_player(
        seat,
        replace(player, rack=sorted_rack(player.rack + drawn)),
        pool=match.pool[len(drawn) :],
        passes_in_a_row=0,
    )
    return taken, drawn


def record_pass(match: Match, seat: int, *, at: float, timed_out: bool = False) -> Transition:
    """Count a pass by ``seat`` and end their turn, or the game when it is a stalemate."""
    passes = match.passes_in_a_row + 1
    passed = replace(match, passes_in_a_row=passes)
    ending = _stalemate_ending(passed)
    game_end = (
        None
        if ending is None
        else partial(stalemate, ending=ending, next_seat=match.next_in_game(seat), at=at)
    )
    ended = TurnEnd.TIMEOUT if timed_out else TurnEnd.PLAYER
    return end_turn(
        passed, seat, EventType.PASSED, at=at, game_end=game_end, ended=ended, timed_out=timed_out
    )


def _stalemate_ending(match: Match) -> Ending | None:
    if match.rules.stalemate_end is StalemateEnd.FIRST_CANNOT_PLAY:
        return Ending.FIRST_CANNOT_PLAY
    if match.passes_in_a_row >= len(match.in_game):
        return Ending.ALL_PASSED
    return None


def require_playing(match: Match) -> None:
    """Raise :class:`MatchCanceled` or :class:`WrongPhase` unless a game is being played."""
    if match.status is Status.CANCELED:
        raise MatchCanceled("the match was canceled by its owner")
    if match.status is not Status.PLAYING:
        raise WrongPhase(_phase_message(match))


def _require_turn(match: Match, seat: int, now: float) -> None:
    require_seat(match, seat)
    require_playing(match)
    if seat != match.current_seat:
        raise NotYourTurn(f"it is seat {match.current_seat}'s turn, not seat {seat}'s")
    if match.turn_deadline is not None and now >= match.turn_deadline:
        raise DeadlinePassed("the turn's deadline has passed: settle the match first")


def _phase_message(match: Match) -> str:
    if match.status is Status.FINISHED:
        return "the match is finished"
    return f"game {match.game_number} is over: start the next game first"
