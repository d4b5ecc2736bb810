"""The storage form of a match and of its events: JSON-ready dicts, tiles as codes.

``from_dict(to_dict(match)) == match`` for every match, through ``json`` too. The
stored form holds everything, the pool included: it is never shown to clients (see
:mod:`service.game.views` for what they see). ``format`` names the layout; a stored
match written in another format is refused with :class:`MatchDecodeError`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import fields
from functools import lru_cache
from typing import Any

from service.game.errors import MatchDecodeError
from service.game.state import (
    Ending,
    Event,
    EventType,
    GameResult,
    Match,
    Player,
    Status,
    Table,
    table_codes,
)
from service.rules import Outcome, Reason, Rules, codes_of, parse_tiles

__all__ = [
    "FORMAT",
    "event_from_dict",
    "event_to_dict",
    "from_dict",
    "result_to_dict",
    "rules_from_dict",
    "rules_to_dict",
    "to_dict",
]

FORMAT = 1
_DEFAULT_RULES = Rules()


def to_dict(match: Match) -> dict[str, Any]:
    """Return the whole state of ``match`` as a JSON-ready dict."""
    return {
        "format": FORMAT,
        "id": match.id,
        "rules": rules_to_dict(match.rules),
        "players": [_player_to_dict(player) for player in match.players],
        "pool": codes_of(match.pool),
        "table": table_codes(match.table),
        "draft": None if match.draft is None else table_codes(match.draft),
        "status": match.status.value,
        "current_seat": match.current_seat,
        "turn_started": match.turn_started,
        "turn_deadline": match.turn_deadline,
        "game_number": match.game_number,
        "game_first_seat": match.game_first_seat,
        "passes_in_a_row": match.passes_in_a_row,
        "version": match.version,
        "outcomes": [result_to_dict(result) for result in match.outcomes],
        "seed": match.seed,
        "created_at": match.created_at,
        "winner": match.winner,
        "clock_offset": match.clock_offset,
        "owner": match.owner,
        "rematch_id": match.rematch_id,
    }


def from_dict(data: Mapping[str, Any]) -> Match:
    """Return the match stored as ``data``; raise :class:`MatchDecodeError` if it is not one."""
    if data.get("format") != FORMAT:
        raise MatchDecodeError(f"stored match format {data.get('format')!r}, expected {FORMAT}")
    try:
        return _match_from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise MatchDecodeError(f"stored match cannot be read: {error!r}") from error


def event_to_dict(event: Event) -> dict[str, Any]:
    """Return ``event`` as a JSON-ready dict (also the form clients see in the event log)."""
    return {
        "type": event.type.value,
        "version": event.version,
        "at": event.at,
        "seat": event.seat,
        "data": dict(event.data),
    }


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Return the event stored as ``data``; raise :class:`MatchDecodeError` if it is not one."""
    try:
        return Event(
            EventType(data["type"]),
            int(data["version"]),
            float(data["at"]),
            None if data["seat"] is None else int(data["seat"]),
            dict(data["data"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise MatchDecodeError(f"stored event cannot be read: {error!r}") from error


def rules_to_dict(rules: Rules) -> dict[str, Any]:
    """Return every rule option by name, enums as their values."""
    return dict(_rules_items(rules))


@lru_cache(maxsize=256)
def _rules_items(rules: Rules) -> tuple[tuple[str, Any], ...]:
    # Every stored state and view holds the rules: work each match's rules out once.
    return tuple((field.name, _plain(getattr(rules, field.name))) for field in fields(Rules))


def rules_from_dict(data: Mapping[str, Any]) -> Rules:
    """Return the rules named in ``data``; options it leaves out keep their defaults.

    Raises ``ValueError`` for an unknown option or an unknown enum value.
    """
    names = {field.name for field in fields(Rules)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown rule options: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        default = getattr(_DEFAULT_RULES, name)
        values[name] = type(default)(value) if isinstance(default, enum.Enum) else value
    return Rules(**values)


def result_to_dict(result: GameResult) -> dict[str, Any]:
    """Return a finished game's result: number, reason, ending, winner and scores."""
    return {
        "game_number": result.game_number,
        "reason": result.outcome.reason.value,
        "ending": result.ending.value,
        "winner": result.outcome.winner,
        "scores": list(result.outcome.scores),
    }


def _plain(value: object) -> object:
    return value.value if isinstance(value, enum.Enum) else value


def _table_from_list(sets: Any) -> Table:
    return tuple(parse_tiles(codes) for codes in sets)


def _player_to_dict(player: Player) -> dict[str, Any]:
    return {
        "name": player.name,
        "bot": player.bot,
        "rack": codes_of(player.rack),
        "melded": player.melded,
        "score": player.score,
        "games_won": player.games_won,
        "left": player.left,
        "ref": player.ref,
    }


def _player_from_dict(data: Mapping[str, Any]) -> Player:
    return Player(
        name=str(data["name"]),
        bot=bool(data["bot"]),
        rack=parse_tiles(data["rack"]),
        melded=bool(data["melded"]),
        score=int(data["score"]),
        games_won=int(data["games_won"]),
        left=bool(data.get("left", False)),  # absent in states stored before players could leave
        ref=_optional_str(data.get("ref")),
    )


def _result_from_dict(data: Mapping[str, Any]) -> GameResult:
    outcome = Outcome(
        Reason(data["reason"]),
        _optional_int(data["winner"]),
        tuple(int(s) for s in data["scores"]),
    )
    return GameResult(int(data["game_number"]), outcome, Ending(data["ending"]))


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _match_from_dict(data: Mapping[str, Any]) -> Match:
    return Match(
        id=str(data["id"]),
        rules=rules_from_dict(data["rules"]),
        players=tuple(_player_from_dict(player) for player in data["players"]),
        pool=parse_tiles(data["pool"]),
        table=_table_from_list(data["table"]),
        draft=None if data["draft"] is None else _table_from_list(data["draft"]),
        status=Status(data["status"]),
        current_seat=int(data["current_seat"]),
        turn_started=float(data["turn_started"]),
        turn_deadline=_optional_float(data["turn_deadline"]),
        game_number=int(data["game_number"]),
        game_first_seat=int(data["game_first_seat"]),
        passes_in_a_row=int(data["passes_in_a_row"]),
        version=int(data["version"]),
        outcomes=tuple(_result_from_dict(result) for result in data["outcomes"]),
        seed=_optional_int(data["seed"]),
        created_at=float(data["created_at"]),
        winner=_optional_int(data["winner"]),
        clock_offset=float(data.get("clock_offset", 0.0)),
        owner=_optional_str(data.get("owner")),  # these two are absent in older stored states
        rematch_id=_optional_str(data.get("rematch_id")),
    )
