"""Creating a match: players and boxes, the draw for the first player, the deal, test set-ups."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from service.game import (
    HAND_SIZE,
    BadSetup,
    InvalidMatch,
    PlayerSpec,
    Setup,
    Status,
    Transition,
    from_setup,
    new_match,
)
from service.rules import FirstPlayerJoker, Rules, TileSet, full_set
from tests.game.support import NOW, StackedRandom, all_tiles, rack, set_up, specs, types


def create(count: int, rng: random.Random | None = None, **options: Any) -> Transition:
    rules = Rules(**options)
    return new_match("m", specs(count), rules=rules, rng=rng or random.Random(7), now=NOW)


def test_each_player_is_dealt_14_tiles_and_the_rest_of_the_box_is_the_pool() -> None:
    match = create(4).match
    assert [len(player.rack) for player in match.players] == [HAND_SIZE] * 4
    assert len(match.pool) == 106 - 4 * 14
    assert all_tiles(match) == full_set()
    assert match.table == () and match.draft is None


def test_a_new_match_starts_game_1_with_the_first_players_turn_and_a_deadline() -> None:
    transition = create(2)
    match = transition.match
    assert types(transition) == ["match_created", "first_player_draw", "game_started"]
    assert [event.version for event in transition.events] == [1, 2, 3]
    assert match.version == 3
    assert match.status is Status.PLAYING and match.game_number == 1
    assert match.current_seat == match.game_first_seat
    assert match.turn_started == NOW and match.turn_deadline == NOW + 60
    assert transition.events[2].data["dealt"] == [14, 14]


def test_racks_are_sorted_by_colour_then_number_with_jokers_last() -> None:
    match = set_up(["J O1 K13 R2 B5 R1", "K1"])
    assert rack(match, 0) == "R1 R2 B5 K13 O1 J"


def test_the_highest_number_drawn_starts_and_the_draws_are_recorded() -> None:
    transition = create(3, StackedRandom("B7 R12 K3"))
    assert transition.match.current_seat == 1
    draw = transition.events[1]
    assert draw.type == "first_player_draw"
    assert draw.data == {
        "rounds": [
            [
                {"seat": 0, "tiles": ["B7"]},
                {"seat": 1, "tiles": ["R12"]},
                {"seat": 2, "tiles": ["K3"]},
            ]
        ],
        "first_seat": 1,
    }


def test_players_tied_for_the_highest_draw_again_among_themselves() -> None:
    transition = create(4, StackedRandom("R12 K3 B12 O9 O10 K13"))
    assert transition.match.current_seat == 2
    assert transition.events[1].data["rounds"] == [
        [
            {"seat": 0, "tiles": ["R12"]},
            {"seat": 1, "tiles": ["K3"]},
            {"seat": 2, "tiles": ["B12"]},
            {"seat": 3, "tiles": ["O9"]},
        ],
        [{"seat": 0, "tiles": ["O10"]}, {"seat": 2, "tiles": ["K13"]}],
    ]


def test_a_joker_drawn_for_the_first_player_is_followed_by_another_draw() -> None:
    transition = create(2, StackedRandom("J R5 K9"))
    assert transition.match.current_seat == 1
    assert transition.events[1].data["rounds"] == [
        [{"seat": 0, "tiles": ["J", "R5"]}, {"seat": 1, "tiles": ["K9"]}]
    ]


def test_with_the_house_option_a_joker_drawn_for_the_first_player_counts_30() -> None:
    transition = create(2, StackedRandom("J K13"), first_player_joker=FirstPlayerJoker.THIRTY)
    assert transition.match.current_seat == 0
    assert transition.events[1].data["rounds"] == [
        [{"seat": 0, "tiles": ["J"]}, {"seat": 1, "tiles": ["K13"]}]
    ]


def test_the_drawn_tiles_go_back_before_the_deal() -> None:
    match = create(2, StackedRandom("K13 K13 R1")).match
    assert all_tiles(match) == full_set()


def test_two_to_four_players_play_with_the_standard_set() -> None:
    for count in (2, 3, 4):
        assert len(create(count).match.players) == count


@pytest.mark.parametrize("count", [0, 1, 5, 6])
def test_a_standard_set_match_needs_two_to_four_players(count: int) -> None:
    with pytest.raises(InvalidMatch, match="standard set is for 2 to 4 players"):
        create(count)


def test_five_or_six_players_need_the_xp_set() -> None:
    match = create(6, tile_set=TileSet.XP).match
    assert len(match.pool) == 160 - 6 * 14
    assert all_tiles(match) == full_set(TileSet.XP)
    with pytest.raises(InvalidMatch, match="5 or 6 players need the XP set"):
        create(5)


def test_the_xp_set_may_be_used_with_fewer_players() -> None:
    assert len(create(2, tile_set=TileSet.XP).match.pool) == 160 - 28


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rounds": 0}, "at least 1 round"),
        ({"turn_seconds": -1}, "turn_seconds"),
        ({"initial_meld_points": -5}, "initial_meld_points"),
        ({"target_score": 0}, "target_score"),
    ],
)
def test_rules_a_match_cannot_be_played_with_are_refused(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidMatch, match=message):
        create(2, **options)


def test_every_player_needs_a_name() -> None:
    with pytest.raises(InvalidMatch, match="seat 1 needs a name"):
        new_match(
            "m", [PlayerSpec("Ann"), PlayerSpec(" ")], rules=Rules(), rng=random.Random(), now=NOW
        )


def test_without_the_house_option_duplicate_tiles_stay_on_the_rack() -> None:
    match = create(2, StackedRandom("R1 K2", "R1 R1")).match
    assert rack(match, 0).startswith("R1 R1")


def test_with_the_house_option_a_player_dealt_two_identical_tiles_exchanges_one() -> None:
    transition = create(2, StackedRandom("R1 K2", "R1 R1 B3 B3"), redeal_duplicates=True)
    match = transition.match
    for player in match.players:
        counts = Counter(tile for tile in player.rack if not tile.is_joker)
        assert max(counts.values()) == 1
        assert len(player.rack) == HAND_SIZE
    assert all_tiles(match) == full_set()
    returned = transition.events[2].data["returned"]
    assert isinstance(returned, list) and returned[0] >= 2


def test_a_test_setup_starts_from_the_given_racks_pool_table_and_first_seat() -> None:
    transition = from_setup(
        "m",
        specs(2),
        rules=Rules(),
        setup=Setup.parse(
            [["R10", "R11", "R12"], ["K1", "K2"]],
            ["O4", "B9"],
            [["B3", "B4", "J"]],
            [False, True],
            1,
        ),
        now=NOW,
        seed=42,
    )
    match = transition.match
    assert types(transition) == ["match_created", "game_started"]
    assert rack(match, 0) == "R10 R11 R12" and rack(match, 1) == "K1 K2"
    assert [tile.code for tile in match.pool] == ["O4", "B9"]
    assert [[tile.code for tile in tiles] for tiles in match.table] == [["B3", "B4", "J"]]
    assert [player.melded for player in match.players] == [False, True]
    assert match.current_seat == 1 and match.seed == 42
    assert transition.events[1].data["table"] == [["B3", "B4", "J"]]


@pytest.mark.parametrize(
    ("racks", "options", "message"),
    [
        (["R1 R1", "R1 K2"], {}, "more tiles than the standard box holds: 3 × R1"),
        (["J J", "J K2"], {}, "3 × J"),
        (["R1 K2"], {"players": 2}, "1 racks for 2 players"),
        (["R1", ""], {}, "rack of seat 1 is empty"),
        (["R1", "K2"], {"on_table": "R5 R6"}, "table set 1 \\(R5 R6\\)"),
        (["R1", "K2"], {"first_seat": 2}, "first_seat"),
        (["R1", "K2"], {"melded": [True]}, "melded list has 1 entries"),
        (["R1", "K2"], {"pool": "K2 K2"}, "3 × K2"),
    ],
)
def test_a_test_setup_that_the_box_or_the_rules_cannot_produce_is_refused(
    racks: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(BadSetup, match=message):
        set_up(racks, **options)


def test_three_copies_of_a_tile_fit_the_xp_box() -> None:
    match = set_up(["R1 R1", "R1 J J J J"], rules=Rules(tile_set=TileSet.XP))
    assert rack(match, 1) == "R1 J J J J"
