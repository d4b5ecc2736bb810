"""Verification, case by case: each wrong thing a record can hold, and the code that names it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from service import game, record
from service.game import Status
from service.record import Action, By, RecordIncomplete
from service.rules import IllegalTurn, Rules, TileSet, parse_tiles
from tests.record.games import NOW, bots_only, random_game, seeded, with_turn

FOUR_BOTS = bots_only(4, rules=Rules(), seed=11)


def codes(verdict: record.Verdict) -> list[str]:
    return [finding.code for finding in verdict.violations]


def first(played: record.Record, action: Action) -> int:
    return next(i for i, turn in enumerate(played.turns) if turn.action is action)


def test_a_game_played_by_the_referee_verifies_and_gives_its_result() -> None:
    played = FOUR_BOTS.record()
    verdict = record.verify(played)
    assert verdict.valid and verdict.turn is None and verdict.violations == ()
    assert verdict.result == played.result
    assert played.result is not None
    assert list(played.result.scores) == list(FOUR_BOTS.match.outcomes[-1].outcome.scores)


def test_a_play_the_referee_refuses_gets_the_same_violation_codes_as_a_refused_play() -> None:
    played = FOUR_BOTS.record()
    index = first(played, Action.PLAY)
    before = record.position(played, index).match
    seat = played.turns[index].seat
    wrong_table = (*before.table, parse_tiles(["R1", "B2", "K3"]))
    with pytest.raises(IllegalTurn) as refused:
        game.play(before, seat, wrong_table, now=played.turns[index].at)
    changed = with_turn(played, index, table=tuple(tuple(t.code for t in s) for s in wrong_table))
    verdict = record.verify(changed)
    assert verdict.turn == index + 1 and verdict.part == "turn"
    assert codes(verdict) == [violation.code for violation in refused.value.violations]


def test_a_draw_that_is_not_the_pools_next_tile_is_named() -> None:
    played = FOUR_BOTS.record()
    index = first(played, Action.DRAW)
    next_tile = played.turns[index].drawn[0]
    other = "O13" if next_tile != "O13" else "O12"
    verdict = record.verify(with_turn(played, index, drawn=(other,)))
    assert (verdict.turn, codes(verdict)) == (index + 1, ["draw_not_from_pool"])
    assert verdict.violations[0].params == {"tiles": [next_tile], "recorded": [other]}


def test_a_turn_out_of_seat_order_is_named() -> None:
    played = FOUR_BOTS.record()
    turn = played.turns[2]
    verdict = record.verify(with_turn(played, 2, seat=(turn.seat + 1) % 4))
    assert (verdict.turn, codes(verdict)) == (3, ["not_your_turn"])


def test_a_pass_while_the_pool_holds_tiles_is_named() -> None:
    played = FOUR_BOTS.record()
    verdict = record.verify(with_turn(played, 0, action=Action.PASS, table=(), placed=(), drawn=()))
    assert (verdict.turn, codes(verdict)) == (1, ["pool_not_empty"])


def test_a_bots_turn_recorded_as_the_players_is_named() -> None:
    played = FOUR_BOTS.record()
    verdict = record.verify(with_turn(played, 0, by=By.PLAYER))
    assert (verdict.turn, codes(verdict)) == (1, ["wrong_actor"])


def test_a_deal_that_is_not_the_tile_set_is_named_at_turn_0() -> None:
    played = FOUR_BOTS.record()
    racks = list(played.deal.racks)
    racks[0] = ("J", *racks[0][1:])
    if played.deal.racks[0][0] == "J":
        racks[0] = ("R1", *racks[0][1:])
    verdict = record.verify(replace(played, deal=replace(played.deal, racks=tuple(racks))))
    assert (verdict.turn, verdict.part, codes(verdict)) == (0, "deal", ["deal_not_tile_set"])


def test_a_game_dealt_from_a_setup_does_not_verify() -> None:
    setup = game.Setup(
        (parse_tiles(["R1", "R2", "R3"]), parse_tiles(["K5", "K6", "K7", "K9"])),
        parse_tiles(["O4", "B9"]),
    )
    created = game.from_setup(
        "m", [game.PlayerSpec("Ann"), game.PlayerSpec("Bo")], rules=Rules(), setup=setup, now=NOW
    )
    events = [game.event_to_dict(event) for event in created.events]
    verdict = record.verify(record.record_of(created.match, events, 1))
    assert verdict.turn == 0
    assert set(codes(verdict)) == {"deal_not_tile_set", "deal_rack_size"}


def test_a_wrong_winner_and_wrong_racks_left_are_named_as_the_result() -> None:
    played = FOUR_BOTS.record()
    assert played.result is not None
    loser = next(s for s in range(4) if s != played.result.winner)
    racks = tuple(() for _ in range(4))
    wrong = replace(played, result=replace(played.result, winner=loser, racks=racks))
    verdict = record.verify(wrong)
    assert (verdict.part, codes(verdict)) == ("result", ["result_wrong", "racks_left_wrong"])


def test_a_finished_game_without_its_result_is_named() -> None:
    verdict = record.verify(replace(FOUR_BOTS.record(), result=None))
    assert (verdict.valid, codes(verdict)) == (False, ["result_missing"])
    assert verdict.result == FOUR_BOTS.record().result


def test_turns_after_the_game_ended_are_named() -> None:
    played = FOUR_BOTS.record()
    extra = replace(played.turns[-1], n=len(played.turns) + 1)
    verdict = record.verify(replace(played, turns=(*played.turns, extra)))
    assert (verdict.turn, codes(verdict)) == (len(played.turns) + 1, ["turn_after_game_end"])


def test_a_record_that_hides_tiles_cannot_be_verified() -> None:
    hidden = record.redacted(replace(FOUR_BOTS.record(), result=None), seat=0, refs=False)
    assert hidden.deal.pool == ("?",) * len(hidden.deal.pool)
    with pytest.raises(RecordIncomplete):
        record.verify(hidden)


def test_a_wrong_first_player_draw_is_named() -> None:
    played = FOUR_BOTS.record()
    assert played.first_player_draw is not None
    wrong = replace(played, first_seat=(played.first_seat + 1) % 4)
    verdict = record.verify(wrong)
    assert verdict.turn == 0 and "first_player_draw_wrong" in codes(verdict)


@pytest.mark.parametrize("tiles", [(), ("J",), ("R5", "K6")])
def test_a_first_player_draw_no_rule_gives_is_named_not_a_crash(tiles: tuple[str, ...]) -> None:
    played = FOUR_BOTS.record()
    assert played.first_player_draw is not None
    rounds = (((0, tiles), *played.first_player_draw.rounds[0][1:]),)
    wrong = replace(played, first_player_draw=replace(played.first_player_draw, rounds=rounds))
    verdict = record.verify(wrong)
    assert verdict.turn == 0 and codes(verdict) == ["first_player_draw_wrong"]


def test_a_timeout_before_its_deadline_is_named() -> None:
    choose, pick = seeded(3)
    played = random_game(
        2, rules=Rules(turn_seconds=60), seed=3, bots=(False, False),
        choose=lambda options: "timeout" if "timeout" in options else choose(options), pick=pick,
    ).record()  # fmt: skip
    index = first(played, Action.TIMEOUT)
    verdict = record.verify(with_turn(played, index, at=played.turns[index].at - 30))
    assert (verdict.turn, codes(verdict)) == (index + 1, ["timeout_before_deadline"])


def test_a_penalty_timeout_draws_the_penalty_from_the_pool() -> None:
    played = random_game(
        2, rules=Rules(turn_seconds=60), seed=5, bots=(False, False),
        choose=lambda options: "penalty", pick=lambda below: 0, steps=3,
    ).record()  # fmt: skip
    assert [turn.action for turn in played.turns] == [Action.TIMEOUT] * 3
    assert all(turn.reverted and len(turn.drawn) == 3 for turn in played.turns)
    assert record.verify(played).valid
    kept = with_turn(played, 1, reverted=False)
    assert (record.verify(kept).turn, codes(record.verify(kept))) == (2, ["draw_not_from_pool"])


def test_a_six_player_xp_game_verifies() -> None:
    played = bots_only(6, rules=Rules(tile_set=TileSet.XP), seed=4)
    assert played.match.status is not Status.PLAYING
    assert record.verify(played.record()).valid


def test_the_position_as_dealt_has_every_rack_as_dealt() -> None:
    played = FOUR_BOTS.record()
    dealt = record.position(played, 0).match
    assert [Counter(p.rack) for p in dealt.players] == [
        Counter(parse_tiles(rack)) for rack in played.deal.racks
    ]
    with pytest.raises(IndexError):
        record.position(played, len(played.turns) + 1)


def test_every_finding_the_verifier_words_has_a_spanish_and_a_swedish_translation() -> None:
    from service import i18n

    played = FOUR_BOTS.record()
    draw = first(played, Action.DRAW)
    assert played.result is not None
    wrong = [
        with_turn(played, 2, seat=(played.turns[2].seat + 1) % 4),
        with_turn(played, 0, by=By.PLAYER),
        with_turn(played, draw, drawn=("O13" if played.turns[draw].drawn != ("O13",) else "O1",)),
        with_turn(played, 0, action=Action.PASS, table=(), placed=(), drawn=()),
        with_turn(played, 0, action=Action.TIMEOUT, by=By.REFEREE, table=(), placed=()),
        with_turn(played, 1, at=played.started_at - 1),
        replace(played, first_seat=(played.first_seat + 1) % 4),
        replace(played, result=None),
        replace(
            played, result=replace(played.result, winner=None, scores=(0, 0, 0, 0), racks=((),) * 4)
        ),
        replace(
            played,
            deal=replace(played.deal, racks=(played.deal.racks[0][1:], *played.deal.racks[1:])),
        ),
    ]
    messages = [
        finding.message for verdict in map(record.verify, wrong) for finding in verdict.violations
    ]
    assert len(messages) >= len(wrong)
    for language in ("es", "sv"):
        assert [m for m in messages if i18n.translate(m, language) is None] == [], language
