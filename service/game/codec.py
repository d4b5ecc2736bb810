"""The storage form of a match and of its events: JSON-ready dicts, tiles as codes.

``from_dict(to_dict(match)) == match`` for every match, through ``json`` too. The
stored form holds everything, the pool included: it is never shown to clients (see
:mod:`service.game.views` for what they see). ``f`` names the layout; a stored match
written in another format is refused with :class:`MatchDecodeError`.

Format 2 is compact, since every live match keeps one in Redis (a million of them should
fit in 16 GiB): short names, a player as a row, tiles as one string of codes per rack, pool
and set, and only the rule options that differ from the defaults of :data:`_RULES_2` (frozen
here, so a later change of a default never changes a stored match). A finished 4-player
game's state takes about 1.1 KB instead of 1.9 KB in format 1, which is still read.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import fields
from functools import lru_cache
from typing import Any

from service.game.errors import MatchDecodeError
from service.game.memo import per_object
from service.game.state import (
    Dealt,
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
from service.rules import (
    Clock,
    Outcome,
    Reason,
    Rules,
    Tile,
    clock_from_dict,
    clock_to_dict,
    codes_of,
    parse_tiles,
)

__all__ = [
    "FORMAT",
    "event_from_dict",
    "event_to_dict",
    "from_dict",
    "result_to_dict",
    "rules_from_dict",
    "rules_to_dict",
    "to_dict",
    "to_dict_format_1",
]

FORMAT = 2
_DEFAULT_RULES = Rules()
_RULES_2: dict[str, Any] = {
    "tile_set": "standard",
    "turn_seconds": 60,
    "initial_meld_points": 30,
    "joker_worth_zero_in_meld": False,
    "joker_locked_sets": False,
    "hints": True,
    "rounds": 1,
    "target_score": None,
    "match_winner": "total_score",
    "stalemate_scoring": "difference",
    "stalemate_end": "nobody_can_play",
    "first_player_joker": "draw_again",
    "redeal_duplicates": False,
    "failed_turn_penalty": 3,
}
"""The rule options format 2 leaves out when a match uses these values: never change it."""
_RULES_LATER: dict[str, Any] = {
    "preset": "official",
    "clock": {"type": "turn"},
    "freed_joker": "any_set",
    "dealt_jokers": 0,
    "joker_penalty": 30,
    "never_melded_penalty": 0,
    "redeal_three_doubles": False,
}
"""Options added after format 2 was fixed, left out at these values (which every match
stored before them had): never change it either."""
_LEFT_OUT = {**_RULES_2, **_RULES_LATER}


def to_dict(match: Match) -> dict[str, Any]:
    """Return the whole state of ``match`` as a JSON-ready dict (format 2).

    Parts a move leaves alone (the rules, the players, the table, the results) are the same
    objects in the next version of the match, and their JSON-ready forms are worked out once
    per object (tuples, which nobody can change, and a copy of the options' dict)."""
    data: dict[str, Any] = {
        "f": FORMAT,
        "id": match.id,
        "r": dict(_stored_options(match.rules)),  # a copy: the caller may change its dict
        "p": _player_rows(match.players),
        "pool": _joined(match.pool),
        "tb": _table_row(match.table),
        "st": match.status._value_,  # as .value, which is a Python-level property (1,400)
        "cs": match.current_seat,
        "ts": match.turn_started,
        "g": match.game_number,
        "gf": match.game_first_seat,
        "pr": match.passes_in_a_row,
        "v": match.version,
        "o": _result_rows(match.outcomes),
        "ca": match.created_at,
    }
    # the optional fields, left out when unset (a test per field: a dict of them all and a
    # filter cost a draft's commit 8,000 instructions more)
    if match.draft is not None:
        data["dr"] = _table_row(match.draft)
    if match.banks:
        data["bk"] = list(match.banks)
    if match.flagged:
        data["fl"] = list(match.flagged)
    if match.turns_played:
        data["tp"] = match.turns_played
    if match.turn_deadline is not None:
        data["td"] = match.turn_deadline
    if match.seed is not None:
        data["seed"] = match.seed
    if match.winner is not None:
        data["w"] = match.winner
    if match.clock_offset:
        data["co"] = match.clock_offset
    if match.owner is not None:
        data["ow"] = match.owner
    if match.rematch_id is not None:
        data["rm"] = match.rematch_id
    deals = _deal_rows(match.deals)
    if deals:
        data["dl"] = deals
    if match.owner_reissued:
        data["or"] = list(match.owner_reissued)
    return data


def from_dict(data: Mapping[str, Any]) -> Match:
    """Return the match stored as ``data`` (format 2, or format 1 as stored before);
    raise :class:`MatchDecodeError` if it is not one."""
    layout = data.get("f", data.get("format"))
    if layout not in (1, FORMAT):
        raise MatchDecodeError(f"stored match format {layout!r}, expected {FORMAT}")
    try:
        return _match_from_dict(data) if layout == 1 else _match_from_format_2(data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise MatchDecodeError(f"stored match cannot be read: {error!r}") from error


def _joined_codes(tiles: tuple[Tile, ...]) -> str:
    return " ".join([tile.code for tile in tiles])


_joined = per_object(_joined_codes, 4096)
"""The codes of a tuple of tiles joined by spaces."""


def _player_row(player: Player) -> tuple[Any, ...]:
    row = (player.name, int(player.bot), _joined(player.rack), int(player.melded))
    return (*row, player.score, player.games_won, int(player.left), player.ref)


def _result_row(result: GameResult) -> tuple[Any, ...]:
    outcome = result.outcome
    reason, ending = outcome.reason.value, result.ending.value
    return (result.game_number, reason, ending, outcome.winner, outcome.scores)


def _stored_options_of(rules: Rules) -> dict[str, Any]:
    return {
        name: value
        for name, value in _rules_items(rules)
        if name not in _LEFT_OUT or _LEFT_OUT[name] != value
    }


_stored_options = per_object(_stored_options_of, 1024)
"""The options of ``rules`` format 2 stores (handed out as copies)."""


def _player_rows_of(players: tuple[Player, ...]) -> tuple[tuple[Any, ...], ...]:
    return tuple(_player_row(player) for player in players)


def _result_rows_of(results: tuple[GameResult, ...]) -> tuple[tuple[Any, ...], ...]:
    return tuple(_result_row(result) for result in results)


def _table_row_of(table: Table) -> tuple[str, ...]:
    return tuple(" ".join(codes_of(tiles)) for tiles in table)


_player_rows = per_object(_player_rows_of, 4096)
_result_rows = per_object(_result_rows_of, 4096)
_table_row = per_object(_table_row_of, 4096)


def _stored_rules(options: Mapping[str, Any]) -> Rules:
    """The rules of a format 2 state (the options that differ from ``_RULES_2``)."""
    try:
        frozen = tuple(sorted((name, _frozen(value)) for name, value in options.items()))
        return _rules_of_options(frozen)
    except TypeError:  # an unhashable value: read it the long way (which refuses it)
        return rules_from_dict({**_LEFT_OUT, **options})


def _frozen(value: Any) -> Any:
    """A clock's dict as a hashable tuple of its items (:func:`_rules_of_options` thaws it)."""
    return ("dict", tuple(sorted(value.items()))) if isinstance(value, dict) else value


@lru_cache(maxsize=256)
def _rules_of_options(options: tuple[tuple[str, Any], ...]) -> Rules:
    # Every load decodes a state: work each set of options out once (Rules never changes).
    thawed = {
        name: dict(value[1]) if isinstance(value, tuple) and value[:1] == ("dict",) else value
        for name, value in options
    }
    return rules_from_dict({**_LEFT_OUT, **thawed})


@lru_cache(maxsize=4096)
def _tiles(text: str) -> tuple[Any, ...]:
    """The tiles of a string of codes joined by spaces, as stored; worked out once per equal
    string: a worker decodes a match's state again after each commit another worker made
    (``service.workers.shared_states``), and most of it (the pool, the racks a draft leaves
    alone) is the same text as the last time. A string that is no tiles raises, and nothing is
    kept."""
    if not isinstance(text, str):
        raise TypeError(f"tiles are stored as a string of codes, not {type(text).__name__}")
    return parse_tiles(text.split())


@lru_cache(maxsize=4096)
def _player_of_row(row: tuple[Any, ...]) -> Player:
    """The player stored as ``row``, worked out once per equal row: a move changes one
    player at most, and the others are the same rows as in the last state decoded."""
    name, bot, rack, melded, score, games_won, left, ref = row
    if not isinstance(name, str):  # never stored; and 1 == True would share a cached row
        raise TypeError(f"a player's name is stored as a string, not {type(name).__name__}")
    return Player(
        name=name,
        bot=bool(bot),
        rack=_tiles(rack),
        melded=bool(melded),
        score=int(score),
        games_won=int(games_won),
        left=bool(left),
        ref=_optional_str(ref),
    )


def _match_from_format_2(data: Mapping[str, Any]) -> Match:
    players = tuple(_player_of_row(tuple(row)) for row in data["p"])
    outcomes = tuple(
        GameResult(
            int(number),
            Outcome(Reason(reason), _optional_int(winner), tuple(int(s) for s in scores)),
            Ending(ending),
        )
        for number, reason, ending, winner, scores in data["o"]
    )
    draft = data.get("dr")
    return Match(
        id=str(data["id"]),
        rules=_stored_rules(data["r"]),
        players=players,
        pool=_tiles(data["pool"]),
        table=tuple(_tiles(tiles) for tiles in data["tb"]),
        draft=None if draft is None else tuple(_tiles(tiles) for tiles in draft),
        status=Status(data["st"]),
        current_seat=int(data["cs"]),
        turn_started=float(data["ts"]),
        turn_deadline=_optional_float(data.get("td")),
        game_number=int(data["g"]),
        game_first_seat=int(data["gf"]),
        passes_in_a_row=int(data["pr"]),
        version=int(data["v"]),
        outcomes=outcomes,
        seed=_optional_int(data.get("seed")),
        created_at=float(data["ca"]),
        winner=_optional_int(data.get("w")),
        clock_offset=float(data.get("co") or 0.0),
        owner=_optional_str(data.get("ow")),
        rematch_id=_optional_str(data.get("rm")),
        deals=tuple(map(_deal_of_row, data.get("dl") or ())),
        owner_reissued=tuple(int(seat) for seat in data.get("or") or ()),
        banks=tuple(float(bank) for bank in data.get("bk") or ()),
        flagged=tuple(int(seat) for seat in data.get("fl") or ()),
        turns_played=int(data.get("tp") or 0),
    )


# A game's deal, kept for its record, one character a tile: R1-R13 a-m, B n-z, K A-M, O N-Z,
# the joker *; the racks joined by ",", then "|" and the pool; a test-mode setup adds "|", its
# table's sets in codes (joined by "/") and "|" the seats' melded flags as 0 and 1. A
# 4-player deal takes 112 bytes (its codes joined by spaces would take 340).
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTER_OF = {
    code: _LETTERS[i] for i, code in enumerate(f"{c}{n}" for c in "RBKO" for n in range(1, 14))
}
_LETTER_OF["J"] = "*"
_TILE_OF = {letter: parse_tiles([code])[0] for code, letter in _LETTER_OF.items()}


def _letters(tiles: tuple[Tile, ...]) -> str:
    return "".join([_LETTER_OF[tile.plain.code] for tile in tiles])


def _deal_row_of(dealt: Dealt | None) -> str:
    if dealt is None:
        return ""
    row = ",".join(map(_letters, dealt.racks)) + "|" + _letters(dealt.pool)
    if dealt.table or dealt.melded:
        table = "/".join(" ".join(codes_of(tiles)) for tiles in dealt.table)
        row += "|" + table + "|" + "".join("1" if flag else "0" for flag in dealt.melded)
    return row


def _deal_rows_of(deals: tuple[Dealt | None, ...]) -> tuple[str, ...]:
    return tuple(map(_deal_row_of, deals))


_deal_rows = per_object(_deal_rows_of, 4096)


@lru_cache(maxsize=1024)
def _deal_of_row(row: str) -> Dealt | None:
    if not isinstance(row, str):
        raise TypeError(f"a deal is stored as a string, not {type(row).__name__}")
    if not row:
        return None
    racks, pool, *setup = row.split("|")
    table, melded = setup if setup else ("", "")
    return Dealt(
        tuple(tuple(map(_TILE_OF.__getitem__, rack)) for rack in racks.split(",")),
        tuple(map(_TILE_OF.__getitem__, pool)),  # no generator a letter: decoded on every read
        tuple(parse_tiles(tiles.split()) for tiles in table.split("/")) if table else (),
        tuple(flag == "1" for flag in melded),
    )


def to_dict_format_1(match: Match) -> dict[str, Any]:
    """Return the whole state of ``match`` in format 1 (as stored before format 2; tests
    and tools read it)."""
    return {
        "format": 1,
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
        "owner_reissued": list(match.owner_reissued),
        "banks": list(match.banks),
        "flagged": list(match.flagged),
        "turns_played": match.turns_played,
    }


def event_to_dict(event: Event) -> dict[str, Any]:
    """Return ``event`` as a JSON-ready dict (also the form clients see in the event log)."""
    return {
        "type": event.type._value_,  # as .value (a Python-level property: 1,400 instructions)
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
    """Return every rule option by name, enums as their values, the clock as a dict (a new
    dict each time, its dicts copies too)."""
    kept, nested = _rules_dict(rules)
    copy = dict(kept)
    for name in nested:
        copy[name] = dict(copy[name])
    return copy


def _rules_dict_of(rules: Rules) -> tuple[dict[str, Any], tuple[str, ...]]:
    items = _rules_items(rules)
    return dict(items), tuple(name for name, value in items if isinstance(value, dict))


@lru_cache(maxsize=256)
def _rules_items_of(rules: Rules) -> tuple[tuple[str, Any], ...]:
    return tuple((field.name, _plain(getattr(rules, field.name))) for field in fields(Rules))


# Every stored state and view holds the rules: worked out once per options (lru_cache) and
# found by the object itself first (a match's rules are one object from decoding on, and
# hashing a Rules hashes every option).
_rules_items = per_object(_rules_items_of, 1024)
# Every view shows them (a copy of the dict worked out once per object: 24,500 instructions
# a view for the comprehension, against 6,000).
_rules_dict = per_object(_rules_dict_of, 1024)


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
        if isinstance(default, enum.Enum):
            value = type(default)(value)
        elif isinstance(default, Clock):
            value = clock_from_dict(value)
        values[name] = value
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
    if isinstance(value, Clock):
        return clock_to_dict(value)
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
        owner=_optional_str(data.get("owner")),  # these are absent in older stored states
        rematch_id=_optional_str(data.get("rematch_id")),
        owner_reissued=tuple(int(seat) for seat in data.get("owner_reissued") or ()),
        banks=tuple(float(bank) for bank in data.get("banks") or ()),
        flagged=tuple(int(seat) for seat in data.get("flagged") or ()),
        turns_played=int(data.get("turns_played") or 0),
    )
