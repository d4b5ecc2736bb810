"""The JSON form of a record: :func:`to_json` and :func:`from_json`, which round-trip.

:func:`from_json` reads whatever a client sends: it checks every type and bound and raises
:class:`RecordFormatError` naming the field, never anything else. Fields it does not know are
ignored (a later version may add some); an unknown rule option is refused, since it would
change the game.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, TypeVar

from service.game import MAX_GIFT_SECONDS, Ending
from service.record.errors import RecordFormatError
from service.record.model import (
    FORMAT,
    HIDDEN,
    Action,
    By,
    Deal,
    FirstDraw,
    Record,
    RecordPlayer,
    Result,
    Turn,
)
from service.rules import (
    FAILED_TURN_PENALTIES,
    Clock,
    InvalidTileCode,
    Reason,
    Rules,
    Tile,
    clock_from_dict,
    clock_to_dict,
)

__all__ = [
    "MAX_TURNS",
    "from_json",
    "result_to_json",
    "rules_from_json",
    "rules_to_json",
    "to_json",
    "turn_to_json",
]

T = TypeVar("T")

MAX_TURNS = 5000  # the longest real game (6 players, XP) has well under 1,500 entries
MAX_SEATS = 6
MAX_TILES = 160  # the XP box: no rack, pool, table or set holds more
MAX_TEXT = 128  # a name, a ref, a match id
MAX_DRAW_ROUNDS = 100
_DEFAULT_RULES = Rules()
_RULE_BOUNDS = {
    "turn_seconds": (0, 604_800),
    "initial_meld_points": (0, 1000),
    "rounds": (1, 20),
    "dealt_jokers": (0, 2),
    "joker_penalty": (0, 100),
    "never_melded_penalty": (0, 1000),
}
"""The bounds of POST /v1/matches' rules (openapi.yaml's RuleOptions), which a record keeps."""
_REASONS = tuple(reason.value for reason in Reason)
_ENDINGS = tuple(ending.value for ending in Ending)


def to_json(record: Record) -> dict[str, Any]:
    """Return ``record`` as JSON-ready data (the form ``GET .../record`` answers)."""
    return {
        "format": FORMAT,
        "match_id": record.match_id,
        "game_number": record.game_number,
        "rules": rules_to_json(record.rules),
        "players": [_player_to_json(player) for player in record.players],
        "first_player_draw": _first_draw_to_json(record.first_player_draw),
        "first_seat": record.first_seat,
        "started_at": record.started_at,
        "deal": {
            "racks": [list(rack) for rack in record.deal.racks],
            "pool": list(record.deal.pool),
            "table": [list(tiles) for tiles in record.deal.table],
            "melded": list(record.deal.melded) or [False] * len(record.deal.racks),
        },
        "turns": [turn_to_json(turn) for turn in record.turns],
        "result": None if record.result is None else result_to_json(record.result),
    }


def rules_to_json(rules: Rules) -> dict[str, Any]:
    """Every rule option by name (enums as their values)."""
    return {
        field.name: _plain(getattr(rules, field.name)) for field in fields(Rules)
    }  # fmt: skip


def _plain(value: object) -> object:
    if isinstance(value, Clock):
        return clock_to_dict(value)
    return value.value if isinstance(value, enum.Enum) else value


def _player_to_json(player: RecordPlayer) -> dict[str, Any]:
    shown: dict[str, Any] = {"seat": player.seat, "name": player.name, "bot": player.bot}
    if player.ref is not None:
        shown["ref"] = player.ref
    return shown


def _first_draw_to_json(draw: FirstDraw | None) -> dict[str, Any] | None:
    if draw is None:
        return None
    return {
        "rounds": [
            [{"seat": seat, "tiles": list(tiles)} for seat, tiles in round_]
            for round_ in draw.rounds
        ],
        "first_seat": draw.first_seat,
    }


def turn_to_json(turn: Turn) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "n": turn.n,
        "seat": turn.seat,
        "action": turn.action.value,
        "by": turn.by.value,
        "at": turn.at,
    }
    if turn.action is Action.PLAY:
        entry["table"] = [list(tiles) for tiles in turn.table]
        entry["placed"] = list(turn.placed)
    elif turn.action in (Action.DRAW, Action.TIMEOUT):
        entry["drawn"] = list(turn.drawn)
    if turn.action is Action.TIMEOUT:
        entry["reverted"] = turn.reverted
    if turn.action is Action.GIVE:
        entry["seconds"] = turn.seconds
    return entry


def result_to_json(result: Result) -> dict[str, Any]:
    return {
        "reason": result.reason,
        "ending": result.ending,
        "winner": result.winner,
        "scores": list(result.scores),
        "racks": [list(rack) for rack in result.racks],
    }


# -- reading ----------------------------------------------------------------------------------


def from_json(data: object) -> Record:
    """Return the record ``data`` holds; raise :class:`RecordFormatError` naming what is wrong."""
    top = _object(data, "")
    if top.get("format") != FORMAT:
        raise RecordFormatError("format", f"must be {FORMAT!r}")
    seats_field = _list(top, "players", "", most=MAX_SEATS)
    players = tuple(_player(item, f"players.{i}") for i, item in enumerate(seats_field))
    if [player.seat for player in players] != list(range(len(players))):
        raise RecordFormatError("players", "must list seats 0, 1, 2... in order")
    seats = len(players)
    first_seat = _seat(top.get("first_seat"), "first_seat", seats)
    turns_field = _list(top, "turns", "", most=MAX_TURNS)
    for name in ("first_player_draw", "result"):  # null when there is none, but never left out
        if name not in top:
            raise RecordFormatError(name, "is required")
    return Record(
        match_id=_text(top.get("match_id"), "match_id", allow_empty=True),
        game_number=_int(top.get("game_number"), "game_number", low=1, high=10_000),
        rules=rules_from_json(top.get("rules"), "rules"),
        players=players,
        first_player_draw=_first_draw(top.get("first_player_draw"), seats),
        first_seat=first_seat,
        started_at=_time(top.get("started_at"), "started_at"),
        deal=_deal(top.get("deal"), seats),
        turns=tuple(_turn(item, f"turns.{i}", i + 1, seats) for i, item in enumerate(turns_field)),
        result=None if top.get("result") is None else _result(top["result"], seats),
    )


def rules_from_json(data: object, where: str) -> Rules:
    """The rules ``data`` names, each option type-checked (missing ones take their defaults)."""
    given = _object(data, where)
    values: dict[str, Any] = {}
    known = {field.name for field in fields(Rules)}
    for name, value in given.items():
        if name not in known:
            raise RecordFormatError(f"{where}.{name}", "is not a rule option")
        default = getattr(_DEFAULT_RULES, name)
        path = f"{where}.{name}"
        if isinstance(default, enum.Enum):
            options = [member.value for member in type(default)]
            if value not in options:
                raise RecordFormatError(path, f"must be one of {', '.join(map(str, options))}")
            values[name] = type(default)(value)
        elif isinstance(default, Clock):
            try:
                values[name] = clock_from_dict(_object(value, path))
            except ValueError as error:
                raise RecordFormatError(path, str(error)) from None
        elif isinstance(default, bool):
            values[name] = _bool(value, path)
        elif name == "target_score":
            values[name] = None if value is None else _int(value, path, low=1, high=10_000)
        else:
            low, high = _RULE_BOUNDS.get(name, (0, 10**7))
            values[name] = _int(value, path, low=low, high=high)
    penalty = values.get("failed_turn_penalty", _DEFAULT_RULES.failed_turn_penalty)
    if penalty not in FAILED_TURN_PENALTIES:
        allowed = ", ".join(map(str, FAILED_TURN_PENALTIES))
        raise RecordFormatError(f"{where}.failed_turn_penalty", f"must be one of {allowed}")
    return Rules(**values)


def _player(data: object, where: str) -> RecordPlayer:
    item = _object(data, where)
    ref = item.get("ref")
    return RecordPlayer(
        seat=_int(item.get("seat"), f"{where}.seat", low=0, high=MAX_SEATS - 1),
        name=_text(item.get("name"), f"{where}.name"),
        bot=_bool(item.get("bot"), f"{where}.bot"),
        ref=None if ref is None else _text(ref, f"{where}.ref"),
    )


def _first_draw(data: object, seats: int) -> FirstDraw | None:
    if data is None:
        return None
    where = "first_player_draw"
    item = _object(data, where)
    rounds = []
    for r, round_ in enumerate(_list(item, "rounds", where, most=MAX_DRAW_ROUNDS)):
        path = f"{where}.rounds.{r}"
        draws = []
        for d, draw in enumerate(_sequence(round_, path, most=MAX_SEATS)):
            entry = _object(draw, f"{path}.{d}")
            seat = _seat(entry.get("seat"), f"{path}.{d}.seat", seats)
            draws.append((seat, _tiles(entry.get("tiles"), f"{path}.{d}.tiles", plain=True)))
        rounds.append(tuple(draws))
    first = _seat(item.get("first_seat"), f"{where}.first_seat", seats)
    return FirstDraw(tuple(rounds), first)


def _deal(data: object, seats: int) -> Deal:
    where = "deal"
    item = _object(data, where)
    racks = tuple(
        _tiles(rack, f"{where}.racks.{i}", plain=True, hidden=True)
        for i, rack in enumerate(_list(item, "racks", where, most=MAX_SEATS))
    )
    if len(racks) != seats:
        raise RecordFormatError(f"{where}.racks", f"must hold one rack for each of {seats} seats")
    table = tuple(
        _tiles(tiles, f"{where}.table.{i}")
        for i, tiles in enumerate(_list(item, "table", where, most=MAX_TILES, required=False))
    )
    melded = tuple(
        _bool(flag, f"{where}.melded.{i}")
        for i, flag in enumerate(_list(item, "melded", where, most=MAX_SEATS, required=False))
    )
    if melded and len(melded) != seats:
        raise RecordFormatError(f"{where}.melded", f"must hold one flag for each of {seats} seats")
    return Deal(
        racks=racks,
        pool=_tiles(item.get("pool"), f"{where}.pool", plain=True, hidden=True),
        table=table,
        melded=melded if any(melded) else (),
    )


def _turn(data: object, where: str, n: int, seats: int) -> Turn:
    item = _object(data, where)
    if _int(item.get("n"), f"{where}.n", low=1, high=MAX_TURNS) != n:
        raise RecordFormatError(
            f"{where}.n", f"must be {n}: turns are numbered 1, 2, 3... in order"
        )
    action = _choice(item.get("action"), f"{where}.action", Action)
    turn = Turn(
        n=n,
        seat=_seat(item.get("seat"), f"{where}.seat", seats),
        action=action,
        by=_choice(item.get("by"), f"{where}.by", By),
        at=_time(item.get("at"), f"{where}.at"),
    )
    given = _members(item, where)  # each member a turn may hold is checked, whatever its action
    if action is Action.PLAY:
        for name in ("table", "placed"):
            if name not in given:
                raise RecordFormatError(f"{where}.{name}", "is required")
        return _replace(turn, table=given["table"], placed=given["placed"])
    if action in (Action.DRAW, Action.TIMEOUT):
        if "drawn" not in given:
            raise RecordFormatError(f"{where}.drawn", "is required")
        reverted = bool(given.get("reverted", False)) and action is Action.TIMEOUT
        return _replace(turn, drawn=given["drawn"], reverted=reverted)
    if action is Action.GIVE:
        if "seconds" not in given:
            raise RecordFormatError(f"{where}.seconds", "is required")
        return _replace(turn, seconds=given["seconds"])
    return turn


def _members(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The members of a turn beside its head, each checked (``table``, ``placed``, ``drawn``,
    ``reverted``, ``seconds``), those present only."""
    found: dict[str, Any] = {}
    if "table" in item:
        found["table"] = tuple(
            _tiles(tiles, f"{where}.table.{i}")
            for i, tiles in enumerate(_list(item, "table", where, most=MAX_TILES))
        )
    if "placed" in item:
        found["placed"] = _tiles(item["placed"], f"{where}.placed", plain=True)
    if "drawn" in item:
        found["drawn"] = _tiles(item["drawn"], f"{where}.drawn", plain=True, hidden=True)
    if "reverted" in item:
        found["reverted"] = _bool(item["reverted"], f"{where}.reverted")
    if "seconds" in item:
        found["seconds"] = _int(item["seconds"], f"{where}.seconds", low=1, high=MAX_GIFT_SECONDS)
    return found


def _replace(turn: Turn, **changes: Any) -> Turn:
    return Turn(**{**{f.name: getattr(turn, f.name) for f in fields(Turn)}, **changes})


def _result(data: object, seats: int) -> Result:
    where = "result"
    item = _object(data, where)
    winner = item.get("winner")
    scores = _list(item, "scores", where, most=MAX_SEATS)
    racks = tuple(
        _tiles(rack, f"{where}.racks.{i}", plain=True)
        for i, rack in enumerate(_list(item, "racks", where, most=MAX_SEATS))
    )
    if len(scores) != seats or len(racks) != seats:
        raise RecordFormatError(where, f"needs a score and a rack for each of {seats} seats")
    if "winner" not in item:
        raise RecordFormatError(f"{where}.winner", "is required")
    return Result(
        reason=_one_of(item.get("reason"), f"{where}.reason", _REASONS),
        ending=_one_of(item.get("ending"), f"{where}.ending", _ENDINGS),
        winner=None if winner is None else _seat(winner, f"{where}.winner", seats),
        scores=tuple(
            _int(score, f"{where}.scores.{i}", low=-(10**6), high=10**6)
            for i, score in enumerate(scores)
        ),
        racks=racks,
    )


# -- checked values --------------------------------------------------------------------------


def _object(data: object, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise RecordFormatError(where, "must be an object")
    return data


def _sequence(data: object, where: str, *, most: int) -> list[Any]:
    if not isinstance(data, (list, tuple)):
        raise RecordFormatError(where, "must be a list")
    if len(data) > most:
        raise RecordFormatError(where, f"holds more than {most} items")
    return list(data)


def _list(
    item: Mapping[str, Any], name: str, where: str, *, most: int, required: bool = True
) -> list[Any]:
    path = f"{where}.{name}" if where else name
    if name not in item:
        if required:
            raise RecordFormatError(path, "is required")
        return []
    return _sequence(item[name], path, most=most)


def _int(value: object, where: str, *, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(where, "must be a whole number")
    if not low <= value <= high:
        raise RecordFormatError(where, f"must be from {low} to {high}")
    return value


def _seat(value: object, where: str, seats: int) -> int:
    return _int(value, where, low=0, high=max(seats - 1, 0))


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise RecordFormatError(where, "must be true or false")
    return value


def _time(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordFormatError(where, "must be a number of seconds since 1970")
    if not math.isfinite(value) or not 0 <= value < 1e11:
        raise RecordFormatError(where, "must be a time in seconds since 1970")
    return float(value)


def _text(value: object, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        raise RecordFormatError(where, "must be a non-empty string")
    if len(value) > MAX_TEXT:
        raise RecordFormatError(where, f"holds more than {MAX_TEXT} characters")
    return value


def _one_of(value: object, where: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise RecordFormatError(where, f"must be one of {', '.join(options)}")
    return str(value)


def _choice(value: object, where: str, kind: Callable[[Any], T]) -> T:
    try:
        return kind(value)
    except (ValueError, TypeError):
        options = ", ".join(member.value for member in kind)  # type: ignore[attr-defined]
        raise RecordFormatError(where, f"must be one of {options}") from None


def _tiles(value: object, where: str, plain: bool = False, hidden: bool = False) -> tuple[str, ...]:
    codes = _sequence(value, where, most=MAX_TILES)
    for i, code in enumerate(codes):
        if hidden and code == HIDDEN:
            continue
        try:
            tile = Tile.parse(code)
        except InvalidTileCode:
            raise RecordFormatError(f"{where}.{i}", "is not a tile code (R7, K13, J)") from None
        if plain and tile.reading is not None:
            raise RecordFormatError(f"{where}.{i}", "a joker's reading is named only on the table")
    return tuple(codes)
