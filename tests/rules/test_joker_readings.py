"""A joker may name the tile it stands for (``J=R1``): the set is read that way, or refused.

Without a name, today's reading holds: a set that can be read both ways is read the way worth
more (``J J R3`` is a group of 3s), so the run R1 R2 R3 needs its jokers named.
"""

from __future__ import annotations

from collections import Counter

import pytest

from service.rules import (
    JOKER,
    InvalidTileCode,
    SetFault,
    SetKind,
    Tile,
    check_turn,
    classify,
    name_readings,
    parse_tiles,
)


def tiles(codes: str) -> tuple[Tile, ...]:
    return parse_tiles(codes.split())


def read(codes: str):
    return classify(tiles(codes))


def test_a_named_joker_is_still_a_joker_equal_to_any_other() -> None:
    named = Tile.parse("J=R1")
    assert named == JOKER and hash(named) == hash(JOKER) and named.is_joker
    assert (named.code, named.reading, named.plain) == ("J=R1", Tile.parse("R1"), JOKER)
    assert Counter([named, JOKER])[JOKER] == 2


@pytest.mark.parametrize("code", ["J=", "J=J", "J=R0", "J=R14", "J=J=R1", "J=X1", "J=r1"])
def test_a_reading_must_be_a_numbered_tile(code: str) -> None:
    with pytest.raises(InvalidTileCode):
        Tile.parse(code)


@pytest.mark.parametrize(
    ("codes", "kind", "points", "jokers"),
    [
        ("J J R3", SetKind.GROUP, 9, ("B3|K3|O3", "B3|K3|O3")),  # unnamed: worth more
        ("J=R1 J=R2 R3", SetKind.RUN, 6, ("R1", "R2")),
        ("J=R1 J R3", SetKind.RUN, 6, ("R1", "R2")),
        ("J=B3 J R3", SetKind.GROUP, 9, ("B3", "K3|O3")),
        ("R11 J=R12 R13", SetKind.RUN, 36, ("R12",)),
        ("K5 J=O5 R5", SetKind.GROUP, 15, ("O5",)),
    ],
)
def test_a_named_joker_decides_how_its_set_is_read(codes, kind, points, jokers) -> None:
    info = read(codes)
    assert (info.kind, info.points, info.jokers) == (kind, points, jokers)
    assert [tile.code for tile in info.tiles] == codes.split()


@pytest.mark.parametrize(
    ("codes", "fault"),
    [
        ("J=R5 R2 R3", SetFault.RUN_NOT_CONSECUTIVE),  # R5 cannot come before R2
        ("R11 J=R11 R13", SetFault.RUN_NOT_CONSECUTIVE),
        ("J=R3 J=B3 R3", SetFault.GROUP_REPEATS_COLOUR),
        ("J=K4 R5 B5", SetFault.MIXED),
        ("J=R1 J=R2 J=R3", SetFault.JOKERS_ONLY),  # our ruling holds: a set needs a real tile
    ],
)
def test_a_reading_the_set_cannot_have_is_refused(codes, fault) -> None:
    info = read(codes)
    assert info.fault is fault and not info.valid


def test_the_run_r1_r2_r3_can_be_played_with_two_named_jokers() -> None:
    rack = Counter(tiles("J J R3"))
    unnamed = check_turn([], [tiles("J J R3")], rack, melded=True)
    named = check_turn([], [tiles("J=R1 J=R2 R3")], rack, melded=True)
    assert unnamed == [] and named == []
    assert read("J J R3").kind is SetKind.GROUP and read("J=R1 J=R2 R3").kind is SetKind.RUN


def test_a_named_joker_on_the_table_is_the_joker_that_was_there() -> None:
    before = [tiles("R1 R2 R3 J")]
    after = [tiles("R1 R2 R3 J=R4"), tiles("K7 K8 K9")]
    rack = Counter(tiles("K7 K8 K9"))
    assert check_turn(before, after, rack, melded=True) == []


def test_naming_readings_writes_out_each_joker_of_a_run() -> None:
    def named(codes: str) -> list[str]:
        return [tile.code for tile in name_readings(parse_tiles(codes.split()))]

    assert named("R11 J R13") == ["R11", "J=R12", "R13"]
    assert named("J J R3") == ["J", "J", "R3"]  # a group: either colour, left unnamed
    assert named("J=R1 J R3") == ["J=R1", "J=R2", "R3"]
    assert named("R1 K2 J") == ["R1", "K2", "J"]
