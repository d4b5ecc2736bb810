"""Random games with bots and humans: export, verify and replay agree; one changed turn is named."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from service import record
from service.game import Status
from service.record import Action, By
from service.rules import FAILED_TURN_PENALTIES, Rules, StalemateEnd, TileSet
from tests.record.games import Played, random_game, seeded, with_turn


@st.composite
def games(draw_from: st.DrawFn) -> Played:
    seats = draw_from(st.integers(2, 4), label="seats")
    xp = draw_from(st.booleans(), label="xp") and seats >= 3
    rules = Rules(
        tile_set=TileSet.XP if xp else TileSet.STANDARD,
        turn_seconds=draw_from(st.sampled_from([0, 60])),
        initial_meld_points=draw_from(st.sampled_from([0, 30])),
        stalemate_end=draw_from(st.sampled_from(list(StalemateEnd))),
        failed_turn_penalty=draw_from(st.sampled_from(FAILED_TURN_PENALTIES)),
    )
    bots = tuple(draw_from(st.lists(st.booleans(), min_size=seats, max_size=seats)))
    choose, pick = seeded(draw_from(st.integers(0, 2**32), label="moves"))
    return random_game(
        seats, rules=rules, seed=draw_from(st.integers(0, 2**32)), bots=bots,
        choose=choose, pick=pick,
    )  # fmt: skip


@settings(max_examples=40)
@given(played=games())
def test_every_game_exports_a_record_that_verifies_with_its_scores(played: Played) -> None:
    game_record = played.record()
    verdict = record.verify(game_record, solver_budget=None)
    assert verdict.valid, verdict
    over = played.match.status is not Status.PLAYING
    assert (game_record.result is not None) == over
    if over:
        assert verdict.result == game_record.result
        assert list(game_record.result.scores) == list(played.match.outcomes[-1].outcome.scores)


@settings(max_examples=40)
@given(played=games())
def test_both_forms_round_trip(played: Played) -> None:
    game_record = played.record()
    assert record.from_json(json.loads(json.dumps(record.to_json(game_record)))) == game_record
    assert record.from_text(record.to_text(game_record)) == game_record


@settings(max_examples=30)
@given(played=games())
def test_the_position_after_each_turn_is_the_match_the_players_saw(played: Played) -> None:
    game_record = played.record()
    for match, logged in played.seen:
        turn = len(record.record_of(match, played.events[:logged], 1).turns)
        at = record.position(game_record, turn).match
        assert at.table == match.table
        assert at.pool == match.pool
        assert [Counter(p.rack) for p in at.players] == [Counter(p.rack) for p in match.players]
        assert [p.melded for p in at.players] == [p.melded for p in match.players]
        assert at.status == match.status
        if match.status is Status.PLAYING:
            assert at.current_seat == match.current_seat


def _mutated(game_record: record.Record, index: int, kind: str) -> record.Record:
    turn = game_record.turns[index]
    if kind == "by":
        wrong = By.PLAYER if turn.by is not By.PLAYER else By.BOT
        return with_turn(game_record, index, by=wrong)
    if kind == "seat" and turn.action is not Action.LEAVE:
        return with_turn(game_record, index, seat=(turn.seat + 1) % len(game_record.players))
    if turn.action is Action.PLAY:
        return with_turn(game_record, index, table=turn.table[:-1])
    if turn.action is Action.DRAW:
        other = "O13" if turn.drawn != ("O13",) else "R1"
        return with_turn(game_record, index, drawn=(other,))
    if turn.action is Action.TIMEOUT:
        return with_turn(game_record, index, drawn=(*turn.drawn, "R1"))
    if turn.action is Action.PASS:
        return with_turn(game_record, index, action=Action.DRAW, drawn=("R1",))
    return with_turn(game_record, index, by=By.REFEREE)


@settings(max_examples=60)
@given(played=games(), where=st.floats(0, 1, exclude_max=True), kind=st.sampled_from(
    ["by", "seat", "content"]
))  # fmt: skip
def test_changing_any_one_turn_makes_verification_name_that_turn(
    played: Played, where: float, kind: str
) -> None:
    game_record = played.record()
    if not game_record.turns:
        return
    index = int(where * len(game_record.turns))
    verdict = record.verify(_mutated(game_record, index, kind), solver_budget=None)
    assert not verdict.valid
    assert verdict.turn == index + 1, verdict


@settings(max_examples=20)
@given(played=games(), delta=st.integers(1, 40))
def test_a_wrong_score_is_named_as_the_result(played: Played, delta: int) -> None:
    game_record = played.record()
    if game_record.result is None:
        return
    scores = list(game_record.result.scores)
    scores[0] += delta
    scores[1] -= delta
    wrong = replace(game_record, result=replace(game_record.result, scores=tuple(scores)))
    verdict = record.verify(wrong, solver_budget=None)
    assert (verdict.valid, verdict.part) == (False, "result")
    assert [finding.code for finding in verdict.violations] == ["score_wrong"]
