"""Replaying a record under its rules: :func:`verify` a whole game, :func:`position` after turn k.

The replay drives the game core itself (:mod:`service.game`): a match is set up from the
record's deal and every turn is applied with the same transition a live seat's request
goes through, so a wrong play is refused with the very violations a refused play gets.
Beside those, a :class:`Finding` has codes of its own (:class:`RecordFault`): a deal that is
not the tile set, a draw that is not the pool's next tile, a turn out of order, a stated
result or score that differs from the rules'.

Verification is bounded: the solver, which decides whether a pass was allowed and proves a
stalemate the referee declared, gets :data:`SOLVER_BUDGET` seconds in all; a question it
cannot answer in time is a finding (``pass_unproven``, ``stalemate_unproven``), never a guess.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace

from service import game
from service.game import Ending, Match, PlayerSpec, Setup, Status
from service.game.deal import HAND_SIZE
from service.game.ending import stalemate
from service.record.errors import RecordFormatError, RecordIncomplete
from service.record.findings import Finding, Position, RecordFault, Verdict, finding
from service.record.model import Action, By, Record, Result, Turn
from service.rules import (
    FirstPlayerJoker,
    IllegalTurn,
    Rules,
    StalemateEnd,
    Tile,
    codes_of,
    full_set,
    parse_tiles,
)
from service.rules.solver import can_play

__all__ = [
    "SOLVER_BUDGET",
    "Finding",
    "Position",
    "RecordFault",
    "Verdict",
    "position",
    "positions",
    "result_of",
    "verify",
]

SOLVER_BUDGET = 10.0  # seconds of solver time one verification may spend in all
SEARCH_BUDGET = 3.0  # ... and one search
TIME_SLACK = 0.001  # seconds: a timeout recorded this much before its deadline still counts
RECORD_ID = "record"


class _Budget:
    """The solver's time left for one verification (``clock`` is monotonic seconds)."""

    def __init__(self, seconds: float | None, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.ends = None if seconds is None else clock() + seconds
        self.gave_up = False

    def can_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> bool | None:
        left = None if self.ends is None else max(0.0, self.ends - self.clock())
        budget = None if left is None else min(left, SEARCH_BUDGET)
        found = can_play(table, rack, melded=melded, rules=rules, time_budget=budget)
        self.gave_up = self.gave_up or found is None
        return found


# -- starting ----------------------------------------------------------------------------------


def _start(record: Record) -> Match:
    """The match as the record's game started (raise RecordIncomplete, RecordFormatError)."""
    _require_whole(record)
    deal = record.deal
    players = [PlayerSpec(player.name, player.bot) for player in record.players]
    try:
        setup = Setup(
            tuple(parse_tiles(rack) for rack in deal.racks),
            parse_tiles(deal.pool),
            tuple(parse_tiles(tiles) for tiles in deal.table),
            deal.melded or None,
            record.first_seat,
        )
        created = game.from_setup(
            RECORD_ID, players, rules=record.rules, setup=setup, now=record.started_at
        )
    except game.InvalidMatch as error:
        raise RecordFormatError("", f"no game can start from this record: {error}") from None
    return created.match


def _require_whole(record: Record) -> None:
    if record.hidden:
        raise RecordIncomplete(
            "the record hides tiles (it was exported while its game was on): "
            "only a finished game's whole record can be replayed"
        )


def _deal_findings(record: Record) -> list[Finding]:
    deal = record.deal
    box = full_set(record.rules.tile_set)
    dealt = Counter(
        tile.plain for tiles in (*deal.racks, deal.pool, *deal.table) for tile in parse_tiles(tiles)
    )
    findings = []
    if dealt != box:
        missing, extra = box - dealt, dealt - box
        findings.append(
            finding(
                RecordFault.DEAL_NOT_TILE_SET,
                f"the deal is not the {record.rules.tile_set.value} set: "
                f"missing {' '.join(_codes(missing)) or '-'}; "
                f"extra {' '.join(_codes(extra)) or '-'}",
                missing=_codes(missing),
                extra=_codes(extra),
            )
        )
    for seat, rack in enumerate(deal.racks):
        if len(rack) != HAND_SIZE:
            findings.append(
                finding(
                    RecordFault.DEAL_RACK_SIZE,
                    f"seat {seat} was dealt {len(rack)} tiles, not {HAND_SIZE}",
                    seat=seat,
                    count=len(rack),
                    expected=HAND_SIZE,
                )
            )
    if deal.table or deal.melded:
        findings.append(
            finding(
                RecordFault.DEAL_NOT_FROM_BOX,
                "a game starts with an empty table and nobody melded (this one was set up)",
            )
        )
    findings += _first_draw_findings(record)
    return findings


def _first_draw_findings(record: Record) -> list[Finding]:
    draw = record.first_player_draw
    if draw is None:
        return []
    again = record.rules.first_player_joker is FirstPlayerJoker.DRAW_AGAIN
    contenders = list(range(len(record.players)))
    for number, round_ in enumerate(draw.rounds, start=1):
        wrong = [seat for seat, _ in round_] != contenders
        values = {}
        for seat, codes in round_:
            tiles = parse_tiles(codes)
            if not tiles:  # a seat that drew nothing: not a draw by the rules
                return [_first_draw_wrong(f"round {number} is not drawn by the rules")]
            jokers_then_one = all(t.is_joker for t in tiles[:-1])
            wrong = wrong or not jokers_then_one or (not again and len(tiles) != 1)
            wrong = wrong or (again and tiles[-1].is_joker)
            values[seat] = 30 if tiles[-1].number is None else tiles[-1].number
        if wrong:
            return [_first_draw_wrong(f"round {number} is not drawn by the rules")]
        best = max(values.values())
        contenders = [seat for seat in contenders if values[seat] == best]
        if len(contenders) == 1 and number < len(draw.rounds):
            return [_first_draw_wrong(f"seat {contenders[0]} had won by round {number}")]
    if contenders != [draw.first_seat] or draw.first_seat != record.first_seat:
        return [_first_draw_wrong("the seat that starts is not the one the draw gives")]
    return []


def _first_draw_wrong(message: str) -> Finding:
    return finding(RecordFault.FIRST_PLAYER_DRAW_WRONG, f"the first-player draw: {message}")


def _codes(tiles: Counter[Tile]) -> list[str]:
    return codes_of(game.state.sorted_rack(tiles.elements()))


# -- one turn ----------------------------------------------------------------------------------


class _Wrong(Exception):
    def __init__(self, findings: Iterable[Finding]) -> None:
        super().__init__()
        self.findings = tuple(findings)


def _apply(match: Match, turn: Turn, last_at: float, budget: _Budget | None) -> Match:
    """The match after ``turn``; raise :class:`_Wrong` with what is wrong with it."""
    if match.status is not Status.PLAYING:
        raise _Wrong([finding(RecordFault.TURN_AFTER_GAME_END, "the game was already over")])
    if turn.at < last_at:
        raise _Wrong(
            [
                finding(
                    RecordFault.TIME_OUT_OF_ORDER,
                    f"it ended at {turn.at}, before the turn before it ({last_at})",
                    at=turn.at,
                    previous=last_at,
                )
            ]
        )
    deadline = match.turn_deadline
    if turn.action is not Action.TIMEOUT and deadline is not None and turn.at >= deadline:
        raise _Wrong(
            [
                finding(
                    RecordFault.DEADLINE_PASSED,
                    f"seat {match.current_seat}'s turn ran out at {deadline}, before this",
                    seat=match.current_seat,
                    deadline=deadline,
                )
            ]
        )
    if turn.action is Action.LEAVE:
        return _leave(match, turn)
    if turn.action is Action.GIVE:
        return _give(match, turn)
    if turn.seat != match.current_seat:
        raise _Wrong(
            [
                finding(
                    RecordFault.NOT_YOUR_TURN,
                    f"it was seat {match.current_seat}'s turn, not seat {turn.seat}'s",
                    seat=turn.seat,
                    current_seat=match.current_seat,
                )
            ]
        )
    expected = (
        By.REFEREE
        if turn.action is Action.TIMEOUT
        else By.BOT
        if match.players[turn.seat].bot
        else By.PLAYER
    )
    if turn.by is not expected:
        raise _Wrong(
            [
                finding(
                    RecordFault.WRONG_ACTOR,
                    f'"by" is "{expected.value}" for this turn, not "{turn.by.value}"',
                    by=turn.by.value,
                    expected=expected.value,
                )
            ]
        )
    if turn.action is Action.PLAY:
        return _play(match, turn)
    if turn.action is Action.DRAW:
        return _draw(match, turn)
    if turn.action is Action.PASS:
        return _pass(match, turn, budget)
    return _timeout(match, turn)


def _play(match: Match, turn: Turn) -> Match:
    table = tuple(parse_tiles(tiles) for tiles in turn.table)
    try:
        transition = game.play(match, turn.seat, table, now=turn.at)
    except IllegalTurn as refused:
        raise _Wrong(Finding(v.code, v.message, v.params) for v in refused.violations) from None
    added = [str(code) for code in transition.events[0].data["added"]]  # type: ignore[attr-defined]
    if Counter(turn.placed) != Counter(added):
        raise _Wrong(
            [
                finding(
                    RecordFault.PLACED_WRONG,
                    f"the play placed {' '.join(added)}, not {' '.join(turn.placed) or '-'}",
                    tiles=list(added),
                    recorded=list(turn.placed),
                )
            ]
        )
    return transition.match


def _draw(match: Match, turn: Turn) -> Match:
    if not match.pool:
        raise _Wrong([finding(RecordFault.POOL_EMPTY, "the pool was empty: nothing to draw")])
    _check_drawn(match, turn, 1)
    return game.draw(match, turn.seat, now=turn.at).match


def _check_drawn(match: Match, turn: Turn, count: int) -> None:
    expected = codes_of(match.pool[:count])
    if list(turn.drawn) != expected:
        raise _Wrong(
            [
                finding(
                    RecordFault.DRAW_NOT_FROM_POOL,
                    f"the pool's next tiles were {' '.join(expected) or '-'}, "
                    f"not {' '.join(turn.drawn) or '-'}",
                    tiles=expected,
                    recorded=list(turn.drawn),
                )
            ]
        )


def _pass(match: Match, turn: Turn, budget: _Budget | None) -> Match:
    if match.pool:
        raise _Wrong(
            [
                finding(
                    RecordFault.POOL_NOT_EMPTY,
                    f"the pool still held {len(match.pool)} tiles: a pass needs an empty pool",
                    pool_count=len(match.pool),
                )
            ]
        )
    checker = None if budget is None else budget.can_play
    try:
        transition = game.pass_turn(match, turn.seat, now=turn.at, can_play=checker)
    except game.PassRefused:
        raise _Wrong(
            [finding(RecordFault.PASS_REFUSED, "a legal play existed: a pass was not allowed")]
        ) from None
    if budget is not None and budget.gave_up:
        raise _Wrong(
            [
                finding(
                    RecordFault.PASS_UNPROVEN,
                    "the referee could not decide in its time budget whether a play existed",
                )
            ]
        )
    return transition.match


def _timeout(match: Match, turn: Turn) -> Match:
    deadline = match.turn_deadline
    if deadline is None:
        raise _Wrong(
            [finding(RecordFault.TIMEOUT_WITHOUT_LIMIT, "the game's turns have no time limit")]
        )
    if turn.at < deadline - TIME_SLACK:
        raise _Wrong(
            [
                finding(
                    RecordFault.TIMEOUT_BEFORE_DEADLINE,
                    f"the turn ran out at {deadline}, not at {turn.at}",
                    deadline=deadline,
                    at=turn.at,
                )
            ]
        )
    owed = match.rules.failed_turn_penalty if turn.reverted else 1
    _check_drawn(match, turn, owed)
    seat = match.current_seat
    rack = match.players[seat].rack
    # the draft only tells the game whether the table was changed: a set of one rack tile does
    draft = (*match.table, (rack[0],)) if turn.reverted and rack else None
    return game.settle(replace(match, draft=draft), now=deadline).match


def _give(match: Match, turn: Turn) -> Match:
    try:  # who gave is not replayed: the record says another seat or the app, never the seat
        return game.give_time(match, turn.seat, turn.seconds, by=None, now=turn.at).match
    except game.GameError as refused:
        raise _Wrong([finding(RecordFault.GIVE_REFUSED, str(refused))]) from None


def _leave(match: Match, turn: Turn) -> Match:
    if turn.by is not By.PLAYER:
        raise _Wrong(
            [
                finding(
                    RecordFault.WRONG_ACTOR,
                    f'"by" is "player" for a leave, not "{turn.by.value}"',
                    by=turn.by.value,
                    expected=By.PLAYER.value,
                )
            ]
        )
    if match.players[turn.seat].bot:
        raise _Wrong(
            [finding(RecordFault.SEAT_IS_BOT, f"seat {turn.seat} is played by a bot already")]
        )
    return game.leave(match, turn.seat, now=turn.at).match


# -- the end -----------------------------------------------------------------------------------


def result_of(match: Match) -> Result | None:
    """The result of the match's game once it is over (``None`` while it is played)."""
    if match.status is Status.PLAYING or not match.outcomes:
        return None
    last = match.outcomes[-1]
    return Result(
        reason=last.outcome.reason.value,
        ending=last.ending.value,
        winner=last.outcome.winner,
        scores=last.outcome.scores,
        racks=tuple(tuple(codes_of(player.rack)) for player in match.players),
    )


def _declared_stalemate(match: Match, stated: Result, at: float, budget: _Budget) -> Match:
    """The match ended as ``stated`` says the referee declared it (the solver's proof), or
    raise :class:`_Wrong`."""
    proven = {
        Ending.NOBODY_CAN_PLAY.value: StalemateEnd.NOBODY_CAN_PLAY,
        Ending.FIRST_CANNOT_PLAY.value: StalemateEnd.FIRST_CANNOT_PLAY,
    }
    if (
        stated.ending not in proven
        or match.pool
        or match.rules.stalemate_end is not proven[stated.ending]
    ):
        raise _Wrong(
            [finding(RecordFault.GAME_NOT_OVER, "the game was not over after the last turn")]
        )
    seats = (
        range(len(match.players))
        if stated.ending == Ending.NOBODY_CAN_PLAY.value
        else [match.current_seat]
    )
    for seat in seats:
        player = match.players[seat]
        found = budget.can_play(match.table, Counter(player.rack), player.melded, match.rules)
        if found is None:
            raise _Wrong(
                [
                    finding(
                        RecordFault.STALEMATE_UNPROVEN,
                        "the referee could not prove in its time budget that nobody could play",
                    )
                ]
            )
        if found:
            raise _Wrong(
                [
                    finding(
                        RecordFault.GAME_NOT_OVER,
                        f"seat {seat} could still play: the game was not over",
                        seat=seat,
                    )
                ]
            )
    ending = Ending(stated.ending)
    return stalemate(match, ending, next_seat=match.current_seat, at=at).match


def _result_findings(stated: Result, expected: Result) -> list[Finding]:
    findings = []
    said = (stated.reason, stated.ending, stated.winner)
    given = (expected.reason, expected.ending, expected.winner)
    if said != given:
        winner = "-" if expected.winner is None else str(expected.winner)
        findings.append(
            finding(
                RecordFault.RESULT_WRONG,
                f"the game ended {expected.ending} ({expected.reason}); the winner: {winner}",
                reason=expected.reason,
                ending=expected.ending,
                winner=expected.winner,
            )
        )
    if stated.scores != expected.scores:
        findings.append(
            finding(
                RecordFault.SCORE_WRONG,
                f"the scores are {' '.join(map(str, expected.scores))}, "
                f"not {' '.join(map(str, stated.scores))}",
                scores=list(expected.scores),
            )
        )
    stated_racks = [Counter(rack) for rack in stated.racks]
    if stated_racks != [Counter(rack) for rack in expected.racks]:
        findings.append(
            finding(
                RecordFault.RACKS_WRONG,
                "the racks left are not those the turns leave",
                racks=[list(rack) for rack in expected.racks],
            )
        )
    return findings


# -- the use cases -----------------------------------------------------------------------------


def verify(
    record: Record,
    *,
    solver_budget: float | None = SOLVER_BUDGET,
    clock: Callable[[], float] = time.monotonic,
    deal: bool = True,
) -> Verdict:
    """Replay ``record`` from its deal under its rules and say whether it holds (``deal=False``
    leaves out the deal's checks: the turns of a game dealt from a test-mode setup).

    Raises :class:`RecordIncomplete` for a record with hidden tiles and
    :class:`RecordFormatError` for players or rules no game can start with.
    """
    _require_whole(record)
    findings = _deal_findings(record) if deal else []
    if findings:
        return Verdict(False, 0, tuple(findings))
    match = _start(record)
    budget = _Budget(solver_budget, clock)
    last_at = record.started_at
    for turn in record.turns:
        try:
            match = _apply(match, turn, last_at, budget)
        except _Wrong as wrong:
            return Verdict(False, turn.n, wrong.findings)
        last_at = turn.at
    stated = record.result
    expected = result_of(match)
    if expected is None and stated is not None:
        try:
            match = _declared_stalemate(match, stated, last_at, budget)
        except _Wrong as wrong:
            return Verdict(False, None, wrong.findings)
        expected = result_of(match)
    if expected is None:
        return Verdict(True)
    if stated is None:
        missing = finding(RecordFault.RESULT_MISSING, "the game is over: its result is missing")
        return Verdict(False, None, (missing,), expected)
    findings = _result_findings(stated, expected)
    return Verdict(not findings, None, tuple(findings), expected)


def positions(record: Record) -> list[Position]:
    """Every position of ``record``'s game: as dealt (turn 0), then after each turn; the last
    one carries the stated result. Raises :class:`RecordIncomplete`, or
    :class:`RecordFormatError` at a turn the game refuses (naming it)."""
    match = _start(record)
    found = [Position(0, match, None)]
    last_at = record.started_at
    for turn in record.turns:
        try:
            match = _apply(match, turn, last_at, None)
        except _Wrong as wrong:
            codes = ", ".join(finding.code for finding in wrong.findings)
            where = f"turns.{turn.n - 1}"
            raise RecordFormatError(where, f"turn {turn.n} breaks the rules: {codes}") from None
        last_at = turn.at
        found.append(Position(turn.n, match, result_of(match)))
    stated = record.result
    if found[-1].result is None and stated is not None:
        if stated.ending in _DECLARED and match.status is Status.PLAYING:  # the referee's proof
            match = stalemate(
                match, Ending(stated.ending), next_seat=match.current_seat, at=last_at
            ).match
        found[-1] = Position(found[-1].turn, match, result_of(match) or stated)
    return found


_DECLARED = frozenset({Ending.NOBODY_CAN_PLAY.value, Ending.FIRST_CANNOT_PLAY.value})


def position(record: Record, turn: int) -> Position:
    """The position after turn ``turn`` (0: as dealt); see :func:`positions`. Raises
    ``IndexError`` for a turn the record does not have."""
    if not 0 <= turn <= len(record.turns):
        raise IndexError(f"the record has turns 0 to {len(record.turns)}, not {turn}")
    last = turn == len(record.turns)
    shortened = replace(record, turns=record.turns[:turn], result=record.result if last else None)
    return positions(shortened)[-1]
