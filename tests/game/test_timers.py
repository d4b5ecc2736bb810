"""Time running out: draw 1, or revert the draft and draw 3 (or 1); several expiries in order."""

from __future__ import annotations

import pytest

from service.game import Status, save_draft, settle
from service.rules import Rules, StalemateEnd
from tests.game.support import NOW, codes, rack, set_up, table, types

DEADLINE = NOW + 60


def test_a_turn_that_runs_out_without_a_draft_draws_one_tile() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9")
    transition = settle(match, now=DEADLINE)
    after = transition.match
    assert types(transition) == ["turn_timed_out", "drew"]
    assert transition.events[0].data == {"reverted": False, "penalty": 1}
    assert transition.events[0].at == DEADLINE
    assert rack(after, 0) == "R1 O4"
    assert after.current_seat == 1 and after.turn_deadline == DEADLINE + 60


def test_a_draft_equal_to_the_table_counts_as_no_draft() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9", on_table="R5 K5 O5 | B1 B2 B3")
    drafted = save_draft(match, 0, table("B1 B2 B3 | O5 R5 K5"), now=NOW).match
    transition = settle(drafted, now=DEADLINE)
    assert transition.events[0].data == {"reverted": False, "penalty": 1}
    assert rack(transition.match, 0) == "R1 O4"


def test_a_draft_that_changed_the_table_is_thrown_away_and_costs_three_tiles() -> None:
    match = set_up(
        ["K4 R10 R11", "K2"], pool="O4 B9 O1 O2", on_table="K1 K2 K3", melded=[True, False]
    )
    drafted = save_draft(match, 0, table("K1 K2 K3 K4 | R10 R11"), now=NOW).match
    transition = settle(drafted, now=DEADLINE + 1)
    after = transition.match
    assert types(transition) == ["turn_timed_out", "drew"]
    assert transition.events[0].data == {"reverted": True, "penalty": 3}
    assert transition.events[1].data["count"] == 3
    assert after.table == table("K1 K2 K3") and after.draft is None
    assert rack(after, 0) == "R10 R11 B9 K4 O1 O4"
    assert codes(after.pool) == "O2"


def test_under_the_spanish_rules_a_failed_manipulation_costs_one_tile() -> None:
    # 002: "volver a dejar las lineas como estaban, y tomar una ficha como castigo".
    match = set_up(
        ["K4 R10 R11", "K2"],
        pool="O4 B9 O1 O2",
        on_table="K1 K2 K3",
        melded=[True, False],
        rules=Rules(failed_turn_penalty=1),
    )
    drafted = save_draft(match, 0, table("K1 K2 K3 K4 | R10 R11"), now=NOW).match
    transition = settle(drafted, now=DEADLINE)
    assert transition.events[0].data == {"reverted": True, "penalty": 1}
    assert transition.events[1].data["count"] == 1
    assert transition.match.table == table("K1 K2 K3")
    assert rack(transition.match, 0) == "R10 R11 K4 O4"


def test_a_failed_turn_penalty_other_than_three_or_one_is_no_rule() -> None:
    for penalty in (0, 2, 4, -1):
        with pytest.raises(ValueError, match="failed_turn_penalty"):
            Rules(failed_turn_penalty=penalty)


def test_the_penalty_draws_only_what_is_left_in_the_pool() -> None:
    match = set_up(["R10 R11", "K2"], pool="O4 B9")
    drafted = save_draft(match, 0, table("R10 R11"), now=NOW).match
    transition = settle(drafted, now=DEADLINE)
    assert transition.events[1].data["count"] == 2
    assert rack(transition.match, 0) == "R10 R11 B9 O4" and transition.match.pool == ()


def test_a_turn_that_runs_out_with_an_empty_pool_counts_as_a_pass() -> None:
    transition = settle(set_up(["R1", "K2", "O3"]), now=DEADLINE)
    assert types(transition) == ["turn_timed_out", "passed"]
    assert transition.events[1].data["timed_out"] is True
    assert transition.match.passes_in_a_row == 1 and transition.match.current_seat == 1


def test_several_expired_turns_are_settled_in_order_each_from_the_last_deadline() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9 O1 O2")
    transition = settle(match, now=NOW + 190)
    events = [(event.type, event.seat, event.at) for event in transition.events]
    assert events == [
        ("turn_timed_out", 0, NOW + 60),
        ("drew", 0, NOW + 60),
        ("turn_timed_out", 1, NOW + 120),
        ("drew", 1, NOW + 120),
        ("turn_timed_out", 0, NOW + 180),
        ("drew", 0, NOW + 180),
    ]
    after = transition.match
    assert rack(after, 0) == "R1 O1 O4" and rack(after, 1) == "B9 K2"
    assert after.current_seat == 1
    assert after.turn_started == NOW + 180 and after.turn_deadline == NOW + 240
    assert [event.version for event in transition.events] == list(
        range(match.version + 1, match.version + 7)
    )
    assert after.version == match.version + 6


def test_settling_before_the_deadline_changes_nothing() -> None:
    match = set_up(["R1", "K2"], pool="O4")
    transition = settle(match, now=DEADLINE - 0.001)
    assert transition.match is match and transition.events == ()


def test_a_deadline_reached_exactly_is_settled() -> None:
    assert types(settle(set_up(["R1", "K2"], pool="O4"), now=DEADLINE))[0] == "turn_timed_out"


def test_without_a_time_limit_nothing_ever_expires() -> None:
    match = set_up(["R1", "K2"], pool="O4", rules=Rules(turn_seconds=0))
    assert settle(match, now=NOW + 10**9).events == ()


def test_turns_left_to_run_out_end_the_game_once_the_pool_is_empty() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9 O1")
    transition = settle(match, now=NOW + 10**6)
    after = transition.match
    assert types(transition)[-2:] == ["passed", "game_over"]
    assert after.status is Status.GAME_OVER and after.pool == ()
    assert after.turn_deadline is None
    assert settle(after, now=NOW + 10**7).events == ()


def test_with_the_house_option_one_turn_run_out_on_an_empty_pool_ends_the_game() -> None:
    rules = Rules(stalemate_end=StalemateEnd.FIRST_CANNOT_PLAY)
    transition = settle(set_up(["R1", "K2"], rules=rules), now=NOW + 10**6)
    assert types(transition) == ["turn_timed_out", "passed", "game_over"]
