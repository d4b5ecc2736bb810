"""A turn: play, draw or pass, in seat order; the draft shared while a player thinks."""

from __future__ import annotations

from collections import Counter

import pytest

from service.game import (
    DeadlinePassed,
    NotYourTurn,
    PassRefused,
    PoolEmpty,
    PoolNotEmpty,
    Status,
    UnknownSeat,
    WrongPhase,
    draw,
    pass_turn,
    play,
    public_view,
    save_draft,
)
from service.rules import IllegalTurn, Rules, Tile
from tests.game.support import NOW, codes, rack, set_up, table, tiles, types

LATER = NOW + 5


def test_play_passes_clockwise_from_seat_to_seat() -> None:
    match = set_up(["R1", "K2", "O3"], pool="B1 B2 B3 B4", first_seat=1)
    order = []
    for _ in range(4):
        order.append(match.current_seat)
        match = draw(match, match.current_seat, now=LATER).match
    assert order == [1, 2, 0, 1]


def test_only_the_player_whose_turn_it_is_may_act() -> None:
    match = set_up(["R10 R11 R12", "K2"], pool="B1")
    with pytest.raises(NotYourTurn, match="it is seat 0's turn"):
        draw(match, 1, now=LATER)
    with pytest.raises(NotYourTurn):
        play(match, 1, table("R10 R11 R12"), now=LATER)
    with pytest.raises(NotYourTurn):
        pass_turn(match, 1, now=LATER)
    with pytest.raises(NotYourTurn):
        save_draft(match, 1, table("R10 R11 R12"), now=LATER)


def test_a_seat_the_match_does_not_have_is_refused() -> None:
    match = set_up(["R1", "K2"], pool="B1")
    with pytest.raises(UnknownSeat, match="seats 0 to 1, not 2"):
        draw(match, 2, now=LATER)


def test_an_initial_meld_worth_30_points_is_played_and_the_turn_passes() -> None:
    match = set_up(["R10 R11 R12 K1", "K2"], pool="B1")
    transition = play(match, 0, table("R10 R11 R12"), now=LATER)
    after = transition.match
    assert after.table == table("R10 R11 R12")
    assert rack(after, 0) == "K1"
    assert after.players[0].melded
    assert after.current_seat == 1 and after.turn_deadline == LATER + 60
    assert after.version == match.version + 1
    assert types(transition) == ["played"]
    assert transition.events[0].data == {
        "table": [["R10", "R11", "R12"]],
        "added": ["R10", "R11", "R12"],
        "went_out": False,
        "next_seat": 1,
        "turn_deadline": LATER + 60,
    }


def test_a_joker_counts_the_number_it_stands_for_in_the_initial_meld() -> None:
    match = set_up(["R11 R13 J K1", "K2"], pool="B1")
    assert play(match, 0, table("R11 J R13"), now=LATER).match.players[0].melded


def test_an_initial_meld_below_30_points_is_refused_and_the_turn_goes_on() -> None:
    match = set_up(["R1 R2 R3 K1", "K2"], pool="B1")
    with pytest.raises(IllegalTurn) as refused:
        play(match, 0, table("R1 R2 R3"), now=LATER)
    assert [v.code for v in refused.value.violations] == ["initial_meld_below_threshold"]
    assert draw(match, 0, now=LATER).match.current_seat == 1


def test_the_initial_meld_threshold_is_a_rule_option() -> None:
    match = set_up(["R1 R2 R3 K1", "K2"], pool="B1", rules=Rules(initial_meld_points=6))
    assert play(match, 0, table("R1 R2 R3"), now=LATER).match.players[0].melded


def test_before_the_initial_meld_the_table_may_not_be_rearranged() -> None:
    match = set_up(["K4 R10 R11 R12", "K2"], pool="B1", on_table="K1 K2 K3", melded=[False, True])
    with pytest.raises(IllegalTurn) as refused:
        play(match, 0, table("K1 K2 K3 K4 | R10 R11 R12"), now=LATER)
    assert [v.code for v in refused.value.violations] == ["table_changed_before_initial_meld"]


def test_after_the_initial_meld_a_player_may_extend_sets_on_the_table() -> None:
    match = set_up(["K4 O9", "K2"], pool="B1", on_table="K1 K2 K3", melded=[True, False])
    after = play(match, 0, table("K1 K2 K3 K4"), now=LATER).match
    assert after.table == table("K1 K2 K3 K4") and rack(after, 0) == "O9"


def test_a_play_must_add_a_tile_from_the_rack() -> None:
    match = set_up(["K4 O9", "K2"], pool="B1", on_table="K1 K2 K3", melded=[True, False])
    with pytest.raises(IllegalTurn) as refused:
        play(match, 0, table("K1 K2 K3"), now=LATER)
    assert [v.code for v in refused.value.violations] == ["no_rack_tile_played"]


def test_a_play_with_tiles_the_player_does_not_hold_is_refused() -> None:
    match = set_up(["K4 O9", "K2"], pool="B1", on_table="K1 K2 K3", melded=[True, False])
    with pytest.raises(IllegalTurn) as refused:
        play(match, 0, table("K1 K2 K3 K4 K5"), now=LATER)
    assert [v.code for v in refused.value.violations] == ["tiles_not_on_rack"]


def test_emptying_the_rack_ends_the_game_and_scores_it() -> None:
    match = set_up(["R10 R11 R12", "K5 J"], pool="B1")
    transition = play(match, 0, table("R10 R11 R12"), now=LATER)
    after = transition.match
    assert types(transition) == ["played", "game_over"]
    assert transition.events[0].data["went_out"] is True
    assert transition.events[0].data["next_seat"] is None
    assert after.status is Status.GAME_OVER and after.turn_deadline is None
    assert after.outcomes[-1].outcome.scores == (35, -35)
    assert [player.score for player in after.players] == [35, -35]
    assert [player.games_won for player in after.players] == [1, 0]
    assert transition.events[1].data == {
        "game_number": 1,
        "reason": "went_out",
        "ending": "went_out",
        "winner": 0,
        "scores": [35, -35],
        "totals": [35, -35],
        "deal": {"racks": [["R10", "R11", "R12"], ["K5", "J"]], "pool": ["B1"]},
    }
    assert after.deals == ()  # the deal is public now, in the log: the state keeps it no more


def test_no_move_is_accepted_once_the_game_is_over() -> None:
    match = set_up(["R10 R11 R12", "K5 J"], pool="B1")
    over = play(match, 0, table("R10 R11 R12"), now=LATER).match
    with pytest.raises(WrongPhase, match="game 1 is over"):
        draw(over, 1, now=LATER)


def test_drawing_takes_the_next_pool_tile_and_ends_the_turn() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9")
    transition = draw(match, 0, now=LATER)
    assert codes(transition.drawn) == "O4"
    assert rack(transition.match, 0) == "R1 O4"
    assert codes(transition.match.pool) == "B9"
    assert transition.match.current_seat == 1


def test_the_draw_event_says_who_drew_and_how_many_but_not_what() -> None:
    transition = draw(set_up(["R1", "K2"], pool="O4 B9"), 0, now=LATER)
    (event,) = transition.events
    assert (event.type, event.seat) == ("drew", 0)
    assert event.data == {"count": 1, "next_seat": 1, "turn_deadline": LATER + 60}


def test_drawing_discards_the_draft() -> None:
    match = set_up(["R10 R11 R12", "K2"], pool="O4")
    drafted = save_draft(match, 0, table("R10 R11 R12"), now=LATER).match
    assert draw(drafted, 0, now=LATER).match.draft is None


def test_drawing_from_an_empty_pool_is_refused() -> None:
    with pytest.raises(PoolEmpty, match="play, or pass"):
        draw(set_up(["R1", "K2"]), 0, now=LATER)


def test_a_pass_is_refused_while_the_pool_holds_tiles() -> None:
    with pytest.raises(PoolNotEmpty, match="draw"):
        pass_turn(set_up(["R1", "K2"], pool="O4"), 0, now=LATER)


def test_a_pass_is_refused_when_the_solver_finds_a_legal_play() -> None:
    match = set_up(["K4 O9", "K2"], on_table="K1 K2 K3", melded=[True, False])
    seen = []

    def can_play(on_table: object, held: Counter[Tile], melded: bool, rules: Rules) -> bool:
        seen.append((on_table, held, melded, rules))
        return True

    with pytest.raises(PassRefused, match="a legal play exists"):
        pass_turn(match, 0, now=LATER, can_play=can_play)
    assert seen == [(table("K1 K2 K3"), Counter(tiles("K4 O9")), True, Rules())]


def test_a_pass_with_an_empty_pool_hands_the_turn_on() -> None:
    match = set_up(["R1", "K2", "O3"])
    transition = pass_turn(match, 0, now=LATER, can_play=lambda *_: False)
    assert transition.match.current_seat == 1 and transition.match.passes_in_a_row == 1
    assert types(transition) == ["passed"]


def test_a_draft_is_shared_with_everyone_and_may_hold_incomplete_sets() -> None:
    match = set_up(["K4 R10 R11", "K2"], pool="O4", on_table="K1 K2 K3", melded=[True, False])
    transition = save_draft(match, 0, table("K1 K2 | K3 K4 | R10 R11"), now=LATER)
    assert types(transition) == ["draft_updated"]
    assert transition.events[0].data == {"draft": [["K1", "K2"], ["K3", "K4"], ["R10", "R11"]]}
    view = public_view(transition.match, now=LATER)
    assert view["draft"] == [["K1", "K2"], ["K3", "K4"], ["R10", "R11"]]
    assert rack(transition.match, 0) == "R10 R11 K4"
    assert transition.match.current_seat == 0


def test_a_draft_can_be_withdrawn() -> None:
    match = set_up(["R10 R11", "K2"], pool="O4")
    drafted = save_draft(match, 0, table("R10 R11"), now=LATER).match
    assert save_draft(drafted, 0, None, now=LATER).match.draft is None


def test_a_draft_must_keep_every_table_tile_and_add_only_rack_tiles() -> None:
    match = set_up(["R10 R11", "K2"], pool="O4", on_table="K1 K2 K3 | B5 O5 J")
    with pytest.raises(IllegalTurn) as refused:
        save_draft(match, 0, table("K1 K2 | B5 O5 | O7 R10"), now=LATER)
    assert [v.code for v in refused.value.violations] == [
        "joker_left_table",
        "table_tiles_missing",
        "tiles_not_on_rack",
    ]


def test_a_move_after_the_deadline_waits_for_the_match_to_be_settled() -> None:
    match = set_up(["R1", "K2"], pool="O4")
    with pytest.raises(DeadlinePassed, match="settle"):
        draw(match, 0, now=NOW + 60)


def test_without_a_time_limit_turns_have_no_deadline() -> None:
    match = set_up(["R1", "K2"], pool="O4", rules=Rules(turn_seconds=0))
    assert match.turn_deadline is None
    assert draw(match, 0, now=NOW + 10**6).match.turn_deadline is None
