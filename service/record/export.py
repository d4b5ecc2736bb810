"""A match's game as a record, what each reader may see of it, and positions for clients.

:func:`record_of` builds game n's record from what the match keeps: its public event log
(every play's table, every draw's count, timeouts, leaves, the result) and the deal of the
game (:attr:`service.game.Match.deals`), from whose pool the draws are read in order.
:func:`redacted` hides what a reader may not see yet; :func:`position_view` is the JSON a
client steps through; :func:`setup_at` starts a new match from any turn of a record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from service.game import EventType, Match, PlayerSpec, Setup, Status
from service.game.state import sorted_rack, table_codes
from service.record.errors import RecordFormatError
from service.record.jsonform import result_to_json, turn_to_json
from service.record.model import (
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
from service.record.replay import position
from service.rules import codes_of, parse_tiles

__all__ = ["NotRecorded", "position_view", "record_of", "redacted", "setup_at"]

Event = Mapping[str, Any]


class NotRecorded(LookupError):
    """The match has no record of that game (never dealt, or dealt before records were kept)."""

    kind = "game-not-recorded"


def record_of(match: Match, events: Sequence[Event], game_number: int) -> Record:
    """Game ``game_number`` of ``match`` as a whole record (nothing hidden; see
    :func:`redacted`); ``events`` is the match's public log from version 1. Raises
    :class:`NotRecorded`."""
    start = _game_start(events, game_number)
    deal = None if start is None else _deal_of(match, events[start:], game_number)
    if deal is None or start is None:
        raise NotRecorded(f"this match has no record of game {game_number}")
    bots = _bots_at(events, start)
    started = events[start]
    draw = _first_draw(events) if game_number == 1 else None
    turns, result = _turns(events[start + 1 :], game_number, deal, list(bots))
    return Record(
        match_id=match.id,
        game_number=game_number,
        rules=match.rules,
        players=tuple(
            RecordPlayer(seat, player.name, bots[seat], player.ref)
            for seat, player in enumerate(match.players)
        ),
        first_player_draw=draw,
        first_seat=int(started["data"]["first_seat"]),
        started_at=float(started["at"]),
        deal=deal,
        turns=tuple(turns),
        result=result,
    )


def _deal_of(match: Match, events: Sequence[Event], game_number: int) -> Deal | None:
    """Game ``game_number``'s deal: in its ``game_over`` event once it has ended, else in the
    match's state while it is played (``None``: not kept)."""
    for event in events:
        if event["type"] == EventType.GAME_OVER and event["data"].get("game_number") == game_number:
            shown = event["data"].get("deal")
            if shown is None:
                return None
            melded = tuple(bool(flag) for flag in shown.get("melded", ()))
            return Deal(
                racks=tuple(tuple(rack) for rack in shown["racks"]),
                pool=tuple(shown["pool"]),
                table=tuple(tuple(tiles) for tiles in shown.get("table", ())),
                melded=melded if any(melded) else (),
            )
    deals = match.deals
    dealt = deals[game_number - 1] if 1 <= game_number <= len(deals) else None
    if dealt is None:
        return None
    return Deal(
        racks=tuple(tuple(codes_of(rack)) for rack in dealt.racks),
        pool=tuple(codes_of(dealt.pool)),
        table=tuple(tuple(codes) for codes in table_codes(dealt.table)),
        melded=dealt.melded,
    )


def _game_start(events: Sequence[Event], game_number: int) -> int | None:
    for index, event in enumerate(events):
        if (
            event["type"] == EventType.GAME_STARTED
            and event["data"].get("game_number") == game_number
        ):
            return index
    return None


def _bots_at(events: Sequence[Event], start: int) -> list[bool]:
    """Which seats a bot played when the game starting at ``events[start]`` began."""
    created = next(event for event in events if event["type"] == EventType.MATCH_CREATED)
    bots = [bool(player["bot"]) for player in created["data"]["players"]]
    for event in events[:start]:
        if event["type"] == EventType.PLAYER_LEFT:
            bots[int(event["seat"])] = True
    return bots


def _first_draw(events: Sequence[Event]) -> FirstDraw | None:
    for event in events:
        if event["type"] == EventType.FIRST_PLAYER_DRAW:
            rounds = tuple(
                tuple((int(draw["seat"]), tuple(draw["tiles"])) for draw in round_)
                for round_ in event["data"]["rounds"]
            )
            return FirstDraw(rounds, int(event["data"]["first_seat"]))
        if event["type"] == EventType.GAME_STARTED:
            return None
    return None


def _turns(
    events: Sequence[Event], game_number: int, deal: Deal, bots: list[bool]
) -> tuple[list[Turn], Result | None]:
    turns: list[Turn] = []
    racks = [Counter(rack) for rack in deal.racks]
    pool = iter(deal.pool)
    timed_out: Event | None = None

    def add(seat: int, action: Action, by: By, at: float, **fields: Any) -> None:
        turns.append(Turn(len(turns) + 1, seat, action, by, at, **fields))

    def taken(seat: int, count: int) -> tuple[str, ...]:
        tiles = tuple(next(pool) for _ in range(count))
        racks[seat].update(tiles)
        return tiles

    for event in events:
        kind, seat, at, data = event["type"], event["seat"], float(event["at"]), event["data"]
        actor = By.BOT if seat is not None and bots[seat] else By.PLAYER
        if kind == EventType.TURN_TIMED_OUT:
            timed_out = event
        elif kind == EventType.PLAYED:
            placed = tuple(data["added"])
            racks[seat].subtract(placed)
            table = tuple(tuple(tiles) for tiles in data["table"])
            add(seat, Action.PLAY, actor, at, table=table, placed=placed)
        elif kind in (EventType.DREW, EventType.FLAG_FELL) and timed_out is not None:
            drawn = taken(seat, int(data["count"]))
            reverted = bool(timed_out["data"]["reverted"])
            add(seat, Action.TIMEOUT, By.REFEREE, at, drawn=drawn, reverted=reverted)
            timed_out = None
        elif kind == EventType.DREW:
            add(seat, Action.DRAW, actor, at, drawn=taken(seat, int(data["count"])))
        elif kind == EventType.PASSED and data.get("timed_out"):
            reverted = bool(timed_out and timed_out["data"]["reverted"])
            add(seat, Action.TIMEOUT, By.REFEREE, at, drawn=(), reverted=reverted)
            timed_out = None
        elif kind == EventType.PASSED:
            add(seat, Action.PASS, actor, at)
        elif kind == EventType.TIME_GIVEN:
            giver = By.REFEREE if data.get("by_seat") is None else By.PLAYER
            add(seat, Action.GIVE, giver, at, seconds=int(data["seconds"]))
        elif kind == EventType.PLAYER_LEFT:
            add(seat, Action.LEAVE, By.PLAYER, at)
            bots[seat] = True
        elif kind == EventType.GAME_OVER and data.get("game_number") == game_number:
            left = tuple(
                tuple(codes_of(sorted_rack(parse_tiles(rack.elements())))) for rack in racks
            )
            winner = data["winner"]
            result = Result(
                reason=str(data["reason"]),
                ending=str(data["ending"]),
                winner=None if winner is None else int(winner),
                scores=tuple(int(score) for score in data["scores"]),
                racks=left,
            )
            return turns, result
    return turns, None


def redacted(record: Record, *, seat: int | None, refs: bool) -> Record:
    """What a reader may see of ``record``: everything once the game is over, else the
    public part (no rack, no drawn tile, no pool) and ``seat``'s own rack and draws; the
    players' refs only with ``refs`` (the owner's key)."""
    players = record.players if refs else tuple(replace(p, ref=None) for p in record.players)
    if record.result is not None:
        return replace(record, players=players)
    deal = replace(
        record.deal,
        racks=tuple(
            rack if index == seat else (HIDDEN,) * len(rack)
            for index, rack in enumerate(record.deal.racks)
        ),
        pool=(HIDDEN,) * len(record.deal.pool),
    )
    turns = tuple(
        turn
        if turn.seat == seat or not turn.drawn
        else replace(turn, drawn=(HIDDEN,) * len(turn.drawn))
        for turn in record.turns
    )
    return replace(record, players=players, deal=deal, turns=turns)


def position_view(
    record: Record, turn: int, *, totals_before: Sequence[int] | None = None
) -> dict[str, Any]:
    """The JSON a client replays with: the game after ``turn`` (0: as dealt), with every
    rack once the game is over (``record.result`` given). ``totals_before``: each seat's
    match total before this game, so that ``score`` reads as in the match's view. Raises
    ``IndexError`` for a turn the record lacks, and what :func:`position` raises."""
    at = position(record, turn)
    match, result = at.match, at.result
    over = record.result is not None
    totals = list(totals_before or [0] * len(match.players))
    return {
        "turn": turn,
        "turns": len(record.turns),
        "game_number": record.game_number,
        "table": table_codes(match.table),
        "pool_count": len(match.pool),
        "current_seat": (
            match.current_seat if match.status is Status.PLAYING and result is None else None
        ),
        "players": [
            {
                "seat": seat,
                "name": player.name,
                "bot": player.bot,
                "left": player.left,
                "rack_count": len(player.rack),
                "melded": player.melded,
                "score": totals[seat] + (result.scores[seat] if result is not None else 0),
                **({"rack": codes_of(player.rack)} if over else {}),
            }
            for seat, player in enumerate(match.players)
        ],
        "last_turn": None if turn == 0 else turn_to_json(record.turns[turn - 1]),
        "result": None if result is None else result_to_json(result),
    }


def setup_at(record: Record, turn: int) -> tuple[tuple[PlayerSpec, ...], Setup]:
    """The players and the setup of a new game that starts where ``record`` is after
    ``turn``; raise :class:`RecordFormatError` for a turn the record lacks, or when the
    game is over there (and what :func:`position` raises)."""
    if not 0 <= turn <= len(record.turns):
        raise RecordFormatError("turn", f"the record has turns 0 to {len(record.turns)}")
    at = position(replace(record, result=None), turn)
    match = at.match
    if match.status is not Status.PLAYING:
        raise RecordFormatError("turn", f"the game is over after turn {turn}: nothing to play")
    players = tuple(PlayerSpec(player.name, player.bot) for player in match.players)
    setup = Setup(
        tuple(player.rack for player in match.players),
        match.pool,
        match.table,
        tuple(player.melded for player in match.players),
        match.current_seat,
    )
    return players, setup
