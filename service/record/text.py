"""The text form of a record, in the spirit of PGN: :func:`to_text` and :func:`from_text`.

The first line names the format; then one tag a line (``[Name "value"]``, the value a JSON
string), a blank line, and one line a turn::

    rummikub-record/1
    [Match "Xy12"]
    [Game "1"]
    ...
    1 0 play player 1764780003.5 R7 R8 R9 / B3 B4 J=B5 : R7 R8 R9
    2 1 draw bot 1764780003.5 K3
    3 2 timeout referee 1764780063.5 reverted K4 O1 O2
    4 3 pass player 1764780070.25

:func:`from_text` builds the JSON form and reads it with :func:`service.record.from_json`, so
both forms are checked alike; the two round-trip (docs/RECORD-FORMAT.md has the grammar).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from service.record.errors import RecordFormatError
from service.record.jsonform import MAX_TURNS, from_json, rules_to_json, to_json
from service.record.model import FORMAT, Action, Record

__all__ = ["from_text", "to_text"]

_TAG = re.compile(r'\[([A-Za-z]+) ("(?:[^"\\]|\\.)*")\]')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_MAX_LINES = MAX_TURNS + 64


def to_text(record: Record) -> str:
    """Return ``record`` in the text form (lines end with a newline)."""
    data = to_json(record)
    lines = [FORMAT]
    tag = lines.append
    tag(_tag("Match", record.match_id))
    tag(_tag("Game", str(record.game_number)))
    tag(_tag("Rules", " ".join(f"{k}={_value(v)}" for k, v in rules_to_json(record.rules).items())))
    for player in record.players:
        tag(_tag("Player", f"{player.seat} {'bot' if player.bot else 'player'} {player.name}"))
    for player in record.players:
        if player.ref is not None:
            tag(_tag("Ref", f"{player.seat} {player.ref}"))
    if record.first_player_draw is not None:
        rounds = "; ".join(
            " ".join(f"{seat}:{','.join(tiles)}" for seat, tiles in round_)
            for round_ in record.first_player_draw.rounds
        )
        tag(_tag("FirstDraw", f"{record.first_player_draw.first_seat} {rounds}"))
    tag(_tag("FirstSeat", str(record.first_seat)))
    tag(_tag("Started", _number(record.started_at)))
    for seat, rack in enumerate(record.deal.racks):
        tag(_tag("Rack", " ".join((str(seat), *rack))))
    tag(_tag("Pool", " ".join(record.deal.pool)))
    if record.deal.table:
        tag(_tag("Table", _sets(record.deal.table)))
    if record.deal.melded:
        tag(_tag("Melded", " ".join(str(s) for s, flag in enumerate(record.deal.melded) if flag)))
    if record.result is not None:
        result = record.result
        winner = "-" if result.winner is None else str(result.winner)
        tag(_tag("Result", f"{result.reason} {result.ending} {winner}"))
        tag(_tag("Scores", " ".join(map(str, result.scores))))
        for seat, rack in enumerate(result.racks):
            tag(_tag("Left", " ".join((str(seat), *rack))))
    lines.append("")
    lines += [_turn_line(entry) for entry in data["turns"]]
    return "\n".join(lines) + "\n"


def _tag(name: str, value: str) -> str:
    return f"[{name} {json.dumps(value, ensure_ascii=False)}]"


def _value(value: object) -> str:
    # compact: a rule option is one word (the clock is an object: {"type":"turn"})
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _number(value: float) -> str:
    return json.dumps(value)


def _sets(table: Any) -> str:
    return " / ".join(" ".join(tiles) for tiles in table)


def _turn_line(entry: dict[str, Any]) -> str:
    head = f"{entry['n']} {entry['seat']} {entry['action']} {entry['by']} {_number(entry['at'])}"
    action = Action(entry["action"])
    if action is Action.PLAY:
        return f"{head} {_sets(entry['table'])} : {' '.join(entry['placed'])}".rstrip()
    if action is Action.DRAW:
        return " ".join((head, *entry["drawn"]))
    if action is Action.TIMEOUT:
        return " ".join((head, "reverted" if entry["reverted"] else "kept", *entry["drawn"]))
    if action is Action.GIVE:
        return f"{head} {entry['seconds']}"
    return head


# -- reading ----------------------------------------------------------------------------------


def from_text(text: str) -> Record:
    """Return the record written as ``text``; raise :class:`RecordFormatError` naming the line."""
    lines = text.splitlines()
    if len(lines) > _MAX_LINES:
        raise RecordFormatError("", f"a record has at most {_MAX_LINES} lines")
    if not lines or lines[0].strip() != FORMAT:
        raise RecordFormatError("line 1", f"the first line must be {FORMAT}")
    tags: list[tuple[int, str, str]] = []
    number = 1
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            break
        tags.append((number, *_read_tag(line, number)))
    else:
        number = len(lines) + 1
    data = _header(tags)
    data["turns"] = [
        _read_turn(line, at)
        for at, line in enumerate(lines[number:], start=number + 1)
        if line.strip()
    ]
    return from_json(data)


def _read_tag(line: str, number: int) -> tuple[str, str]:
    found = _TAG.fullmatch(line.strip())
    if found is None:
        raise RecordFormatError(f"line {number}", 'a tag is written [Name "value"]')
    try:
        value = json.loads(found.group(2))
    except ValueError:
        raise RecordFormatError(f"line {number}", "the tag's value is not a JSON string") from None
    return found.group(1), value


def _header(tags: list[tuple[int, str, str]]) -> dict[str, Any]:
    data: dict[str, Any] = {"format": FORMAT, "players": [], "first_player_draw": None}
    racks: dict[int, list[str]] = {}
    left: dict[int, list[str]] = {}
    refs: dict[int, str] = {}
    result: dict[str, Any] = {}
    deal: dict[str, Any] = {}
    for number, name, value in tags:
        where = f"line {number}"
        words = value.split()
        if name == "Match":
            data["match_id"] = value
        elif name == "Game":
            data["game_number"] = _int(value, where)
        elif name == "Rules":
            data["rules"] = dict(_option(word, where) for word in words)
        elif name == "Player":
            seat, kind, player = [*value.split(" ", 2), "", ""][:3]
            if kind not in ("player", "bot"):
                raise RecordFormatError(where, 'a player is written "<seat> player|bot <name>"')
            data["players"].append(
                {"seat": _int(seat, where), "name": player, "bot": kind == "bot"}
            )
        elif name == "Ref":
            seat, _, ref = value.partition(" ")
            refs[_int(seat, where)] = ref
        elif name == "FirstDraw":
            data["first_player_draw"] = _first_draw(words, where)
        elif name == "FirstSeat":
            data["first_seat"] = _int(value, where)
        elif name == "Started":
            data["started_at"] = _float(value, where)
        elif name == "Rack":
            racks[_int(words[0] if words else "", where)] = words[1:]
        elif name == "Pool":
            deal["pool"] = words
        elif name == "Table":
            deal["table"] = _read_sets(value)
        elif name == "Melded":
            deal["melded_seats"] = [_int(word, where) for word in words]
        elif name == "Result":
            if len(words) != 3:
                raise RecordFormatError(where, 'a result is written "<reason> <ending> <winner|->"')
            result.update(reason=words[0], ending=words[1])
            result["winner"] = None if words[2] == "-" else _int(words[2], where)
        elif name == "Scores":
            result["scores"] = [_int(word, where) for word in words]
        elif name == "Left":
            left[_int(words[0] if words else "", where)] = words[1:]
    for player in data["players"]:
        if player["seat"] in refs:
            player["ref"] = refs[player["seat"]]
    seats = len(data["players"])
    melded = deal.pop("melded_seats", [])
    deal["racks"] = [racks.get(seat) for seat in range(seats)]
    deal["melded"] = [seat in melded for seat in range(seats)]
    data["deal"] = deal
    if result:
        result["racks"] = [left.get(seat, []) for seat in range(seats)]
    data["result"] = result or None
    return data


def _option(word: str, where: str) -> tuple[str, Any]:
    name, equals, value = word.partition("=")
    if not equals:
        raise RecordFormatError(where, "rule options are written name=value")
    if value in ("true", "false", "null") or _NUMBER.fullmatch(value):
        return name, json.loads(value)
    if value.startswith("{"):
        try:
            return name, json.loads(value)
        except ValueError:
            raise RecordFormatError(where, f"{name}: not a JSON object") from None
    return name, value


def _first_draw(words: list[str], where: str) -> dict[str, Any]:
    if not words:
        raise RecordFormatError(where, 'the first draw is written "<first seat> 0:R7 1:J,K12; ..."')
    rounds: list[list[dict[str, Any]]] = [[]]
    for word in words[1:]:
        closes = word.endswith(";")
        seat, colon, tiles = word.rstrip(";").partition(":")
        if not colon:
            raise RecordFormatError(where, "each draw is written <seat>:<tiles joined by commas>")
        rounds[-1].append({"seat": _int(seat, where), "tiles": tiles.split(",")})
        if closes:
            rounds.append([])
    return {"rounds": [round_ for round_ in rounds if round_], "first_seat": _int(words[0], where)}


def _read_sets(text: str) -> list[list[str]]:
    return [part.split() for part in text.split("/")] if text.strip() else []


def _read_turn(line: str, number: int) -> dict[str, Any]:
    where = f"line {number}"
    words = line.split()
    if len(words) < 5:
        raise RecordFormatError(where, "a turn is written <n> <seat> <action> <by> <time> ...")
    entry: dict[str, Any] = {
        "n": _int(words[0], where),
        "seat": _int(words[1], where),
        "action": words[2],
        "by": words[3],
        "at": _float(words[4], where),
    }
    rest = words[5:]
    if words[2] == "play":
        if ":" not in rest:
            raise RecordFormatError(where, "a play is written <table> : <tiles placed>")
        split = rest.index(":")
        entry["table"] = _read_sets(" ".join(rest[:split]))
        entry["placed"] = rest[split + 1 :]
    elif words[2] == "draw":
        entry["drawn"] = rest
    elif words[2] == "timeout":
        if not rest or rest[0] not in ("kept", "reverted"):
            raise RecordFormatError(where, "a timeout is written ... kept|reverted <tiles drawn>")
        entry["reverted"] = rest[0] == "reverted"
        entry["drawn"] = rest[1:]
    elif words[2] == "give":
        if len(rest) != 1:
            raise RecordFormatError(where, "time given is written ... give <by> <time> <seconds>")
        entry["seconds"] = _int(rest[0], where)
    return entry


def _int(word: str, where: str) -> int:
    if not re.fullmatch(r"-?[0-9]{1,9}", word):
        raise RecordFormatError(where, f"{word!r} is not a whole number")
    return int(word)


def _float(word: str, where: str) -> float:
    if not _NUMBER.fullmatch(word) or len(word) > 40 or not math.isfinite(float(word)):
        raise RecordFormatError(where, f"{word!r} is not a number")
    return float(word)
