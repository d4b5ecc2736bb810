"""Whole turns, including the manipulation examples of the Spanish rules (002)."""

from cases import rack, table

from service.rules import Rules, check_turn


def codes(violations: list) -> list[str]:
    return [violation.code for violation in violations]


def check(before: str, after: str, hand: str, *, melded: bool = True, **options: object) -> list:
    return check_turn(
        table(before), table(after), rack(hand), melded=melded, rules=Rules(**options)
    )


# Manipulation (002): each is legal after the initial meld.


def test_adding_a_tile_at_one_end_of_a_run_and_taking_the_other_end() -> None:
    assert check("R3 R4 R5", "R4 R5 R6 | R3 B3 K3", "R6 B3 K3") == []


def test_splitting_a_run_by_inserting_a_tile_in_the_middle() -> None:
    assert check("B6 B7 B8 B9 B10", "B6 B7 B8 | B8 B9 B10", "B8") == []


def test_swapping_a_member_of_a_group_of_three_to_use_it_elsewhere() -> None:
    assert check("B6 R6 O6", "K6 R6 O6 | B6 B7 B8", "K6 B7 B8") == []


def test_taking_an_end_tile_from_a_run_of_four() -> None:
    assert check("R6 R7 R8 R9", "R6 R7 R8 | R9 B9 K9", "B9 K9") == []


def test_a_tile_cannot_be_taken_from_the_middle_of_a_run_without_rebuilding_it() -> None:
    assert codes(check("R6 R7 R8 R9", "R6 R8 R9 | R7 B7 K7", "B7 K7")) == ["run_not_consecutive"]


def test_freeing_a_joker_with_the_tile_it_stands_for_and_reusing_it_in_a_new_set() -> None:
    assert check("B3 B4 J", "B3 B4 B5 | R7 O7 J", "B5 R7 O7") == []


def test_a_joker_in_a_group_of_three_is_freed_by_either_missing_colour() -> None:
    for colour in "KO":
        assert check("R5 B5 J", f"R5 B5 {colour}5 | J R9 R10", f"{colour}5 R9 R10") == []


def test_a_freed_joker_cannot_go_to_the_rack() -> None:
    assert codes(check("B3 B4 J", "B3 B4 B5", "B5")) == ["joker_left_table"]


def test_freeing_a_joker_still_requires_a_tile_from_the_rack() -> None:
    # B5 comes from another set on the table: nothing is played from the rack.
    before = "B3 B4 J | B5 B6 B7 B8"
    after = "B3 B4 B5 | B6 B7 B8 J"
    assert codes(check(before, after, "R1")) == ["no_rack_tile_played"]


def test_tiles_that_were_on_the_table_must_stay_on_it() -> None:
    result = check("R3 R4 R5 R6", "R4 R5 R6 | K1 K2 K3", "K1 K2 K3")
    assert codes(result) == ["table_tiles_missing"]
    assert result[0].tiles == ("R3",)


def test_a_played_tile_must_be_on_the_rack() -> None:
    result = check("", "R7 R8 R9", "R7 R8")
    assert codes(result) == ["tiles_not_on_rack"]
    assert result[0].message == "R9 is not on your rack"


def test_a_play_must_add_a_tile_from_the_rack() -> None:
    assert codes(check("R1 R2 R3 | B1 K1 O1", "R1 R2 R3 | B1 K1 O1", "R4")) == [
        "no_rack_tile_played"
    ]


def test_an_invalid_set_is_named_with_its_number_and_tiles() -> None:
    result = check("R7 R8 R9", "R7 R8 R9 | R12 R13 J", "R12 R13 J")
    assert codes(result) == ["joker_out_of_range"]
    assert result[0].message == "set 2 (R12 R13 J): a joker cannot stand for 14: nothing follows 13"
    assert result[0].set_index == 1


def test_every_violation_is_reported_at_once() -> None:
    result = check("R3 R4 R5", "R4 R5 | B9 B9 B9", "B9")
    assert set(codes(result)) == {
        "set_too_short",
        "group_repeats_colour",
        "table_tiles_missing",
        "tiles_not_on_rack",
    }


# The initial meld (000, 003).


def test_an_initial_meld_of_30_from_the_rack_is_accepted() -> None:
    assert check("R1 R2 R3", "R1 R2 R3 | R10 B10 K10", "R10 B10 K10", melded=False) == []


def test_an_initial_meld_with_a_joker_counts_the_joker_as_the_tile_it_stands_for() -> None:
    assert check("", "R11 J R13", "R11 J R13", melded=False) == []


def test_an_initial_meld_below_30_is_refused() -> None:
    result = check("", "R9 B9 K9", "R9 B9 K9", melded=False)
    assert codes(result) == ["initial_meld_below_threshold"]
    assert "worth 27 points" in result[0].message


def test_an_initial_meld_cannot_use_table_tiles() -> None:
    result = check("K10 K11 K12 K13", "K10 K11 K12 | K13 R13 B13", "R13 B13", melded=False)
    assert codes(result) == ["table_changed_before_initial_meld"]


def test_an_initial_meld_cannot_extend_a_table_set() -> None:
    result = check("R4 R5 R6", "R4 R5 R6 R7 R8 R9 R10", "R7 R8 R9 R10", melded=False)
    assert codes(result) == ["table_changed_before_initial_meld"]


def test_before_the_initial_meld_a_joker_cannot_be_retrieved() -> None:
    result = check("B3 B4 J", "B3 B4 B5 | R11 J R13", "B5 R11 R13", melded=False)
    assert codes(result) == ["table_changed_before_initial_meld"]


def test_before_the_initial_meld_a_group_may_be_listed_in_another_order() -> None:
    assert check("R5 B5 K5", "K5 R5 B5 | O11 O12 O13", "O11 O12 O13", melded=False) == []


def test_the_initial_meld_threshold_and_joker_value_are_options() -> None:
    assert check("", "R7 B7 K7", "R7 B7 K7", melded=False, initial_meld_points=20) == []
    assert codes(
        check("", "R11 J R13", "R11 J R13", melded=False, joker_worth_zero_in_meld=True)
    ) == ["initial_meld_below_threshold"]


# The joker-locked option (001).


def test_with_locked_jokers_a_set_with_a_joker_may_be_extended() -> None:
    assert check("R3 R4 J", "R3 R4 J R6", "R6", joker_locked_sets=True) == []


def test_with_locked_jokers_the_joker_may_be_swapped_for_the_real_tile() -> None:
    assert check("R3 R4 J", "R3 R4 R5 | J K9 O9", "R5 K9 O9", joker_locked_sets=True) == []


def test_with_locked_jokers_a_set_with_a_joker_cannot_be_split_or_reduced() -> None:
    before = "R3 R4 J R6 R7 R8"
    assert codes(check(before, "R3 R4 J | R6 R7 R8 R9", "R9", joker_locked_sets=True)) == [
        "joker_locked_set_broken"
    ]
    assert codes(check("R3 R4 R5 J", "R4 R5 J | R3 B3 K3", "B3 K3", joker_locked_sets=True)) == [
        "joker_locked_set_broken"
    ]


def test_with_locked_jokers_the_joker_cannot_move_to_the_other_end() -> None:
    assert codes(check("R3 R4 J", "J R3 R4 | R6 R7 R8", "R6 R7 R8", joker_locked_sets=True)) == [
        "joker_locked_set_broken"
    ]


def test_without_locked_jokers_the_joker_may_move() -> None:
    assert check("R3 R4 J", "J R3 R4 | R6 R7 R8", "R6 R7 R8") == []


def test_with_locked_jokers_a_locked_set_cannot_hide_behind_its_twin() -> None:
    before = "R3 R4 J | R3 R4 J"
    after = "R3 R4 J R6 | R3 R4 R5 | J O9 K9"
    assert codes(check(before, after, "R6 R5 O9 K9", joker_locked_sets=True)) == []
    broken = "R3 R4 J R6 | R3 J | R4 O9 K9"
    assert "joker_locked_set_broken" in codes(
        check(before, broken, "R6 O9 K9", joker_locked_sets=True)
    )
    merged = "R3 R4 J R6 R7 R8 R9 R10 R11 J"
    assert codes(check("R3 R4 J | R9 R10 J", merged, "R6 R7 R8 R11", joker_locked_sets=True)) == []
