"""The bank clock's arithmetic (SPEC section 6), the presets, and the clock's JSON form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.rules import (
    Clock,
    ClockType,
    Delay,
    FreedJoker,
    Preset,
    Rules,
    TileSet,
    TurnEnd,
    clock_from_dict,
    clock_to_dict,
    rules_with,
)
from service.rules.clock import MAX_BANK_SECONDS

BANK = ClockType.BANK


def test_a_fischer_increment_is_added_after_a_turn_the_player_ended() -> None:
    clock = Clock(BANK, bank_seconds=300, increment_seconds=5)
    assert clock.after_turn(300, 20, TurnEnd.PLAYER) == 285
    assert clock.after_turn(300, 20, TurnEnd.TIMEOUT) == 280


def test_a_bronstein_delay_gives_back_the_time_used_up_to_the_delay() -> None:
    clock = Clock(BANK, bank_seconds=600, delay_seconds=10, delay=Delay.BRONSTEIN)
    assert clock.after_turn(600, 4, TurnEnd.PLAYER) == 600
    assert clock.after_turn(600, 25, TurnEnd.PLAYER) == 585
    assert clock.running(600, 4) == 596  # every second goes while the turn runs


def test_a_bronstein_bank_falls_when_the_bank_is_spent_whatever_the_delay() -> None:
    clock = Clock(BANK, bank_seconds=5, delay_seconds=10, delay=Delay.BRONSTEIN)
    assert clock.zero_after(5) == 5


def test_a_simple_delay_holds_the_bank_still_for_the_delay() -> None:
    clock = Clock(BANK, bank_seconds=5, delay_seconds=10, delay=Delay.SIMPLE)
    assert clock.running(5, 8) == 5
    assert clock.running(5, 12) == 3
    assert clock.zero_after(5) == 15
    assert clock.after_turn(5, 12, TurnEnd.PLAYER) == 3


def test_a_flag_fall_leaves_nothing_and_earns_no_increment() -> None:
    clock = Clock(BANK, bank_seconds=60, increment_seconds=5, delay_seconds=3)
    assert clock.after_turn(60, 60, TurnEnd.FLAG) == 0


@pytest.mark.parametrize(
    "fields",
    [
        {"bank_seconds": 0},
        {"bank_seconds": -5},
        {"bank_seconds": MAX_BANK_SECONDS + 1},
        {"increment_seconds": -1},
        {"delay_seconds": 3601},
    ],
)
def test_negative_or_absurd_times_are_refused(fields: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Clock(BANK, **fields)


@given(
    bank=st.integers(1, 10_000),
    delay=st.integers(0, 60),
    increment=st.integers(0, 60),
    kind=st.sampled_from(Delay),
    used=st.floats(0, 20_000, allow_nan=False),
    ended=st.sampled_from([TurnEnd.PLAYER, TurnEnd.TIMEOUT]),
)
def test_a_turn_ended_before_the_flag_leaves_a_bank_between_zero_and_bank_plus_increment(
    bank: int, delay: int, increment: int, kind: Delay, used: float, ended: TurnEnd
) -> None:
    clock = Clock(BANK, bank, increment, delay, kind)
    used = min(used, clock.zero_after(bank))
    after = clock.after_turn(bank, used, ended)
    assert 0 <= after <= bank + (increment if ended is TurnEnd.PLAYER else 0)
    assert 0 <= clock.running(bank, used) <= bank


def test_the_json_form_of_a_clock_round_trips() -> None:
    bank = Clock(BANK, bank_seconds=900, increment_seconds=10, delay_seconds=0)
    assert clock_from_dict(clock_to_dict(bank)) == bank
    assert clock_to_dict(Clock()) == {"type": "turn"}
    assert clock_from_dict({"type": "turn"}) == Clock()


def test_bank_fields_without_a_type_make_a_bank_and_beside_a_turn_clock_are_ignored() -> None:
    assert clock_from_dict({"bank_seconds": 90}) == Clock(BANK, bank_seconds=90)
    assert clock_from_dict({"type": "turn", "bank_seconds": 90}) == Clock()


def test_omitted_bank_fields_default_to_600_seconds_and_no_increment_nor_delay() -> None:
    clock = clock_from_dict({"type": "bank"})
    assert (clock.bank_seconds, clock.increment_seconds, clock.delay_seconds) == (600, 0, 0)
    assert clock_from_dict({"type": "bank", "delay_seconds": 5}).delay is Delay.BRONSTEIN


@pytest.mark.parametrize(
    "data",
    [
        {"type": "bank", "delay": "hourglass"},
        {"type": "sandglass"},
        {"type": "bank", "bank_seconds": 1.5},
        {"type": "bank", "bonus": 3},
    ],
)
def test_a_clock_that_is_no_clock_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        clock_from_dict(data)


def test_the_official_preset_is_the_default_rules() -> None:
    assert rules_with({}) == Rules()
    assert rules_with({"preset": Preset.OFFICIAL}) == Rules()


def test_the_mso_preset_sets_every_rule_of_the_mind_sports_olympiad() -> None:
    rules = rules_with({"preset": Preset.MSO})
    assert rules.preset is Preset.MSO
    assert rules.tile_set is TileSet.STANDARD
    assert (rules.dealt_jokers, rules.joker_penalty, rules.never_melded_penalty) == (1, 50, 100)
    assert rules.redeal_three_doubles
    assert rules.clock == Clock(BANK, bank_seconds=600, delay_seconds=10, delay=Delay.BRONSTEIN)
    assert rules.turn_seconds == 0  # a bank has no per-turn cap unless one is given
    assert rules.initial_meld_points == 30 and rules.freed_joker is FreedJoker.ANY_SET


def test_options_given_beside_a_preset_override_it() -> None:
    rules = rules_with(
        {"preset": Preset.MSO, "joker_penalty": 30, "turn_seconds": 90, "clock": Clock(BANK)}
    )
    assert rules.joker_penalty == 30 and rules.never_melded_penalty == 100
    assert rules.turn_seconds == 90
    assert rules.clock == Clock(BANK)  # a clock given replaces the preset's whole


def test_a_bank_clock_without_turn_seconds_has_no_cap_and_a_turn_clock_keeps_its_60() -> None:
    assert rules_with({"clock": Clock(BANK)}).turn_seconds == 0
    assert rules_with({"clock": Clock()}).turn_seconds == 60
