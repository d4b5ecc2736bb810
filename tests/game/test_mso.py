"""The MSO preset: 2 players, a joker dealt to each, the 3-doubles redeal, its scoring."""

from __future__ import annotations

import random

import pytest

from service.game import (
    InvalidMatch,
    RedealRefused,
    RuleNotInForce,
    WrongPhase,
    draw,
    new_match,
    play,
    redeal,
)
from service.rules import JOKER, Preset, Rules, rules_with, tiles_of
from tests.game.support import NOW, all_tiles, rack, set_up, specs, table, types

MSO = rules_with({"preset": Preset.MSO})


@pytest.mark.parametrize("seed", range(5))
def test_each_player_is_dealt_one_joker_and_thirteen_random_tiles(seed: int) -> None:
    match = new_match("m", specs(2), rules=MSO, rng=random.Random(seed), now=NOW).match
    for player in match.players:
        assert len(player.rack) == 14
        assert player.rack.count(JOKER) == 1
    assert JOKER not in match.pool and len(match.pool) == 106 - 28


def test_the_mso_rules_are_for_exactly_two_players() -> None:
    with pytest.raises(InvalidMatch, match="exactly 2 players"):
        new_match("m", specs(3), rules=MSO, rng=random.Random(1), now=NOW)


THREE_DOUBLES = "R1 R1 B5 B5 K9 K9 O2 O3 O4 O10 O11 R7 B12 J"


def test_a_rack_dealt_three_doubles_may_ask_for_both_racks_to_be_dealt_anew() -> None:
    match = set_up([THREE_DOUBLES, "K1 K2 K3 K4 K5 K6 K7 K8 R2 R3 R4 B1 B2 J"],
                   pool="O5 O6 O7 O8 O9", rules=MSO, first_seat=1)  # fmt: skip
    transition = redeal(match, 0, rng=random.Random(3), now=NOW + 5)
    assert types(transition) == ["redealt"]
    assert transition.events[0].data["doubles"] == ["B5", "K9", "R1"]
    after = transition.match
    assert all_tiles(after) == all_tiles(match)
    assert [player.rack.count(JOKER) for player in after.players] == [1, 1]
    assert (rack(after, 0), rack(after, 1)) != (rack(match, 0), rack(match, 1))
    # the first player and the clocks stay as they were
    assert after.current_seat == 1 and after.turn_started == match.turn_started
    assert after.banks == match.banks and after.turn_deadline == match.turn_deadline


def test_a_redeal_needs_three_doubles_in_the_asking_players_rack() -> None:
    match = set_up([THREE_DOUBLES, "K1 K2 K3 K4 K4 K6 K7 K8 R2 R3 R4 B1 B1 J"],
                   pool="O5", rules=MSO)  # fmt: skip
    with pytest.raises(RedealRefused, match="holds 2"):
        redeal(match, 1, rng=random.Random(3), now=NOW)


def test_a_redeal_comes_before_the_first_move_or_not_at_all() -> None:
    match = set_up([THREE_DOUBLES, "K1 K2"], pool="O5 O6", rules=MSO, first_seat=1)
    moved = draw(match, 1, now=NOW + 1).match
    with pytest.raises(WrongPhase, match="before the first move"):
        redeal(moved, 0, rng=random.Random(3), now=NOW + 2)


def test_the_official_rules_have_no_redeal() -> None:
    match = set_up([THREE_DOUBLES, "K1 K2"], pool="O5")
    with pytest.raises(RuleNotInForce):
        redeal(match, 0, rng=random.Random(3), now=NOW)


def test_a_joker_left_on_a_rack_costs_fifty() -> None:
    match = set_up(["R1 R2 R3", "K2 J"], melded=[True, True], pool="O5", rules=MSO)
    over = play(match, 0, table("R1 R2 R3"), now=NOW + 1).match
    assert over.outcomes[-1].outcome.scores == (52, -52)


def test_a_player_who_never_melded_is_charged_100() -> None:
    match = set_up(["R1 R2 R3", "K2 J"], melded=[True, False], pool="O5", rules=MSO)
    over = play(match, 0, table("R1 R2 R3"), now=NOW + 1).match
    assert over.outcomes[-1].outcome.scores == (100, -100)


def test_a_player_who_never_melded_but_could_have_is_charged_200() -> None:
    match = set_up(["R1 R2 R3", "K10 K11 K12 O2"], melded=[True, False], pool="O5", rules=MSO)
    over = play(match, 0, table("R1 R2 R3"), now=NOW + 1).match
    assert over.outcomes[-1].outcome.scores == (200, -200)


def test_options_beside_the_preset_override_its_scoring() -> None:
    rules = rules_with({"preset": Preset.MSO, "joker_penalty": 30, "never_melded_penalty": 0})
    match = set_up(["R1 R2 R3", "K2 J"], melded=[True, False], pool="O5", rules=rules)
    over = play(match, 0, table("R1 R2 R3"), now=NOW + 1).match
    assert over.outcomes[-1].outcome.scores == (32, -32)
    assert tiles_of(over.table) and Rules().joker_penalty == 30
