"""A match's life outside its turns: a player leaving, the owner canceling, a rematch.

- :func:`leave`: the seat is played by a bot from then on (``left``, ``bot``); its rack
  and score stay, so every game stays zero-sum. When it was that seat's turn, the turn
  starts again for the bot (:func:`service.game.advance` then plays it at once). When the
  last human seat leaves, the match ends as abandoned (:func:`service.game.ending.abandon`).
  Leaving again is not an error: nothing changes and no event is emitted.
- :func:`cancel`: the match ends at once (``canceled``); every later move is refused.
- :func:`rematch_players`, :func:`rematch`: the players and rules of a new match made
  from a finished one, and the old match's record of it (``rematch_id``).
"""

from __future__ import annotations

import random
from dataclasses import replace

from service.game.clocks import charge_turn
from service.game.ending import abandon
from service.game.errors import (
    MatchCanceled,
    NobodyToRematch,
    SeatIsBot,
    SeatReissued,
    WrongPhase,
)
from service.game.match import new_match
from service.game.state import EventType, Match, PlayerSpec, Status, Transition, record
from service.game.turns import require_seat, start_turn
from service.rules import TurnEnd

__all__ = [
    "cancel",
    "leave",
    "record_rematch",
    "rematch",
    "rematch_players",
    "reissue_tokens",
    "require_human",
]


def leave(match: Match, seat: int, *, now: float) -> Transition:
    """``seat`` leaves for good and a bot takes it over; emits ``player_left``.

    Raises :class:`UnknownSeat` for a seat the match lacks, :class:`SeatIsBot` for a
    seat a bot played from the start, :class:`WrongPhase` once the match is over
    (unless the seat had already left: then nothing changes).
    """
    require_seat(match, seat)
    player = match.players[seat]
    if player.left:
        return Transition(match, ())
    if player.bot:
        raise SeatIsBot(f"seat {seat} is played by a bot: it has no player to leave")
    if match.is_over:
        raise WrongPhase(f"the match is {match.status.value}: there is nothing to leave")
    taken_over = match.with_player(seat, replace(player, bot=True, left=True))
    its_turn = match.status is Status.PLAYING and match.current_seat == seat
    if its_turn:  # the time the player used is charged; the bot plays this turn at once
        taken_over, _ = charge_turn(taken_over, seat, at=now, ended=TurnEnd.TIMEOUT)
        taken_over = start_turn(taken_over, seat, at=now)
    left = record(taken_over, EventType.PLAYER_LEFT, at=now, seat=seat, name=player.name)
    if taken_over.humans:
        return left
    return left.then(lambda alone: abandon(alone, at=now))


def cancel(match: Match, *, now: float) -> Transition:
    """End the match at once as ``canceled``; emits ``match_canceled``.

    Canceling a canceled match changes nothing; a finished one raises :class:`WrongPhase`.
    """
    if match.status is Status.CANCELED:
        return Transition(match, ())
    if match.status is Status.FINISHED:
        raise WrongPhase("the match is already finished")
    canceled = replace(match, status=Status.CANCELED, turn_deadline=None, draft=None)
    return record(
        canceled, EventType.MATCH_CANCELED, at=now, seat=None, game_number=match.game_number
    )


def require_human(match: Match, seat: int) -> None:
    """Raise :class:`UnknownSeat` or :class:`SeatIsBot` unless a person plays ``seat``."""
    require_seat(match, seat)
    if match.players[seat].bot:
        reason = "left the match" if match.players[seat].left else "is a bot"
        raise SeatIsBot(f"seat {seat} {reason}: a bot plays it")


def reissue_tokens(
    match: Match, seats: tuple[int, ...], *, now: float, by_owner: bool = True
) -> Transition:
    """Record that ``seats`` get new tokens (the old ones stop working); emits
    ``tokens_reissued``, so every copy of the match's state moves on a version.

    ``by_owner``: the owning app hands them out (in any status), and the match remembers it;
    otherwise a seat token of the match before this rematch claims its seat, which it may
    only while the owner has not handed that seat out and the match is not canceled.

    Raises :class:`UnknownSeat` or :class:`SeatIsBot` unless a person plays each seat,
    :class:`SeatReissued` or :class:`MatchCanceled` for a claim the owner's reissue beat.
    """
    for seat in seats:
        require_human(match, seat)
    if by_owner:
        reissued = tuple(sorted({*match.owner_reissued, *seats}))
        if reissued != match.owner_reissued:
            match = replace(match, owner_reissued=reissued)
    else:
        if match.status is Status.CANCELED:
            raise MatchCanceled("the rematch was canceled by its owner")
        taken = [seat for seat in seats if seat in match.owner_reissued]
        if taken:
            raise SeatReissued(
                f"the app gave seat {taken[0]} of the rematch a new token: ask it for the seat"
            )
    return record(match, EventType.TOKENS_REISSUED, at=now, seat=None, seats=list(seats))


def rematch_players(match: Match) -> list[PlayerSpec]:
    """The players of a rematch: the same names, refs and bots; seats that left stay bots."""
    return [PlayerSpec(player.name, player.bot, player.ref) for player in match.players]


def _require_a_person(match: Match) -> None:
    """Raise :class:`NobodyToRematch` when every person left ``match``: its rematch would seat
    only bots, play itself through game 1 at once and then wait in the listings for nobody."""
    if not match.humans:
        raise NobodyToRematch(
            "every person left this match: a rematch would seat only bots, so there is none"
        )


def rematch(
    match: Match, new_id: str, *, rng: random.Random, now: float, seed: int | None = None
) -> Transition:
    """A new match with ``match``'s players, rules and owner, dealt afresh.

    Raises :class:`WrongPhase` unless ``match`` is finished, :class:`NobodyToRematch` when
    every person left it.
    """
    if match.status is not Status.FINISHED:
        raise WrongPhase(
            "a rematch can follow only a finished match, "
            f"and this one is {match.status.value.replace('_', ' ')}"
        )
    _require_a_person(match)
    return new_match(
        new_id,
        rematch_players(match),
        rules=match.rules,
        rng=rng,
        now=now,
        seed=seed,
        owner=match.owner,
    )


def record_rematch(match: Match, new_id: str, *, now: float) -> Transition:
    """Record on the finished ``match`` that ``new_id`` is its rematch; emits ``rematch_created``.

    Recording the same rematch again changes nothing; raises :class:`WrongPhase` when
    another rematch is recorded already, or ``match`` is not finished, and
    :class:`NobodyToRematch` when every person left it.
    """
    if match.rematch_id == new_id:
        return Transition(match, ())
    if match.rematch_id is not None:
        raise WrongPhase(f"this match's rematch is {match.rematch_id} already")
    if match.status is not Status.FINISHED:
        raise WrongPhase("a rematch can follow only a finished match")
    _require_a_person(match)
    return record(
        replace(match, rematch_id=new_id),
        EventType.REMATCH_CREATED,
        at=now,
        seat=None,
        rematch_id=new_id,
    )
