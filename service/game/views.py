"""What clients see of a match: the public view, and a seat's private view with its rack.

Neither ever shows the pool's tiles or order, nor another seat's rack. Times are float
epoch seconds; ``server_time`` is the ``now`` the caller read, so clients can run a
countdown to ``turn_deadline``. Settle the match (:func:`service.game.settle`) before
viewing it so that expired turns are not shown as running.

Under a bank clock each player also shows ``time_left`` (as of ``server_time``; only the
seat to move's counts down), ``clock_running`` and ``flagged`` (out of the game); a
per-turn match's players carry none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.game.clocks import time_left
from service.game.codec import result_to_dict, rules_to_dict
from service.game.memo import per_object
from service.game.state import Match, Player, Status, table_codes
from service.game.turns import require_seat
from service.rules import Tile, codes_of

__all__ = ["owner_view", "private_view", "public_view", "summary"]


def public_view(match: Match, *, now: float) -> dict[str, Any]:
    """Return what everyone may see of ``match``, spectators included (never a ``ref``).

    ``current_seat``, ``turn_started`` and ``turn_deadline`` are ``None`` unless a game
    is being played (``turn_deadline`` also without a time limit); ``last_outcome`` is
    the last finished game's result; ``winner`` is the match winner once finished.
    """
    return _public(match, now)


def _public(match: Match, now: float) -> dict[str, Any]:
    playing = match.status is Status.PLAYING
    view: dict[str, Any] = {
        "id": match.id,
        "version": match.version,
        "status": match.status._value_,  # as .value, a Python-level property (1,400)
        "current_seat": match.current_seat if playing else None,
        "turn_started": match.turn_started if playing else None,
        "turn_deadline": match.turn_deadline if playing else None,
        "server_time": now,
        "table": table_codes(match.table),
        "draft": None if match.draft is None else table_codes(match.draft),
        "pool_count": len(match.pool),
        "players": [dict(shown) for shown in _players_shown(match.players)],  # the caller's own
        "game_number": match.game_number,
        "games_total": match.games_total,
        "rounds": match.rules.rounds,
        "rules": rules_to_dict(match.rules),
        "last_outcome": result_to_dict(match.outcomes[-1]) if match.outcomes else None,
        "winner": match.winner,
        "rematch_id": match.rematch_id,
    }
    banks = time_left(match, now=now) if match.banks else None  # None: a per-turn clock
    if banks is not None:
        for seat, shown in enumerate(view["players"]):
            shown["time_left"] = round(banks[seat], 3)
            shown["clock_running"] = playing and seat == match.current_seat
            shown["flagged"] = seat in match.flagged
    return view


def private_view(match: Match, seat: int, *, now: float) -> dict[str, Any]:
    """Return the public view with ``seat`` and that seat's ``rack`` (codes, rack order).

    Raises :class:`UnknownSeat` for a seat the match does not have.
    """
    require_seat(match, seat)
    view = _public(match, now)  # the public view's keys, then these two (not a copy of it)
    view["seat"] = seat
    view["rack"] = list(_rack_codes(match.players[seat].rack))
    return view


def _players_shown_of(players: tuple[Player, ...]) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "seat": seat,
            "name": player.name,
            "bot": player.bot,
            "rack_count": len(player.rack),
            "melded": player.melded,
            "score": player.score,
            "games_won": player.games_won,
            "left": player.left,
        }
        for seat, player in enumerate(players)
    )


# A draft leaves the players and the racks alone (the same objects in the next version), and
# its answer shows them: what is shown of them is worked out once per object and handed out
# as copies (a view's players 9,000 instructions for two, copied 4,000; a rack's codes 4,500).
_players_shown = per_object(_players_shown_of, 4096)
_rack_codes: Callable[[tuple[Tile, ...]], tuple[str, ...]] = per_object(
    lambda rack: tuple(codes_of(rack)), 4096
)


def owner_view(match: Match, *, now: float) -> dict[str, Any]:
    """Return the public view with each player's ``ref``, for the app that owns ``match``."""
    view = public_view(match, now=now)
    for player, shown in zip(match.players, view["players"], strict=True):
        shown["ref"] = player.ref
    return view


def summary(match: Match, *, updated_at: float) -> dict[str, Any]:
    """Return the owner's listing item of ``match``: who plays, whose turn, when it changed."""
    playing = match.status is Status.PLAYING
    return {
        "id": match.id,
        "status": match.status.value,
        "version": match.version,
        "current_seat": match.current_seat if playing else None,
        "turn_deadline": match.turn_deadline if playing else None,
        "updated_at": updated_at,
        "players": [
            {
                "seat": seat,
                "name": player.name,
                "ref": player.ref,
                "bot": player.bot,
                "left": player.left,
            }
            for seat, player in enumerate(match.players)
        ],
    }
