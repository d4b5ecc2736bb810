"""The bank clock of a match: deadlines, charges, flag fall, giving time (SPEC section 6)."""

from __future__ import annotations

import json

import pytest

from service.game import (
    BadTimeGift,
    RuleNotInForce,
    Status,
    WrongPhase,
    advance_clock,
    draw,
    from_dict,
    give_time,
    play,
    public_view,
    save_draft,
    settle,
    to_dict,
)
from service.rules import Clock, ClockType, Delay, Rules
from tests.game.support import NOW, rack, set_up, table, types

BANK = ClockType.BANK


def bank_rules(**clock: object) -> Rules:
    return Rules(clock=Clock(BANK, **clock), turn_seconds=0)  # type: ignore[arg-type]


def test_a_turn_under_a_bank_ends_when_the_bank_reaches_zero() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9", rules=bank_rules(bank_seconds=90))
    assert match.banks == (90.0, 90.0)
    assert match.turn_deadline == NOW + 90


def test_a_simple_delay_pushes_the_deadline_back_by_the_delay() -> None:
    rules = bank_rules(bank_seconds=90, delay_seconds=10, delay=Delay.SIMPLE)
    assert set_up(["R1", "K2"], pool="O4", rules=rules).turn_deadline == NOW + 100


def test_a_per_turn_cap_beside_a_bank_ends_the_turn_first_and_charges_the_time_used() -> None:
    rules = Rules(clock=Clock(BANK, bank_seconds=300, increment_seconds=5), turn_seconds=60)
    match = set_up(["R1", "K2"], pool="O4 B9", rules=rules)
    assert match.turn_deadline == NOW + 60
    transition = settle(match, now=NOW + 60)
    assert types(transition) == ["turn_timed_out", "drew"]
    drew = transition.events[1].data
    assert drew["used"] == 60 and drew["increment"] == 0  # no increment after a timeout
    assert transition.match.banks == (240.0, 300.0)
    assert transition.match.turn_deadline == NOW + 120  # the next turn's cap comes first


def test_a_turn_the_player_ends_is_charged_net_of_the_delay_and_earns_the_increment() -> None:
    rules = bank_rules(bank_seconds=100, increment_seconds=3, delay_seconds=10)
    match = set_up(["R1", "K2"], pool="O4 B9", rules=rules)
    transition = draw(match, 0, now=NOW + 25)
    assert transition.events[-1].data["used"] == 15  # 25 used, 10 of them given back
    assert transition.events[-1].data["increment"] == 3
    assert transition.events[-1].data["time_left"] == [88.0, 100.0]
    after = transition.match
    assert after.banks == (88.0, 100.0)
    assert after.turn_deadline == NOW + 25 + 100


def test_only_the_seat_to_move_counts_down_in_the_view() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9", rules=bank_rules(bank_seconds=100))
    view = public_view(match, now=NOW + 30)
    assert [p["time_left"] for p in view["players"]] == [70, 100]
    assert [p["clock_running"] for p in view["players"]] == [True, False]
    assert [p["flagged"] for p in view["players"]] == [False, False]


def test_a_per_turn_match_shows_no_bank() -> None:
    view = public_view(set_up(["R1", "K2"], pool="O4"), now=NOW)
    assert "time_left" not in view["players"][0]


def test_when_a_bank_runs_out_the_flag_falls_and_with_two_players_the_other_wins() -> None:
    match = set_up(
        ["R1 R2 K12 J", "K2 O5"], pool="O4 B9", on_table="B1 B2 B3",
        melded=[True, True], rules=bank_rules(bank_seconds=60),
    )  # fmt: skip
    drafted = save_draft(match, 0, table("B1 B2 B3 | R1 R2"), now=NOW + 5).match
    transition = settle(drafted, now=NOW + 60)
    assert types(transition) == ["turn_timed_out", "flag_fell", "game_over"]
    assert transition.events[0].data["flag"] is True
    assert transition.events[0].data["reverted"] is True  # the draft thrown away
    assert transition.events[1].data["count"] == 2  # the penalty drawn (the pool's 2 tiles)
    after = transition.match
    assert after.flagged == (0,) and after.banks[0] == 0
    result = after.outcomes[-1]
    assert result.outcome.reason.value == "flag" and result.ending.value == "flag"
    assert result.outcome.winner == 1
    charged = 1 + 2 + 12 + 30 + 4 + 9
    assert result.outcome.scores == (-charged, charged)


def test_a_flagged_player_is_skipped_and_charged_as_a_loser_at_the_end() -> None:
    match = set_up(
        ["R1 R2", "K2 K3", "O5 O6 O7"], pool="O4 B9 B10 B11",
        melded=[True, True, True], rules=bank_rules(bank_seconds=60),
    )  # fmt: skip
    flagged = settle(match, now=NOW + 60).match
    assert flagged.flagged == (0,) and flagged.current_seat == 1
    assert flagged.status is Status.PLAYING
    drew = draw(flagged, 1, now=NOW + 61).match
    assert drew.current_seat == 2
    went_out = play(drew, 2, table("O5 O6 O7"), now=NOW + 62).match
    assert went_out.outcomes[-1].outcome.scores == (-(1 + 2 + 4), -(2 + 3 + 9), 21)


def test_the_last_player_in_the_game_wins_when_the_others_flags_fall() -> None:
    match = set_up(["R1", "K2", "O5"], pool="O4 B9 B10 B11 B12", rules=bank_rules(bank_seconds=30))
    after = settle(match, now=NOW + 60).match
    assert after.flagged == (0, 1)
    assert after.outcomes[-1].outcome.winner == 2


def test_the_test_mode_clock_moves_banks_as_it_moves_deadlines() -> None:
    match = set_up(["R1", "K2"], pool="O4 B9 B10", rules=bank_rules(bank_seconds=100))
    advanced = advance_clock(match, 130, at=NOW)
    settled = settle(advanced.match, now=NOW + 130)
    assert types(settled)[:2] == ["turn_timed_out", "flag_fell"]
    assert settled.events[0].at == NOW + 100


def test_time_given_to_the_player_to_move_moves_their_deadline() -> None:
    match = set_up(["R1", "K2"], pool="O4", rules=bank_rules(bank_seconds=60))
    transition = give_time(match, 0, 30, by=1, now=NOW + 10)
    assert types(transition) == ["time_given"]
    assert transition.events[0].data["seconds"] == 30
    assert transition.events[0].data["by_seat"] == 1
    assert transition.match.turn_deadline == NOW + 90
    assert public_view(transition.match, now=NOW + 10)["players"][0]["time_left"] == 80


def test_time_given_by_the_owner_to_a_waiting_seat_adds_to_its_bank() -> None:
    match = set_up(["R1", "K2"], pool="O4", rules=bank_rules(bank_seconds=60))
    after = give_time(match, 1, 45, by=None, now=NOW).match
    assert after.banks == (60.0, 105.0) and after.turn_deadline == NOW + 60


def test_a_seat_cannot_give_itself_time() -> None:
    match = set_up(["R1", "K2"], pool="O4", rules=bank_rules())
    with pytest.raises(BadTimeGift):
        give_time(match, 0, 30, by=0, now=NOW)


@pytest.mark.parametrize("seconds", [0, -5, 3601])
def test_time_is_given_in_whole_seconds_from_1_to_3600(seconds: int) -> None:
    match = set_up(["R1", "K2"], pool="O4", rules=bank_rules())
    with pytest.raises(BadTimeGift):
        give_time(match, 1, seconds, by=0, now=NOW)


def test_time_cannot_be_given_in_a_per_turn_match() -> None:
    with pytest.raises(RuleNotInForce):
        give_time(set_up(["R1", "K2"], pool="O4"), 1, 30, by=0, now=NOW)


def test_time_cannot_be_given_to_a_seat_whose_flag_fell() -> None:
    match = set_up(["R1", "K2", "O5"], pool="O4 B9 B10", rules=bank_rules(bank_seconds=60))
    flagged = settle(match, now=NOW + 60).match
    with pytest.raises(WrongPhase):
        give_time(flagged, 0, 30, by=1, now=NOW + 61)


def test_banks_and_flags_round_trip_through_storage() -> None:
    match = set_up(["R1", "K2", "O5"], pool="O4 B9 B10", rules=bank_rules(bank_seconds=60))
    flagged = settle(match, now=NOW + 60).match
    assert from_dict(json.loads(json.dumps(to_dict(flagged)))) == flagged
    assert rack(flagged, 0) == "R1 O4"
