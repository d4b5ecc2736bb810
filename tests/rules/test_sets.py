import pytest
from cases import tiles

from service.rules import SetFault, SetKind, classify, set_points


@pytest.mark.parametrize(
    ("text", "kind", "points", "jokers"),
    [
        ("R11 J R13", SetKind.RUN, 36, ("R12",)),
        ("B1 B2 B3 B4", SetKind.RUN, 10, ()),
        ("R6 R7 R8 R9", SetKind.RUN, 30, ()),
        ("K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13", SetKind.RUN, 91, ()),
        ("J O2 O3", SetKind.RUN, 6, ("O1",)),
        ("O11 O12 J", SetKind.RUN, 36, ("O13",)),
        ("J B5 B6 J", SetKind.RUN, 22, ("B4", "B7")),
        ("B1 R1 O1", SetKind.GROUP, 3, ()),
        ("K3 R3 B3 O3", SetKind.GROUP, 12, ()),
        ("R5 B5 J", SetKind.GROUP, 15, ("K5|O5",)),
        ("R5 B5 K5 J", SetKind.GROUP, 20, ("O5",)),
        ("J R13 B13", SetKind.GROUP, 39, ("K13|O13",)),
    ],
)
def test_valid_sets_are_read_with_their_kind_points_and_jokers(
    text: str, kind: SetKind, points: int, jokers: tuple[str, ...]
) -> None:
    info = classify(tiles(text))
    assert (info.valid, info.kind, info.points, info.jokers) == (True, kind, points, jokers)


@pytest.mark.parametrize(
    ("text", "fault", "reason"),
    [
        ("R12 R13 R1", SetFault.RUN_WRAPS_AROUND, "R1 cannot follow R13: 1 is always the lowest"),
        ("R12 R13 J", SetFault.JOKER_OUT_OF_RANGE, "a joker cannot stand for 14"),
        ("J R1 R2", SetFault.JOKER_OUT_OF_RANGE, "a joker cannot stand for 0"),
        ("B1 B2", SetFault.TOO_FEW_TILES, "at least 3 tiles"),
        ("R5 J", SetFault.TOO_FEW_TILES, "at least 3 tiles"),
        ("J J J", SetFault.JOKERS_ONLY, "jokers only"),
        ("B1 B3 B4", SetFault.RUN_NOT_CONSECUTIVE, "consecutive"),
        ("B3 B2 B1", SetFault.RUN_NOT_CONSECUTIVE, "ascending order"),
        ("B1 B2 R3", SetFault.MIXED, "a run (one colour"),
        ("B1 B1 R1", SetFault.GROUP_REPEATS_COLOUR, "cannot hold two B1 tiles"),
        ("R5 B5 K5 O5 J", SetFault.GROUP_TOO_LARGE, "at most 4"),
        ("R5 B5 K5 O5 R5", SetFault.GROUP_REPEATS_COLOUR, "cannot hold two R5"),
        ("R5 R5 J", SetFault.GROUP_REPEATS_COLOUR, "cannot hold two R5"),
    ],
)
def test_invalid_sets_say_why(text: str, fault: SetFault, reason: str) -> None:
    info = classify(tiles(text))
    assert not info.valid
    assert info.kind is None
    assert info.fault is fault
    assert info.reason is not None and reason in info.reason


def test_a_run_of_12_13_1_is_refused_because_1_is_always_lowest() -> None:
    assert classify(tiles("R12 R13 R1")).fault is SetFault.RUN_WRAPS_AROUND


def test_the_position_of_a_joker_in_a_run_fixes_the_number_it_stands_for() -> None:
    assert classify(tiles("J R11 R12")).jokers == ("R10",)
    assert classify(tiles("R11 R12 J")).jokers == ("R13",)


def test_a_group_of_three_with_a_joker_leaves_either_missing_colour_open() -> None:
    assert classify(tiles("R5 B5 J")).jokers == ("K5|O5",)
    assert classify(tiles("B5 J R5")).jokers == ("K5|O5",)


def test_one_numbered_tile_with_jokers_takes_the_reading_worth_more() -> None:
    assert classify(tiles("R5 J J")).kind is SetKind.RUN  # 5+6+7 beats 5+5+5
    assert classify(tiles("J J R5")).kind is SetKind.GROUP  # 3+4+5 loses to 5+5+5
    assert classify(tiles("J R5 J")).kind is SetKind.RUN  # 4+5+6 ties 5+5+5: the run
    assert classify(tiles("J J R13")).points == 39
    assert classify(tiles("R13 J J")).kind is SetKind.GROUP  # no run can follow 13


def test_a_joker_can_be_worth_zero_by_house_rule() -> None:
    assert set_points(tiles("R11 J R13"), joker_worth_zero=True) == 24
    assert set_points(tiles("R11 J R13")) == 36
    assert set_points(tiles("R12 R13 J"), joker_worth_zero=True) == 0
